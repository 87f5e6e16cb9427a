"""Settings for one server process: host, port, seed, time scale and the rest.

Each field has a ``MOCKSERVER_<NAME>`` environment variable, and ``mockserver serve``
has a flag for each; a flag beats its variable. The simulated world itself (models,
tiers, accounts) is the fixture, in :mod:`mockserver.config.fixture`.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field, fields, replace
from typing import Any

from mockserver.config.fixture import ConfigError

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8000
DEFAULT_TIME_SCALE = 1.0
DEFAULT_SEED = 0
DEFAULT_LOG_LEVEL = "info"
DEFAULT_JOURNAL_SIZE = 1000
ENV_PREFIX = "MOCKSERVER_"


@dataclass(frozen=True)
class Settings:
    """Options for one server process. Each has a ``MOCKSERVER_<NAME>`` environment variable."""

    host: str = DEFAULT_HOST
    port: int = DEFAULT_PORT
    config: str | None = field(default=None, metadata={"help": "fixture YAML file; default: built-in"})
    time_scale: float = DEFAULT_TIME_SCALE
    seed: int = DEFAULT_SEED
    log_level: str = DEFAULT_LOG_LEVEL
    journal_size: int = field(default=DEFAULT_JOURNAL_SIZE, metadata={"help": "requests kept in the journal"})

    @classmethod
    def from_env(cls, environ: dict[str, str] | None = None) -> Settings:
        """Settings from ``MOCKSERVER_*`` variables; unset ones keep their defaults."""
        environ = dict(os.environ if environ is None else environ)
        values: dict[str, Any] = {}
        for f in fields(cls):
            raw = environ.get(ENV_PREFIX + f.name.upper())
            if raw is None or raw == "":
                continue
            values[f.name] = _coerce(f.name, raw, f.type)
        return cls(**values)

    def with_overrides(self, **overrides: Any) -> Settings:
        return replace(self, **{k: v for k, v in overrides.items() if v is not None})

    def __post_init__(self) -> None:
        if self.time_scale < 0:
            raise ConfigError(f"time_scale must be 0 or more, got {self.time_scale}")
        if not 0 <= self.port <= 65535:
            raise ConfigError(f"port must be between 0 and 65535, got {self.port}")
        if self.journal_size < 1:
            raise ConfigError(f"journal_size must be 1 or more, got {self.journal_size}")


def _coerce(name: str, raw: str, annotation: Any) -> Any:
    kind = str(annotation)
    try:
        if "int" in kind:
            return int(raw)
        if "float" in kind:
            return float(raw)
    except ValueError:
        raise ConfigError(f"{ENV_PREFIX}{name.upper()}={raw!r} is not a number") from None
    return raw
