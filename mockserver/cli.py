"""``mockserver serve``: options -> Settings -> uvicorn. Every option has a MOCKSERVER_* variable."""

from __future__ import annotations

import argparse
import sys

import uvicorn

from mockserver.config import presets
from mockserver.config.fixture import ConfigError, load_fixture
from mockserver.config.settings import Settings
from mockserver.version import __version__

LOG_LEVELS = ["critical", "error", "warning", "info", "debug", "trace"]

# (flag, type, metavar, help) of each bound; each sets the Settings field of the same name.
LIMIT_FLAGS: list[tuple[str, type, str, str]] = [
    ("--journal-bytes", int, "BYTES", "request bodies kept in the journal, in bytes, oldest dropped first"),
    ("--max-body-bytes", int, "BYTES", "largest request body accepted; a larger one gets a 413"),
    ("--max-json-depth", int, "N", "deepest nesting of a JSON body accepted; a deeper one gets a 400"),
    ("--max-time-scale", float, "X", "largest time_scale accepted at start or by PATCH /_mock/config"),
    ("--max-reply-seconds", float, "S", "wall-clock limit on any one reply; past it a held reply gets a 504"),
    ("--stored-responses", int, "N", "stored responses kept (store: true), oldest evicted first"),
    ("--stored-response-ttl", float, "S", "seconds a stored response is kept before it is evicted"),
]


def build_parser(defaults: Settings) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="mockserver",
        description="An OpenAI-compatible fake inference server for offline tests.",
    )
    parser.add_argument("--version", action="version", version=f"mockserver {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
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
    serve.add_argument(
        "--config",
        default=defaults.config,
        metavar="PATH",
        help=(
            "fixture YAML with models, tier profiles and accounts; the built-in default when unset "
            "[env MOCKSERVER_CONFIG]"
        ),
    )
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
        choices=LOG_LEVELS,
        help="uvicorn log level [env MOCKSERVER_LOG_LEVEL]",
    )
    serve.add_argument(
        "--journal-size",
        type=int,
        default=defaults.journal_size,
        metavar="N",
        help="requests kept in the journal at GET /_mock/requests, oldest dropped first [env MOCKSERVER_JOURNAL_SIZE]",
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
    limits = serve.add_argument_group("limits", "bounds on what one client can make the server hold (docs/limits.md)")
    for flag, kind, metavar, text in LIMIT_FLAGS:
        name = flag.removeprefix("--").replace("-", "_")
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
            "is not a loopback address [env MOCKSERVER_ADMIN_TOKEN]"
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
        "--preset",
        action="append",
        dest="presets",
        metavar="NAME",
        help=(
            "merge a timing preset's models into the fixture; repeat to combine "
            "(`mockserver presets` lists them) [env MOCKSERVER_PRESETS, comma-separated]"
        ),
    )
    commands.add_parser(
        "presets",
        help="list the timing presets with their rates and sources",
        description="List the timing presets: each model and tier, its rate, TTFT and the source of the figures.",
    )
    return parser


def list_presets() -> str:
    """The text of ``mockserver presets``: one block per preset, one line per model and tier."""
    lines = []
    for name in presets.names():
        lines.append(f"{name}: {presets.title(name)}")
        for row in presets.rows(name):
            lines.append(f"  {row.model} [{row.api} API, {row.how}]: {row.rate}, TTFT {row.ttft_ms} ms")
            lines.append(f"      source: {row.source}")
        lines.append("")
    lines.append("Use one with `mockserver serve --preset NAME` (repeatable) or `presets: [NAME, ...]` in a fixture.")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    try:
        defaults = Settings.from_env()
        args = build_parser(defaults).parse_args(argv)
        if args.command == "presets":
            print(list_presets())
            return 0
        settings = defaults.with_overrides(
            host=args.host,
            port=args.port,
            config=args.config,
            time_scale=args.time_scale,
            seed=args.seed,
            log_level=args.log_level,
            journal_size=args.journal_size,
            shutdown_grace=args.shutdown_grace,
            admin_token=args.admin_token,
            insecure_control_plane=args.insecure_control_plane,
            **{
                flag.removeprefix("--").replace("-", "_"): getattr(args, flag.removeprefix("--").replace("-", "_"))
                for flag, *_ in LIMIT_FLAGS
            },
            presets=tuple(args.presets) if args.presets else None,
        )
        fixture = load_fixture(settings.config, settings.presets)
    except ConfigError as exc:
        print(f"mockserver: {exc}", file=sys.stderr)
        return 2

    from mockserver.app import create_app
    from mockserver.process import GracefulServer

    app = create_app(settings, fixture=fixture)
    config = uvicorn.Config(
        app, host=settings.host, port=settings.port, log_level=settings.log_level, loop="auto", http="auto"
    )
    GracefulServer(config, app.state.mock).run()
    return 0


if __name__ == "__main__":
    sys.exit(main())
