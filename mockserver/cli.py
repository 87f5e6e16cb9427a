"""The ``mockserver`` command: ``serve``, ``init`` and ``config``.

``serve``: options -> Settings -> bind the address -> print what is in force -> uvicorn. Every
option has a ``MOCKSERVER_*`` variable. A start-up that cannot complete (a bad option or fixture,
a port in use, a host that does not resolve) prints one line naming the cause and the fix, and
exits with status 2 before anything says the server started.
"""

from __future__ import annotations

import argparse
import functools
import secrets
import signal
import sys
from pathlib import Path
from typing import Any, NoReturn

import yaml

from mockserver.commands import analysis, recording
from mockserver.config import presets
from mockserver.config.fixture import ConfigError, default_fixture_path, load_fixture
from mockserver.config.rates import apply_rates
from mockserver.config.settings import LOG_LEVELS, Settings
from mockserver.version import __version__

USAGE_ERROR = 2  # the exit status of every start-up that did not complete, as argparse uses
DEFAULT_INIT_PATH = "mockserver.yaml"
GENERATED_TOKEN = "generate"  # --admin-token generate: a random token for this run, printed at start-up
TOKEN_BYTES = 24

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


class Parser(argparse.ArgumentParser):
    """argparse with a one-line error, like every other refused start-up, instead of the usage block."""

    def error(self, message: str) -> NoReturn:
        self.exit(USAGE_ERROR, f"{self.prog}: {message} (`{self.prog} --help` lists the options)\n")


