"""What ``mockserver serve`` does before it serves: take the address, and say what is in force.

:func:`listen` binds the listening socket before anything else is printed, so a port in use, a
host that does not resolve or a port that needs privileges ends the start-up with one line that
names the cause and the fix (:class:`StartupError`), not a traceback after "startup complete".
:func:`banner` is the summary printed on standard error once the address is taken: the URL to
use as ``OPENAI_BASE_URL``, the fixture file, the models, the keys and their access (the built-in
keys in full, since they are public fakes; a user's own keys masked), how the announcement's tier
names map to the API's, the tiers and their rates, the time scale and where the shared state lives.

May import: config, state and errors (it needs nothing else, though it sits with the server, below the CLI).
"""

from __future__ import annotations

import asyncio
import errno
import functools
import ipaddress
import socket
from pathlib import Path

from mockserver.config.documents import read_yaml
from mockserver.config.fixture import Fixture, default_fixture_path
from mockserver.config.rates import parse_rates
from mockserver.config.settings import Settings
from mockserver.errors.formats import mask_api_key
from mockserver.state import shared
from mockserver.state.store import MEMORY_STATE

BACKLOG = 2048  # uvicorn's default listen backlog
BANNER_ROWS = 12  # models or keys listed before "... and N more", so a big fixture stays readable
ALL_INTERFACES = ("0.0.0.0", "::", "")
# No route speaks WebSocket, so uvicorn loads no WebSocket implementation (the websockets library
# took some 15 ms of every start to import); an upgrade request is answered as plain HTTP.
NO_WEBSOCKETS = "none"


class StartupError(Exception):
    """The server cannot start. The message is one line: the cause, then the fix."""


