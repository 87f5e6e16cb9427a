"""``mockserver conformance PATH...``: send recorded requests to the generator and compare the shapes.

Without ``--openai`` and ``--anthropic``, the command starts its own generators in this process, on
free loopback ports: the built-in fixture at time scale 0 for the OpenAI requests, and the same
with the ``claude-opus-4.8-fast`` preset for the Messages requests.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from mockserver.config.settings import Settings
from mockserver.recording.conformance.defaults import (
    DEFAULT_KEY,
    DEFAULT_OPENAI_MODEL,
    DEFAULT_TIMEOUT_S,
    EMBEDDINGS_MODEL,
)

USAGE_ERROR = 2
CLAUDE_PRESET = "claude-opus-4.8-fast"
LOOPBACK = "127.0.0.1"
STARTUP_TIMEOUT_S = 10.0


def add_conformance(commands: Any) -> None:
    parser = commands.add_parser(
        "conformance",
        help="send recorded requests to the generator and compare its replies' shapes with the recorded ones",
        description=(
            "Send each recorded request (VCR cassettes: files, folders or globs; or a corpus file, *.jsonl) to the "
            "generator, changing only the model and the key, and compare the shapes of the replies: JSON paths "
            "with their types (per event type for streams), the event types, forced tool calls, tool arguments "
            "and structured outputs against their schemas, refusals. Prints a table per endpoint and mode with "
            "the top differences and where each was recorded. Without --openai/--anthropic it starts its own "
            f"generators: the built-in fixture at time scale 0, and with --preset {CLAUDE_PRESET} for Messages."
        ),
    )
    parser.add_argument("paths", nargs="+", metavar="PATH", help="VCR cassettes (file, folder, glob) or *.jsonl")
    parser.add_argument("--json", metavar="FILE", dest="json_file", help="write every figure and every pair's result")
    parser.add_argument("--openai", metavar="URL", help="a running server for the OpenAI requests (no /v1)")
    parser.add_argument("--anthropic", metavar="URL", help="a running server with a Claude model (no /v1)")
    parser.add_argument("--key", default=DEFAULT_KEY, help=f"the key sent (default: {DEFAULT_KEY})")
    models = f"the Chat and Responses requests' model (default: {DEFAULT_OPENAI_MODEL}; embeddings: {EMBEDDINGS_MODEL})"
    parser.add_argument("--openai-model", default=DEFAULT_OPENAI_MODEL, metavar="MODEL", help=models)
    parser.add_argument(
        "--timeout",
        type=float,
        default=DEFAULT_TIMEOUT_S,
        metavar="S",
        help=f"seconds per request (default {DEFAULT_TIMEOUT_S:g})",
    )


def conformance(args: argparse.Namespace) -> int:
    # Loaded here, not with the CLI: the other commands (serve above all) start without them.
    from mockserver.recording.conformance import pairs as recorded
    from mockserver.recording.conformance import replies, report
    from mockserver.recording.conformance.measure import measure
    from mockserver.recording.conformance.send import GeneratorError, Sender, Target

    if bool(args.openai) != bool(args.anthropic):
        return _fail("give both --openai and --anthropic, or neither (then the generators are started here)")
    try:
        loaded = recorded.load(args.paths)
    except recorded.PairsError as exc:
        return _fail(str(exc))
    if not loaded.pairs:
        return _fail(f"no recorded pair to compare in {' '.join(args.paths)} ({len(loaded.skipped)} skipped)")
    if not replies.can_validate():
        print("mockserver: jsonschema is not installed (pip install 'mockserver[conformance]'): tool arguments and "
              "structured outputs are not checked against their schemas", file=sys.stderr)  # fmt: skip
    with contextlib.ExitStack() as stack:
        if args.openai:
            openai_url, anthropic_url = args.openai, args.anthropic
        else:
            openai_url = stack.enter_context(generator(()))
            anthropic_url = stack.enter_context(generator((CLAUDE_PRESET,)))
        target = Target(openai_url, anthropic_url, args.key, args.openai_model, args.timeout)
        try:
            sender = stack.enter_context(Sender(target))
        except GeneratorError as exc:
            return _fail(str(exc))
        models = {"openai": target.openai_model, "embeddings": EMBEDDINGS_MODEL, "anthropic": sender.claude}
        result = measure(loaded.pairs, sender.send, skipped=loaded.skipped,
                         repositories=recorded.repositories(loaded.pairs), models=models)  # fmt: skip
    print(report.render(result))
    if args.json_file:
        Path(args.json_file).write_text(json.dumps(report.document(result), indent=1) + "\n", encoding="utf-8")
        print(f"mockserver: wrote every pair's result to {args.json_file}", file=sys.stderr)
    return 0


@contextlib.contextmanager
def generator(presets: tuple[str, ...]) -> Iterator[str]:
    """A server on the built-in fixture (with ``presets``) at time scale 0, in a thread of this process,
    on a free loopback port; yields its base URL and stops it on exit."""
    import uvicorn

    from mockserver.server.app import UvicornServer, create_app

    settings = Settings(host=LOOPBACK, port=0, time_scale=0, presets=presets, quiet=True)
    app = create_app(settings)
    config = uvicorn.Config(app, host=LOOPBACK, port=0, log_level="warning", lifespan="off")
    server = UvicornServer(config, app.state.mock)
    thread = threading.Thread(target=server.run, name="mockserver-conformance", daemon=True)
    thread.start()
    deadline = time.monotonic() + STARTUP_TIMEOUT_S
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("the generator did not start")
        time.sleep(0.01)
    try:
        yield f"http://{LOOPBACK}:{server.servers[0].sockets[0].getsockname()[1]}"
    finally:
        server.should_exit = True
        thread.join(timeout=STARTUP_TIMEOUT_S)


def _fail(message: str) -> int:
    print(f"mockserver: {message}", file=sys.stderr)
    return USAGE_ERROR