def build_parser(defaults: Settings) -> argparse.ArgumentParser:
    parser = Parser(
        prog="mockserver",
        description="An OpenAI-compatible fake inference server for offline tests.",
        epilog=(
            "Start with `mockserver serve`, then point the OpenAI SDK at it: "
            "OPENAI_BASE_URL=http://127.0.0.1:8000/v1 OPENAI_API_KEY=sk-mock-preview. "
            "`mockserver COMMAND --help` tells more."
        ),
    )
    parser.add_argument("--version", action="version", version=f"mockserver {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    add_serve(commands, defaults)
    add_init(commands)
    add_config(commands, defaults)
    add_health(commands)
    recording.add_record(commands)
    recording.add_cassette(commands)
    analysis.add_whatif(commands)
    analysis.add_calibrate(commands)
    commands.add_parser(
        "presets",
        help="list the timing presets with their rates and sources",
        description="List the timing presets: each model and tier, its rate, TTFT and the source of the figures.",
    )
    return parser


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


def add_init(commands: Any) -> None:
    init = commands.add_parser(
        "init",
        help="write the built-in fixture, commented, to a file to start from",
        description=(
            "Write the built-in fixture, with a comment on every field, to PATH; then "
            "`mockserver serve --config PATH` runs on it. To change only a few fields, a fixture "
            "can instead start with `extends: default` and give just those."
        ),
    )
    init.add_argument(
        "path", nargs="?", default=DEFAULT_INIT_PATH, metavar="PATH", help=f"default: {DEFAULT_INIT_PATH}; - for stdout"
    )
    init.add_argument("--force", action="store_true", help="overwrite PATH if it exists")


def add_config(commands: Any, defaults: Settings) -> None:
    config = commands.add_parser(
        "config",
        help="show the fixture in force, every default filled in",
        description=(
            "Print the fixture a server started with the same --config (or MOCKSERVER_CONFIG) would run on, "
            "as YAML with every default filled in and any `extends:` merged. The output is itself a "
            "valid fixture file."
        ),
    )
    config.add_argument("--print", action="store_true", dest="print_fixture", help="print it (the default action)")
    add_config_option(config, defaults)


def add_health(commands: Any) -> None:
    health = commands.add_parser(
        "health",
        help="exit 0 if the local server answers GET /health (a container's HEALTHCHECK)",
        description=(
            "Probe http://127.0.0.1:PORT/health and exit 0 if it answers 200, 1 otherwise. The port is "
            "--port, else the one in MOCKSERVER_PORT_FILE (written by `serve --port-file`), else MOCKSERVER_PORT."
        ),
    )
    health.add_argument("--port", type=int, default=None, help="port to probe")
    health.add_argument("--timeout", type=float, default=2.0, metavar="SECONDS", help="how long to wait for the answer")


def served_port(settings: Settings) -> int:
    """The port ``serve`` listens on: the one it wrote to its port file, else the configured one."""
    if settings.port_file:
        try:
            return int(Path(settings.port_file).read_text().strip())
        except (OSError, ValueError):
            pass
    return settings.port


def main(argv: list[str] | None = None) -> int:
    try:
        defaults = Settings.from_env()
        parser = build_parser(defaults)
        args = parser.parse_args(argv)
        if args.command is None:
            parser.print_help()
            return 0
        if args.command == "init":
            return init(args.path, force=args.force)
        if args.command == "config":
            return print_config(args.config, tuple(args.presets) if args.presets else defaults.presets)
        if args.command == "presets":
            print(list_presets())
            return 0
        if args.command == "record":
            return recording.record(args)
        if args.command == "cassette":
            return recording.cassette(args)
        if args.command in ("whatif", "calibrate"):
            return analysis.whatif(args) if args.command == "whatif" else analysis.calibrate(args)
        if args.command == "health":
            from mockserver.process import probe_health

            return probe_health(args.port or served_port(defaults), args.timeout)
        return serve(args, defaults)
    except ConfigError as exc:
        return fail(str(exc))


def fail(message: str) -> int:
    print(f"mockserver: {message}", file=sys.stderr)
    return USAGE_ERROR


def init(path: str, *, force: bool) -> int:
    text = default_fixture_path().read_text(encoding="utf-8")
    if path == "-":
        sys.stdout.write(text)
        return 0
    target = Path(path)
    if target.exists() and not force:
        return fail(f"{target} already exists; pass --force to overwrite it, or give another PATH")
    try:
        target.write_text(text, encoding="utf-8")
    except OSError as exc:
        return fail(f"cannot write {target}: {exc.strerror or exc}")
    print(f"wrote {target}: the built-in fixture, with a comment on every field", file=sys.stderr)
    print(f"start the server on it with: mockserver serve --config {target}", file=sys.stderr)
    return 0


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


def print_config(config: str | None, preset_names: tuple[str, ...] = ()) -> int:
    from mockserver.operations import configuration

    settings = Settings(config=config)
    document = configuration.document(settings, load_fixture(config, preset_names))
    for name in configuration.RUNTIME_FIELDS:  # settings, not fixture fields: kept out so the output loads back
        document.pop(name)
    source = config if config is not None else f"{default_fixture_path()} (built-in)"
    sys.stdout.write(f"# The fixture in force: {source}, every default filled in.\n")
    sys.stdout.write(yaml.safe_dump(document, sort_keys=False, allow_unicode=True, width=120))
    return 0


def hold_stop_signals() -> list[int]:
    """Note a SIGINT or SIGTERM that comes while the server starts (importing, binding, reaching
    Redis), rather than dying of it with a ``KeyboardInterrupt`` traceback; the start-up then stops
    cleanly (status 0) before it serves. The server takes the signals over once it runs."""
    held: list[int] = []
    for stop_signal in (signal.SIGINT, signal.SIGTERM):
        signal.signal(stop_signal, lambda received, frame: held.append(received))
    return held


def serve(args: argparse.Namespace, defaults: Settings) -> int:
    held = hold_stop_signals()
    import uvicorn

    from mockserver import startup
    from mockserver.app import create_app
    from mockserver.process import GracefulServer, Workers

    settings = defaults.with_overrides(
        host=args.host,
        port=args.port,
        config=args.config,
        time_scale=args.time_scale,
        seed=args.seed,
        log_level=args.log_level,
        journal_size=args.journal_size,
        shutdown_grace=args.shutdown_grace,
        port_file=args.port_file,
        admin_token=args.admin_token,
        insecure_control_plane=args.insecure_control_plane,
        **{
            name: getattr(args, name)
            for name in (flag.removeprefix("--").replace("-", "_") for flag, *_ in LIMIT_FLAGS)
        },
        presets=tuple(args.presets) if args.presets else None,
        rates=tuple(args.rates) if args.rates else None,
        quiet=args.quiet,
        state=args.state,
        workers=args.workers,
        **recording.replay_overrides(args),
    )
    generated = settings.admin_token == GENERATED_TOKEN
    if generated:
        settings = settings.with_overrides(admin_token=secrets.token_urlsafe(TOKEN_BYTES))
    fixture = apply_rates(load_fixture(settings.config, settings.presets), settings.rates)
    fixture = recording.replayed(fixture, settings)
    try:
        sock = startup.listen(settings.host, settings.port)
    except startup.StartupError as exc:
        return fail(str(exc))
    try:
        settings.check_control_plane()  # refuses an unguarded control plane beyond loopback
        state = startup.check_state(settings.state)  # Redis unreachable: one line, status 2
    except (ConfigError, startup.StartupError) as exc:
        sock.close()
        if isinstance(exc, ConfigError):
            raise
        return fail(str(exc))
    port = sock.getsockname()[1]
    options: dict[str, Any] = {"host": settings.host, "port": port, "log_level": settings.log_level}
    server: Workers | GracefulServer
    if settings.workers > 1:
        # Each worker builds its own app from the settings; the summary is printed once, here.
        app_factory = functools.partial(create_app, settings)  # each worker builds its own app
        config = uvicorn.Config(app_factory, factory=True, workers=settings.workers, **options)
        description = f"{state}; served by {settings.workers} worker processes"
        server = Workers(config, [sock], settings.workers)
    else:
        app = create_app(settings, fixture=fixture)
        config = uvicorn.Config(app, **options)
        description = app.state.mock.store.describe()
        server = GracefulServer(config, app.state.mock)
    if not settings.quiet:
        print(startup.banner(settings, fixture, startup.base_url(sock), description), file=sys.stderr)
    if generated:
        print(
            f"mockserver: control plane admin token (generated for this run): {settings.admin_token}", file=sys.stderr
        )
    if held:  # told to stop while starting: stop before serving
        sock.close()
        return 0
    if isinstance(server, Workers):
        return server.run(held)
    server.held = held
    server.run(sockets=[sock])
    return 0


if __name__ == "__main__":
    sys.exit(main())
