"""Configuration files into validated models, with one error format (layer ``config``, below ``rules``).

Every YAML/JSON configuration (rule sets, probe batteries, seasons, prompt packs, event
templates, price tables) is read with :func:`load_config`; errors read
``<file>: <field path>: <problem>``.
"""

from mafialab.config._load import (
    ConfigError,
    field_path,
    json_error,
    load_config,
    parse_config_text,
    read_config,
    top_level_message,
    validation_message,
)

__all__ = [
    "ConfigError",
    "field_path",
    "json_error",
    "load_config",
    "parse_config_text",
    "read_config",
    "top_level_message",
    "validation_message",
]