def listen(host: str, port: int) -> socket.socket:
    """A bound socket for ``host:port`` (``port`` 0: any free one), ready to hand to uvicorn."""
    where = f"{host}:{port}"
    try:
        family, kind, proto, _, address = socket.getaddrinfo(
            host or None, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
        )[0]
    except (socket.gaierror, UnicodeError):
        raise StartupError(
            f"cannot listen on {where}: the host name {host!r} does not resolve; "
            "pass --host 127.0.0.1 (this machine only) or --host 0.0.0.0 (every interface)"
        ) from None
    sock = socket.socket(family, kind, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn does: restart at once
        sock.bind(address)
        # Listening now, not when uvicorn starts: a client that reads the start-up summary and
        # connects at once waits in the backlog instead of being refused.
        sock.listen(BACKLOG)
    except OSError as exc:
        sock.close()
        raise StartupError(f"cannot listen on {where}: {_why(exc, port)}") from None
    sock.set_inheritable(True)
    return sock


def _why(exc: OSError, port: int) -> str:
    if exc.errno == errno.EADDRINUSE:
        return (
            f"port {port} is already in use by another program; stop it, or pass --port 0 "
            "(any free port) or another --port"
        )
    if exc.errno == errno.EADDRNOTAVAIL:
        return (
            "that address is not one of this machine's; pass --host 127.0.0.1 (this machine only) "
            "or --host 0.0.0.0 (every interface)"
        )
    if exc.errno == errno.EACCES:
        return "ports below 1024 need administrator rights; pass --port 8000, another port of 1024 or more, or --port 0"
    return f"{exc.strerror or exc}; try --host 127.0.0.1 --port 0"


def base_url(sock: socket.socket) -> str:
    """The URL a client on this machine uses: a wildcard address is reached through loopback."""
    host, port = sock.getsockname()[:2]
    if host in ALL_INTERFACES:
        host = "::1" if sock.family == socket.AF_INET6 else "127.0.0.1"
    if ipaddress.ip_address(host).version == 6:
        host = f"[{host}]"
    return f"http://{host}:{port}"


def check_state(url: str) -> str:
    """Make sure the shared store answers before anything says the server started; returns how the
    start-up summary describes it. Redis unreachable is a :class:`StartupError` (one line, status 2)."""
    if not shared.is_shared(url):
        return MEMORY_STATE
    try:
        asyncio.run(_ping(url))
    except shared.StateUnreachable as exc:
        raise StartupError(f"{exc}; start Redis, or leave out --state to keep the state in this process") from None
    return f"Redis at {shared.where(url)}, shared by every worker and replica using it"


async def _ping(url: str) -> None:
    connection = await shared.connect(url)
    await connection.aclose()


# The announcement's names of the tiers and the API's, said once here and in the README.
VOCABULARY = 'standard = default, fast = priority, Ultrafast = ultrafast; Anthropic\'s speed: "fast" = priority'


@functools.cache
def built_in_keys() -> frozenset[str]:
    """The keys of the built-in fixture: public fakes, documented in full, so shown in full."""
    data = read_yaml(default_fixture_path())
    return frozenset(str(a["key"]) for a in data.get("accounts", []) if isinstance(a, dict) and "key" in a)


def banner(settings: Settings, fixture: Fixture, root: str, state: str = MEMORY_STATE) -> str:
    """The start-up summary, one fact per line; a key from the user's own fixture is masked."""
    api = f"{root}/v1"
    source = (
        f"{default_fixture_path()} (built-in)"
        if settings.config is None
        else str(Path(settings.config).expanduser().resolve())
    )
    rates = parse_rates(settings.rates)
    lines = [
        f"mockserver: an OpenAI-compatible API at {api}",
        f"  use it       export OPENAI_BASE_URL={api} OPENAI_API_KEY=<one of the keys below>",
        *_anthropic(fixture, root),
        f"  fixture      {source}",
        *([f"  presets      {', '.join(fixture.presets)}"] if fixture.presets else []),
        *_rows("models", [_model(fixture, m.id) for m in fixture.models]),
        *_rows("keys", [_key(fixture, a.key) for a in fixture.accounts]),
        f"  tier names   {VOCABULARY}",
        *_rows(
            "tiers",
            [
                f"{tier}: {_number(p.tokens_per_second)} tokens/s, first token after {_number(p.ttft_ms)} ms"
                + (f" (--rate {rates[tier]})" if tier in rates else "")
                for tier, p in fixture.profiles.items()
            ],
        ),
        f"  time scale   {_time_scale(settings.time_scale)}",
        f"  state        {state}",
        f"  control      {root}/_mock/config; journal /_mock/requests, ledger /_mock/usage, schema /openapi.json",
        "  (--quiet or MOCKSERVER_QUIET=1 leaves this summary out)",
    ]
    return "\n".join(lines)


def _rows(title: str, rows: list[str]) -> list[str]:
    shown = rows[:BANNER_ROWS]
    if len(rows) > BANNER_ROWS:
        shown.append(f"... and {len(rows) - BANNER_ROWS} more (mockserver config --print lists them all)")
    return [f"  {title if i == 0 else '':<12} {row}" for i, row in enumerate(shown)]


def _anthropic(fixture: Fixture, root: str) -> list[str]:
    """How to reach the Anthropic Messages API, when the fixture has models served on it."""
    if not any(m.api == "anthropic" for m in fixture.models):
        return []
    return [f"  anthropic    export ANTHROPIC_BASE_URL={root} ANTHROPIC_API_KEY=<one of the keys below>"]


def _model(fixture: Fixture, model_id: str) -> str:
    model = fixture.model(model_id)
    assert model is not None
    api = " (Anthropic API)" if model.api == "anthropic" else ""
    if model.forced_tier is not None:
        return f"{model.id}{api}: always {model.forced_tier}; listed only for keys with access to it"
    if model.profiles:  # its own rates (a preset's model): show them
        rates = [
            f"{_tier_name(model.api, tier)} {_number(fixture.profile(model, tier).tokens_per_second)} tokens/s"
            for tier in model.tiers
        ]
        return f"{model.id}{api}: {', '.join(rates)}"
    return f"{model.id}{api}: {', '.join(model.tiers)}"


def _tier_name(api: str, tier: str) -> str:
    """A tier as the model's API asks for it: Anthropic's fast mode is ``speed: "fast"``."""
    return 'priority (speed: "fast")' if api == "anthropic" and tier == "priority" else tier


def _key(fixture: Fixture, key: str) -> str:
    account = fixture.account(key)
    assert account is not None
    masked = account.key if account.key in built_in_keys() else mask_api_key(account.key)
    if account.status != "active":
        return f"{masked}  {account.status}: every request gets 401"
    facts = [", ".join(account.tiers)]
    if account.has_preview:
        facts[0] += " (Ultrafast preview access)"
    if account.models is not None:
        facts.append(f"models {', '.join(account.models)} only")
    organization = fixture.organization(account.organization)
    if organization.region_blocked:
        facts.append("region blocked: every request gets 403")
    if organization.quota.spend_usd is not None or organization.quota.tokens is not None:
        facts.append("limited quota")
    if account.rate_limits is not None and (account.rate_limits.rpm or account.rate_limits.tpm):
        facts.append(f"{account.rate_limits.rpm or '-'} requests / {account.rate_limits.tpm or '-'} tokens per minute")
    return f"{masked}  " + "; ".join(facts)


def _time_scale(scale: float) -> str:
    if scale == 0:
        return "0: every reply at once, same content as at real speed"
    if scale == 1:
        return "1: real speed"
    return f"{_number(scale)}: every delay multiplied by {_number(scale)}"


def _number(value: float) -> str:
    return f"{value:g}"
