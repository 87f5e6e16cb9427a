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

from mockserver.api.asgi.collector import kept_for_good
from mockserver.commands import analysis, conformance, recording
from mockserver.commands.serve_options import GENERATED_TOKEN, LIMIT_FLAGS, add_config_option, add_serve
from mockserver.config import presets
from mockserver.config.fixture import ConfigError, default_fixture_path, load_fixture
from mockserver.config.rates import apply_rates
from mockserver.config.settings import Settings
from mockserver.server import health
from mockserver.version import __version__

USAGE_ERROR = 2  # the exit status of every start-up that did not complete, as argparse uses
DEFAULT_INIT_PATH = "mockserver.yaml"
TOKEN_BYTES = 24


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
    conformance.add_conformance(commands)
    commands.add_parser(
        "presets",
        help="list the timing presets with their rates and sources",
        description="List the timing presets: each model and tier, its rate, TTFT and the source of the figures.",
    )
    return parser


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
    parser = commands.add_parser(
        "health",
        help="exit 0 if the local server is ready, GET /ready (a container's HEALTHCHECK)",
        description=health.DESCRIPTION,
    )
    health.add_arguments(parser)


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
        if args.command == "conformance":
            return conformance.conformance(args)
        if args.command == "health":
            return health.probe_health(
                health.port_to_probe(args.port), args.timeout, health.LIVE_PATH if args.live else health.READY_PATH
            )
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


def serve_settings(args: argparse.Namespace, defaults: Settings) -> Settings:
    """The settings ``serve`` runs with: the defaults (environment variables) overridden by the command line."""
    return defaults.with_overrides(
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


def serve(args: argparse.Namespace, defaults: Settings) -> int:
    held = hold_stop_signals()
    # The modules, classes and schemas imported here live as long as the process: frozen once imported,
    # the collector never walks them again (70-80 ms of the start before).
    with kept_for_good():
        import uvicorn

        from mockserver.server import startup
        from mockserver.server.app import create_app
        from mockserver.server.process import GracefulServer, Workers

    settings = serve_settings(args, defaults)
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
    options: dict[str, Any] = {
        "host": settings.host,
        "port": port,
        "log_level": settings.log_level,
        "ws": startup.NO_WEBSOCKETS,
    }
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
