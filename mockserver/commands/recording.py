"""``mockserver record`` and ``mockserver cassette show|check``."""

from __future__ import annotations

import argparse
import os
import sys
import warnings
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mockserver.cassettes.limits import DEFAULT_MAX_CASSETTE_BYTES
from mockserver.config.fixture import Fixture, load_fixture
from mockserver.config.patterns import PatternError
from mockserver.config.settings import Settings
from mockserver.harness.replay import options as replay_options
from mockserver.harness.replay.options import REPLAY_MISSES, REPLAY_TIMINGS
from mockserver.server import startup

if TYPE_CHECKING:
    from mockserver.cassettes import files

# The cassettes, the recording proxy and its HTTP client load in the commands that use them, not with the
# command line: `serve` without --replay needs none of them.

USAGE_ERROR = 2


def env(name: str, default: Any = None) -> Any:
    return os.environ.get(f"MOCKSERVER_{name}") or default


def add_record(commands: Any) -> None:
    record = commands.add_parser(
        "record",
        help="a proxy to the real API that records every exchange into a cassette",
        description=(
            "Forward every request to --upstream with the client's own credentials, stream the reply back as it "
            "arrives, and append each exchange to --cassette (JSON Lines; credentials are never written). Point "
            "the SDK at it as at the real API: OPENAI_BASE_URL=http://HOST:PORT/v1 with your real key."
        ),
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    record.add_argument(
        "--upstream",
        default=env("UPSTREAM"),
        metavar="URL",
        help="the API to record, e.g. https://api.openai.com [env MOCKSERVER_UPSTREAM]",
    )
    record.add_argument(
        "--cassette",
        default=env("CASSETTE"),
        metavar="PATH",
        help="the cassette to append to; created if missing [env MOCKSERVER_CASSETTE]",
    )
    record.add_argument("--host", default=env("HOST", "127.0.0.1"), help="address to bind [env MOCKSERVER_HOST]")
    record.add_argument(
        "--port",
        type=int,
        default=int(env("PORT", 8000)),
        help="port to bind; 0 picks a free one [env MOCKSERVER_PORT]",
    )
    record.add_argument(
        "--config",
        default=env("CONFIG"),
        metavar="PATH",
        help="a fixture whose redact: patterns are applied [env MOCKSERVER_CONFIG]",
    )
    record.add_argument(
        "--redact",
        action="append",
        default=[],
        metavar="REGEX",
        help="also replace what REGEX matches in every recorded string; repeatable",
    )
    record.add_argument(
        "--record-errors",
        action="store_true",
        default=bool(env("RECORD_ERRORS")),
        help="also record exchanges that failed (status 400 and up) [env MOCKSERVER_RECORD_ERRORS]",
    )
    record.add_argument(
        "--max-cassette-bytes",
        type=int,
        default=int(env("MAX_CASSETTE_BYTES", DEFAULT_MAX_CASSETTE_BYTES)),
        metavar="BYTES",
        help="stop recording (and say so) once the cassette would pass this size [env MOCKSERVER_MAX_CASSETTE_BYTES]",
    )
    record.add_argument(
        "--port-file",
        default=env("PORT_FILE"),
        metavar="PATH",
        help="write the port served to PATH once listening [env MOCKSERVER_PORT_FILE]",
    )
    record.add_argument("--log-level", default=env("LOG_LEVEL", "warning"), metavar="LEVEL", help="uvicorn log level")


def add_replay_options(serve: argparse.ArgumentParser, defaults: Settings) -> None:
    """``serve``'s replay options (docs/recording.md)."""
    group = serve.add_argument_group("replay", "answer from recorded cassettes (docs/recording.md)")
    group.add_argument(
        "--replay",
        action="append",
        default=None,
        metavar="PATH",
        help="a cassette whose recordings answer the requests that match them: a native or VCR file, a folder "
        "or a glob; repeatable [env MOCKSERVER_REPLAY, comma-separated]",
    )
    group.add_argument(
        "--replay-timing",
        choices=REPLAY_TIMINGS,
        default=defaults.replay_timing,
        help="recorded: the recorded TTFT and event offsets; tier: re-paced at the tier asked for; "
        "instant (default: recorded; tier with a VCR cassette, which holds no timing) [env MOCKSERVER_REPLAY_TIMING]",
    )
    group.add_argument(
        "--replay-miss",
        choices=REPLAY_MISSES,
        default=defaults.replay_miss,
        help="a request with no recording: error (a 400 naming the nearest), generate, or record "
        "(needs --upstream) (default: error) [env MOCKSERVER_REPLAY_MISS]",
    )
    group.add_argument(
        "--upstream",
        default=defaults.upstream,
        metavar="URL",
        help="with --replay-miss record: the API to forward misses to [env MOCKSERVER_UPSTREAM]",
    )


def replay_overrides(args: argparse.Namespace) -> dict[str, Any]:
    return {
        "replay": tuple(args.replay) if args.replay else None,
        "replay_timing": args.replay_timing,
        "replay_miss": args.replay_miss,
        "upstream": args.upstream,
    }


def replayed(fixture: Fixture, settings: Settings) -> Fixture:
    """The fixture with the replay options in force; a cassette that does not load stops start-up here.
    The VCR interactions that are not served are listed, each with the reason."""
    fixture = replay_options.fixture_with(fixture, settings)
    if fixture.replay and not settings.quiet:
        from mockserver.harness.replay import library

        found = library.library_for(fixture)
        for skip in found.skipped:
            print(f"mockserver: replay: skipped {skip.source}: {skip.reason}", file=sys.stderr)
        vcr_note = f", {len(found.untimed)} of them VCR (no timing recorded)" if found.untimed else ""
        print(
            f"mockserver: replay: {len(found)} recordings from {len(found.sources)} cassettes{vcr_note}, "
            f"{len(found.skipped)} interactions skipped; timing {fixture.replay_timing}",
            file=sys.stderr,
        )
    return fixture


def add_cassette(commands: Any) -> None:
    cassette = commands.add_parser(
        "cassette",
        help="show, check or import a cassette",
        description="Show or check a recorded cassette (native or VCR), or import VCR cassettes.",
    )
    actions = cassette.add_subparsers(dest="cassette_command", metavar="ACTION", required=True)
    show = actions.add_parser(
        "show",
        help="a table with a row per exchange",
        description="Print path, model, tier, streamed, status, tokens, TTFT and duration of every exchange.",
    )
    show.add_argument("path", metavar="PATH", help="a cassette: native (.jsonl) or VCR (.yaml, .json)")
    check = actions.add_parser(
        "check",
        help="validate the file; exit 2 with file:line and why on a bad record",
        description=(
            "Validate every record; on a bad one print file:line and why, exit 2. A VCR cassette is checked "
            "as replay reads it: its interactions that are not served are listed with the reason."
        ),
    )
    check.add_argument("path", metavar="PATH", help="a cassette: native (.jsonl) or VCR (.yaml, .json)")
    imported = actions.add_parser(
        "import",
        help="write VCR cassettes as one native cassette",
        description=(
            "Read VCR cassettes (vcrpy, pytest-recording and project serializers; files, folders or globs) and "
            "write their inference interactions to one native cassette, credentials scrubbed. The rest are "
            "listed with the reason. A VCR cassette holds no timing: replay the result with --replay-timing "
            "tier or instant."
        ),
    )
    imported.add_argument("paths", nargs="+", metavar="VCR", help="a VCR cassette, a folder of them, or a glob")
    imported.add_argument("--out", required=True, metavar="FILE", help="the native cassette to write (replaced)")


def record(args: argparse.Namespace) -> int:
    import uvicorn

    # Here, not at the top: the recording proxy brings an HTTP client, which `serve` never needs.
    from mockserver.cassettes import files
    from mockserver.cassettes.redaction import Redactor
    from mockserver.recording.proxy import Recorder, create_proxy_app
    from mockserver.recording.upstream import Upstream

    if not args.upstream or not args.cassette:
        return _fail("record needs --upstream URL and --cassette PATH (or MOCKSERVER_UPSTREAM, MOCKSERVER_CASSETTE)")
    patterns = list(args.redact)
    if args.config:
        patterns = [*load_fixture(args.config).redact, *patterns]
    try:
        redactor = Redactor(patterns)
    except PatternError as exc:
        return _fail(f"redact: {exc}")
    if os.path.exists(args.cassette):
        try:
            _load(args.cassette)  # a torn last record is cut before the first append
        except files.CassetteError as exc:
            return _fail(f"cannot append to it: {exc}")
    writer = files.CassetteWriter(args.cassette, max_bytes=args.max_cassette_bytes)
    recorder = Recorder(Upstream(args.upstream), writer, redactor, record_errors=args.record_errors)
    try:
        sock = startup.listen(args.host, args.port)
    except startup.StartupError as exc:
        return _fail(str(exc))
    root = startup.base_url(sock)
    if args.port_file:
        with open(args.port_file, "w") as out:
            out.write(str(sock.getsockname()[1]))
    print(
        f"mockserver: recording {args.upstream} into {args.cassette}\n"
        f"  use it       export OPENAI_BASE_URL={root}/v1 ANTHROPIC_BASE_URL={root} (with your real keys)\n"
        f"  errors       {'recorded' if args.record_errors else 'passed on, not recorded (--record-errors)'}\n"
        "  credentials  never written; recording runs in this one process",
        file=sys.stderr,
    )

    def summary() -> None:
        print(f"mockserver: recorded {recorder.recorded} exchanges into {args.cassette}", file=sys.stderr)

    config = uvicorn.Config(create_proxy_app(recorder, summary), log_level=args.log_level.lower())
    uvicorn.Server(config).run(sockets=[sock])
    return 0


def cassette(args: argparse.Namespace) -> int:
    from mockserver.cassettes import files, vcr
    from mockserver.recording import table

    if args.cassette_command == "import":
        return _import(args.paths, args.out)
    if vcr.is_vcr_file(args.path):
        return _vcr_cassette(args.cassette_command, args.path)
    if args.cassette_command == "check":
        problems = files.check(args.path)
        if problems:
            for line in problems:
                print(f"mockserver: {line}", file=sys.stderr)
            return USAGE_ERROR
        count = len(files.load(args.path).records)
        print(f"{args.path}: {count} records, all valid (cassette version 1)")
        return 0
    try:
        loaded = _load(args.path)
    except files.CassetteError as exc:
        return _fail(str(exc))
    print(table.render(loaded.records))
    return 0


def _vcr_cassette(command: str, path: str) -> int:
    """``show`` or ``check`` of a VCR cassette, read as replay reads it."""
    from mockserver.cassettes import sources, vcr
    from mockserver.recording import table

    found = vcr.read_vcr([path])
    records = sources.from_vcr(Path(path), found.interactions).records
    if command == "show":
        print(table.render(records))
    for skip in found.skipped:
        print(f"mockserver: skipped {skip.source}: {skip.reason}", file=sys.stderr)
    if command == "check":
        unread = next((s for s in found.skipped if s.source == str(Path(path))), None)
        if unread is not None:  # the file as a whole: not a VCR cassette, or not readable
            return _fail(f"{unread.source}: {unread.reason}")
        print(f"{path}: VCR cassette, {len(records)} interactions served, {len(found.skipped)} skipped (no timing)")
    return 0


def _import(paths: list[str], out: str) -> int:
    """``cassette import``: the VCR cassettes' inference interactions as one native cassette."""
    from mockserver.cassettes import sources, vcr
    from mockserver.cassettes.format import Record, encode
    from mockserver.cassettes.redaction import KEY_PATTERNS, Redactor

    found = vcr.read_vcr(paths)
    for skip in found.skipped:
        print(f"mockserver: skipped {skip.source}: {skip.reason}", file=sys.stderr)
    if not found.interactions:
        return _fail(f"no inference interaction to import from {', '.join(paths)}")
    scrub = Redactor(KEY_PATTERNS).for_request(())
    target = Path(out)
    target.parent.mkdir(parents=True, exist_ok=True)
    with target.open("wb") as handle:
        for number, interaction in enumerate(found.interactions, start=1):
            record = sources.record_of(interaction, number)
            handle.write(encode(Record.model_validate(scrub(record.model_dump(mode="json")))))
    print(
        f"mockserver: imported {len(found.interactions)} interactions into {out} ({len(found.skipped)} skipped); "
        f"replay it: mockserver serve --replay {out} --replay-timing tier",
        file=sys.stderr,
    )
    return 0


def _load(path: str) -> files.Cassette:
    """The cassette, a warning about a torn last record printed as one line."""
    from mockserver.cassettes import files

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", files.TornRecordWarning)
        loaded = files.load(path)
    for warning in caught:
        print(f"mockserver: warning: {warning.message}", file=sys.stderr)
    return loaded


def _fail(message: str) -> int:
    print(f"mockserver: {message}", file=sys.stderr)
    return USAGE_ERROR
