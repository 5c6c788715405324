"""Configuration files into validated models, with one error format (layer ``config``, below ``rules``).

Every YAML/JSON configuration (rule sets, probe batteries, seasons, prompt packs, event
templates, price tables) is read with :func:`load_config`; errors read
``<file>: <field path>: <problem>``. The one YAML parser of the package: limits on file size
(10 MB), nodes (100,000) and alias expansions (100) refuse a "billion laughs" document.
"""

# Names below marked ``X as X`` are used by other mafialab packages and are not public API
# (not in __all__, not in docs/api.md); they may change without notice.

from mafialab.config._load import (
    ConfigError,
    load_config,
)
from mafialab.config._load import field_path as field_path
from mafialab.config._load import json_error as json_error
from mafialab.config._load import parse_config_text as parse_config_text
from mafialab.config._load import read_config as read_config
from mafialab.config._load import read_config_text as read_config_text
from mafialab.config._load import top_level_message as top_level_message
from mafialab.config._load import validation_message as validation_message

__all__ = [
    "ConfigError",
    "load_config",
]
