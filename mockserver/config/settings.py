"""Settings for one server process: host, port, seed, time scale and the rest.

Each field has a ``MOCKSERVER_<NAME>`` environment variable, and ``mockserver serve``
has a flag for each; a flag beats its variable. The simulated world itself (models,
tiers, accounts) is the fixture, in :mod:`mockserver.config.fixture`.
"""

from __future__ import annotations

import ipaddress
import os
from dataclasses import dataclass, field, fields, replace
from typing import Any
from urllib.parse import urlsplit

from mockserver.config.environment import DEFAULT_PORT as DEFAULT_PORT
from mockserver.config.environment import ENV_PREFIX as ENV_PREFIX
from mockserver.config.fixture import ConfigError
from mockserver.config.rates import parse_rates

DEFAULT_HOST = "127.0.0.1"
DEFAULT_TIME_SCALE = 1.0
DEFAULT_SEED = 0
DEFAULT_LOG_LEVEL = "info"
DEFAULT_JOURNAL_SIZE = 1000
DEFAULT_SHUTDOWN_GRACE = 5.0  # seconds in-flight replies get to finish on SIGTERM; docker stop waits 10
STATE_SCHEMES = ("redis", "rediss", "unix")
DEFAULT_STATE = "memory"  # state kept in this process; redis://... shares it between processes
LOG_LEVELS = ("critical", "error", "warning", "info", "debug", "trace")  # uvicorn's, least verbose first

