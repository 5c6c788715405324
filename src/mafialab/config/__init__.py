"""Configuration files into validated models, with one error format (layer ``config``, below ``rules``).

Every YAML/JSON configuration (rule sets, probe batteries, seasons, prompt packs, event
templates, price tables) is read with :func:`load_config`; errors read
``<file>: <field path>: <problem>``. The one YAML parser of the package: limits on file size
(10 MB), nodes (100,000) and alias expansions (100) refuse a "billion laughs" document.
"""

from mafialab.config._load import (
    ConfigError,
    field_path,
    json_error,
    load_config,
    parse_config_text,
    read_config,
    read_config_text,
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
    "read_config_text",
    "top_level_message",
    "validation_message",
]
