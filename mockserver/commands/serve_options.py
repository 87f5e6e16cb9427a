"""The options of ``mockserver serve`` (and ``--config`` / ``--preset``, which ``config`` shares):
each one a Settings field with its ``MOCKSERVER_*`` variable. :mod:`mockserver.cli` builds its
parser with them and serves with what they give."""

from __future__ import annotations

import argparse
from typing import Any

from mockserver.commands import recording
from mockserver.config.settings import LOG_LEVELS, Settings

GENERATED_TOKEN = "generate"  # --admin-token generate: a random token for this run, printed at start-up

# (flag, type, metavar, help) of each bound; each sets the Settings field of the same name.
LIMIT_FLAGS: list[tuple[str, type, str, str]] = [
    ("--journal-bytes", int, "BYTES", "request bodies kept in the journal, in bytes, oldest dropped first"),
    ("--max-body-bytes", int, "BYTES", "largest request body accepted; a larger one gets a 413"),
    ("--max-json-depth", int, "N", "deepest nesting of a JSON body accepted; a deeper one gets a 400"),
    ("--max-time-scale", float, "X", "largest time_scale accepted at start or by PATCH /_mock/config"),
    ("--max-reply-seconds", float, "S", "wall-clock limit on any one reply; past it a held reply gets a 504"),
    ("--stored-responses", int, "N", "stored responses kept (store: true), oldest evicted first"),
    ("--stored-response-ttl", float, "S", "seconds a stored response is kept before it is evicted"),
    ("--stored-response-bytes", int, "BYTES", "bytes stored responses may take (as JSON), oldest evicted first"),
]
LIMIT_FIELDS = [flag.removeprefix("--").replace("-", "_") for flag, *_ in LIMIT_FLAGS]


def add_serve(commands: Any, defaults: Settings) -> None:
    serve = commands.add_parser(
        "serve",
        help="run the server",
        description=(
            "Run the server. Point the OpenAI SDK at it with "
            "OPENAI_BASE_URL=http://HOST:PORT/v1 and OPENAI_API_KEY=sk-mock-preview."
        ),
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    serve.add_argument("--host", default=defaults.host, help="address to bind [env MOCKSERVER_HOST]")
    serve.add_argument(
        "--port", type=int, default=defaults.port, help="port to bind; 0 picks a free one [env MOCKSERVER_PORT]"
    )
    add_config_option(serve, defaults)
    recording.add_replay_options(serve, defaults)
    serve.add_argument(
        "--time-scale",
        type=float,
        default=defaults.time_scale,
        metavar="X",
        help=(
            "multiply every delay by X: 1 is real speed, 0 answers instantly with the same content "
            "[env MOCKSERVER_TIME_SCALE]"
        ),
    )
    serve.add_argument(
        "--seed",
        type=int,
        default=defaults.seed,
        metavar="N",
        help="global seed for generated text and ids [env MOCKSERVER_SEED]",
    )
    serve.add_argument(
        "--log-level",
        default=defaults.log_level,
        metavar="LEVEL",
        help=f"uvicorn log level, in any case: {', '.join(LOG_LEVELS)} [env MOCKSERVER_LOG_LEVEL]",
    )
    serve.add_argument(
        "--journal-size",
        type=int,
        default=defaults.journal_size,
        metavar="N",
        help="requests kept in the journal at GET /_mock/requests, oldest dropped first [env MOCKSERVER_JOURNAL_SIZE]",
    )
    serve.add_argument(
        "--port-file",
        default=defaults.port_file,
        metavar="PATH",
        help=(
            "write the port served to PATH once listening, so `mockserver health` probes the right one "
            "[env MOCKSERVER_PORT_FILE]"
        ),
    )
    serve.add_argument(
        "--shutdown-grace",
        type=float,
        default=defaults.shutdown_grace,
        metavar="SECONDS",
        help=(
            "on SIGTERM/SIGINT, how long replies in flight get to finish before each is ended with an "
            "error; a second signal stops at once [env MOCKSERVER_SHUTDOWN_GRACE]"
        ),
    )
    scale = serve.add_argument_group("scaling out", "several processes behaving as one server (docs/deployment.md)")
    scale.add_argument(
        "--state",
        default=defaults.state,
        metavar="URL",
        help=(
            "where the shared state lives: 'memory' (this process), or redis://HOST:PORT/DB, which every worker "
            "and replica pointed at it shares [env MOCKSERVER_STATE]"
        ),
    )
    scale.add_argument(
        "--workers",
        type=int,
        default=defaults.workers,
        metavar="N",
        help="worker processes serving the port; more than one needs --state redis://... [env MOCKSERVER_WORKERS]",
    )
    limits = serve.add_argument_group("limits", "bounds on what one client can make the server hold (docs/limits.md)")
    for (flag, kind, metavar, text), name in zip(LIMIT_FLAGS, LIMIT_FIELDS, strict=True):
        limits.add_argument(
            flag,
            type=kind,
            default=getattr(defaults, name),
            metavar=metavar,
            help=f"{text} [env MOCKSERVER_{name.upper()}]",
        )
    control = serve.add_argument_group("control plane", "who may use /_mock/ (SECURITY.md)")
    control.add_argument(
        "--admin-token",
        default=defaults.admin_token,
        metavar="TOKEN",
        help=(
            "token /_mock/ requires (Authorization: Bearer TOKEN or x-mock-admin-token); required when --host "
            "is not a loopback address; 'generate' makes a random one and prints it [env MOCKSERVER_ADMIN_TOKEN]"
        ),
    )
    control.add_argument(
        "--insecure-control-plane",
        action="store_true",
        default=defaults.insecure_control_plane,
        help=(
            "serve /_mock/ without a token on a non-loopback address: anyone who reaches the port can "
            "reconfigure the server [env MOCKSERVER_INSECURE_CONTROL_PLANE]"
        ),
    )
    serve.add_argument(
        "--rate",
        action="append",
        dest="rates",
        metavar="TIER=TOKENS_PER_S[:TTFT_MS]",
        help=(
            "a tier's output rate (and time to first token) on every model that does not set its own; "
            "repeatable, e.g. --rate ultrafast=300:150 --rate default=40 "
            "[env MOCKSERVER_RATES, comma-separated; the flags replace it]"
        ),
    )
    serve.add_argument(
        "--quiet",
        action="store_true",
        default=defaults.quiet,
        help="leave out the start-up summary (URL, fixture, models, keys, tiers) on stderr [env MOCKSERVER_QUIET]",
    )


def add_config_option(parser: argparse.ArgumentParser, defaults: Settings) -> None:
    """``--config`` and ``--preset``: what makes the fixture, for ``serve`` and ``config`` alike."""
    parser.add_argument(
        "--config",
        default=defaults.config,
        metavar="PATH",
        help=(
            "fixture YAML with models, tier profiles and accounts (or `extends: default` and changes); "
            "the built-in default when unset [env MOCKSERVER_CONFIG]"
        ),
    )
    parser.add_argument(
        "--preset",
        action="append",
        dest="presets",
        metavar="NAME",
        help=(
            "merge a timing preset's models into the fixture; repeat to combine "
            "(`mockserver presets` lists them) [env MOCKSERVER_PRESETS, comma-separated]"
        ),
    )