# Bounds on what one client can make the server hold or spend (see docs/limits.md).
MAX_TIME_SCALE = 1000.0  # the largest time_scale accepted anywhere; with it a 1-second reply takes ~17 minutes
DEFAULT_MAX_TIME_SCALE = 100.0
DEFAULT_MAX_REPLY_SECONDS = 600.0  # the SDKs' own default timeout: nobody waits longer for one reply
DEFAULT_MAX_BODY_BYTES = 32 * 1024 * 1024
DEFAULT_MAX_JSON_DEPTH = 64
# orjson serializes at most 254 levels and Python recurses about 1,000 deep: stay well inside both.
MAX_JSON_DEPTH = 128
DEFAULT_JOURNAL_BYTES = 64 * 1024 * 1024
DEFAULT_STORED_RESPONSES = 10_000
DEFAULT_STORED_RESPONSE_TTL_S = 3600.0
DEFAULT_STORED_RESPONSE_BYTES = 256 * 1024 * 1024  # what stored responses may take, as stored (JSON)


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
    journal_bytes: int = field(
        default=DEFAULT_JOURNAL_BYTES, metadata={"help": "request and reply bytes kept in the journal"}
    )
    max_body_bytes: int = field(default=DEFAULT_MAX_BODY_BYTES, metadata={"help": "largest request body accepted"})
    max_json_depth: int = field(default=DEFAULT_MAX_JSON_DEPTH, metadata={"help": "deepest JSON nesting accepted"})
    max_time_scale: float = field(default=DEFAULT_MAX_TIME_SCALE, metadata={"help": "largest time_scale accepted"})
    max_reply_seconds: float = field(
        default=DEFAULT_MAX_REPLY_SECONDS, metadata={"help": "wall-clock limit on any one reply"}
    )
    stored_responses: int = field(
        default=DEFAULT_STORED_RESPONSES, metadata={"help": "stored responses kept, oldest evicted first"}
    )
    stored_response_ttl: float = field(
        default=DEFAULT_STORED_RESPONSE_TTL_S, metadata={"help": "seconds a stored response is kept"}
    )
    stored_response_bytes: int = field(
        default=DEFAULT_STORED_RESPONSE_BYTES, metadata={"help": "bytes stored responses may take, oldest evicted"}
    )
    port_file: str | None = field(
        default=None, metadata={"help": "file the served port is written to, for `mockserver health`"}
    )
    shutdown_grace: float = field(
        default=DEFAULT_SHUTDOWN_GRACE, metadata={"help": "seconds in-flight replies get to finish when stopping"}
    )
    admin_token: str | None = field(default=None, metadata={"help": "token the control plane requires"})
    insecure_control_plane: bool = field(
        default=False, metadata={"help": "serve /_mock/ without a token on a non-loopback address"}
    )
    presets: tuple[str, ...] = field(
        default=(), metadata={"help": "timing presets merged into the fixture; the variable is comma-separated"}
    )
    rates: tuple[str, ...] = field(
        default=(),
        metadata={"help": "TIER=TOKENS_PER_S[:TTFT_MS] per tier, on every model without its own; comma-separated"},
    )
    quiet: bool = field(default=False, metadata={"help": "leave out the start-up summary"})
    state: str = field(
        default=DEFAULT_STATE, metadata={"help": "where shared state is kept: memory, or redis://host:port/db"}
    )
    workers: int = field(default=1, metadata={"help": "worker processes; more than one needs a shared --state"})
    replay: tuple[str, ...] = field(
        default=(), metadata={"help": "cassettes replayed, added to the fixture's replay:; comma-separated"}
    )
    replay_timing: str | None = field(default=None, metadata={"help": "recorded, tier or instant"})
    replay_miss: str | None = field(default=None, metadata={"help": "error, generate or record"})
    upstream: str | None = field(default=None, metadata={"help": "the API a replay miss is recorded from"})

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

    def check_control_plane(self) -> None:
        """Refuse to serve ``/_mock/`` without a token on an address other machines can reach.

        Checked when the app is built (not per field), so a flag can supply what a variable lacks."""
        if not (self.admin_token or self.insecure_control_plane or is_loopback(self.host)):
            raise ConfigError(
                f"listening on {self.host}, beyond this machine, needs an admin token for the control plane "
                "(/_mock/ can reconfigure and reset the server): pass --admin-token TOKEN (or set "
                "MOCKSERVER_ADMIN_TOKEN), or --insecure-control-plane to leave it open to anyone who can reach "
                "the port (see SECURITY.md)"
            )

    def with_overrides(self, **overrides: Any) -> Settings:
        return replace(self, **{k: v for k, v in overrides.items() if v is not None})

    def __post_init__(self) -> None:
        object.__setattr__(self, "presets", tuple(self.presets))  # a list from MockServer(presets=[...])
        replay = (self.replay,) if isinstance(self.replay, str) else tuple(self.replay)
        object.__setattr__(self, "replay", replay)  # MockServer(replay="session.jsonl") or a list
        object.__setattr__(self, "rates", tuple(self.rates))
        parse_rates(self.rates)  # a bad one is a ConfigError: one line, exit status 2
        if self.time_scale < 0:
            raise ConfigError(f"time_scale must be 0 or more, got {self.time_scale}")
        if not 0 <= self.port <= 65535:
            raise ConfigError(f"port must be between 0 and 65535, got {self.port}")
        if self.shutdown_grace < 0:
            raise ConfigError(f"shutdown_grace must be 0 or more, got {self.shutdown_grace}")
        if self.state != DEFAULT_STATE and urlsplit(self.state).scheme not in STATE_SCHEMES:
            raise ConfigError(
                f"--state must be 'memory' or a Redis URL (redis://HOST:PORT/DB, rediss://..., unix://...), "
                f"got {urlsplit(self.state).scheme or self.state!r}"
            )
        if self.workers < 1:
            raise ConfigError(f"workers must be 1 or more, got {self.workers}")
        if self.workers > 1 and self.state == DEFAULT_STATE:
            raise ConfigError(
                f"--workers {self.workers} needs a shared store, --state redis://HOST:PORT/DB (or MOCKSERVER_STATE): "
                "each worker is a process of its own, and with state in memory they would be separate servers "
                "(separate capacity caps, rate windows, ledgers and journals)"
            )
        if self.journal_size < 1:
            raise ConfigError(f"journal_size must be 1 or more, got {self.journal_size}")
        if not 0 < self.max_time_scale <= MAX_TIME_SCALE:
            raise ConfigError(
                f"max_time_scale must be above 0 and at most {MAX_TIME_SCALE:g}, got {self.max_time_scale}"
            )
        if self.time_scale > self.max_time_scale:
            raise ConfigError(
                f"time_scale must be at most max_time_scale ({self.max_time_scale:g}), got {self.time_scale}"
            )
        if not 1 <= self.max_json_depth <= MAX_JSON_DEPTH:
            raise ConfigError(f"max_json_depth must be between 1 and {MAX_JSON_DEPTH}, got {self.max_json_depth}")
        for name in ("journal_bytes", "max_body_bytes", "stored_responses", "stored_response_bytes"):
            if getattr(self, name) < 1:
                raise ConfigError(f"{name} must be 1 or more, got {getattr(self, name)}")
        for name in ("max_reply_seconds", "stored_response_ttl"):
            if not getattr(self, name) > 0:
                raise ConfigError(f"{name} must be above 0, got {getattr(self, name)}")
        level = str(self.log_level).strip().lower()
        if level not in LOG_LEVELS:
            raise ConfigError(
                f"log level {self.log_level!r} is not one of {', '.join(LOG_LEVELS)} "
                "(--log-level or MOCKSERVER_LOG_LEVEL, in any case)"
            )
        object.__setattr__(self, "log_level", level)  # frozen: normalise once, here


def is_loopback(host: str) -> bool:
    """Whether ``host`` is reachable only from this machine (127.0.0.0/8, ::1, localhost)."""
    if host.strip("[]").lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False  # any other name may resolve to a public address


def _coerce(name: str, raw: str, annotation: Any) -> Any:
    kind = str(annotation)
    if "bool" in kind:
        if raw.strip().lower() in ("1", "true", "yes", "on"):
            return True
        if raw.strip().lower() in ("0", "false", "no", "off"):
            return False
        raise ConfigError(f"{ENV_PREFIX}{name.upper()}={raw!r} is not true or false")
    if "tuple" in kind:
        return tuple(part.strip() for part in raw.split(",") if part.strip())
    try:
        if "int" in kind:
            return int(raw)
        if "float" in kind:
            return float(raw)
    except ValueError:
        raise ConfigError(f"{ENV_PREFIX}{name.upper()}={raw!r} is not a number") from None
    return raw
