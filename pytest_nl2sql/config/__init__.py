"""A project's configuration: ``nl2sql.yaml`` (and the suite list in ``evals.yaml`` beside it).

``load_config(path)`` reads the file into frozen attrs values, checking every field. All
problems of a file are reported at once, each as ``path:line: what is wrong (what would be
right)`` with 1-based lines. ``${NAME}`` in any string is replaced by the environment
variable ``NAME``. A database URL's password is never shown: every message and repr goes
through ``redact_url``. The format is described in docs/config.md.

Where things are: ``model`` (the loaded ``Config`` and its parts), ``policy`` (``RolePolicy``:
what a role may read), ``reader`` (the YAML with line numbers, typed values, ``${NAME}``) and
``build`` (``load_config``: every rule of the file); ``engine_project`` reads an nl2sql-engine
project's ``nl2sql.yaml`` (version 2) as it is. Import from here.
"""

from __future__ import annotations

from pytest_nl2sql.config.build import MAX_TIMEOUT_S, load_config
from pytest_nl2sql.config.model import (
    CONFIG_FILENAME,
    DEFAULT_ENGINE,
    ENGINE_NL2SQL,
    EVALS_FILENAME,
    Config,
    ConfigError,
    DatasourceConfig,
    LLMConfig,
    RoutingConfig,
    ScratchConfig,
    find_config,
    redact_url,
)
from pytest_nl2sql.config.policy import RolePolicy

__all__ = [
    "CONFIG_FILENAME",
    "DEFAULT_ENGINE",
    "ENGINE_NL2SQL",
    "EVALS_FILENAME",
    "MAX_TIMEOUT_S",
    "Config",
    "ConfigError",
    "DatasourceConfig",
    "LLMConfig",
    "RolePolicy",
    "RoutingConfig",
    "ScratchConfig",
    "find_config",
    "load_config",
    "redact_url",
]
