"""pytest plugin: a real mockserver per session, a handle per test, and a marker.

Installed with the package (entry point ``pytest11``) and inert until a test asks
for the ``mockserver`` fixture: loading it imports only pytest; the server, FastAPI
and ``openai`` are imported when the fixture is first used.

::

    def test_retry(mockserver):
        client = mockserver.client()                  # openai.OpenAI, key sk-mock-preview
        mockserver.configure(faults=["once status=503"])
        client.chat.completions.create(model="gpt-5.6-sol-ultrafast", messages=[...])
        assert mockserver.requests.filter(path="/v1/chat/completions").call_count == 2

    @pytest.mark.mockserver(config="scenario.yaml", time_scale=0, faults=["status=429"], tokens_per_second=750)
    def test_with_marker(mockserver): ...

    @pytest.mark.mockserver(scripts={"(?i)capital of france": "Paris."})
    def test_scripted(mockserver): ...

Fixtures:

- ``mockserver_server``: the running :class:`~mockserver.testing.server.MockServer`. Its scope is
  ``--mockserver-scope`` / ini ``mockserver_scope`` (default ``session``).
- ``mockserver``: a :class:`~mockserver.testing.handle.MockServerHandle` for the current test. At the
  end of the test the configuration goes back to what it was before, and the test's journal
  entries and fault counters are dropped. While it is active, ``OPENAI_BASE_URL`` and
  ``OPENAI_API_KEY`` point at the server (ini ``mockserver_env = false`` turns that off).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from mockserver.testing import ast_guard

if TYPE_CHECKING:
    from mockserver.testing.handle import MockServerHandle
    from mockserver.testing.recorder import RecordingProxy
    from mockserver.testing.server import MockServer

_RECORDED_HERE = pytest.StashKey[set[Path]]()
SCOPES = ("session", "package", "module", "class", "function")
MARKER_HELP = (
    "mockserver(config=None, time_scale=None, faults=None, scripts=None, tokens_per_second=None, ttft_ms=None, "
    "**patch): configure the mockserver for this test: a scenario YAML (a whole fixture, or a partial one merged "
    "in; relative to the test file), runtime settings, faults (e.g. 'once status=503'), scripted replies (e.g. "
    "{'(?i)^ping$': 'pong'}), tier speeds, or any other /_mock/config field."
)


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("mockserver", "OpenAI-compatible mock server")
    group.addoption("--mockserver-scope", choices=SCOPES, default=None, help="scope of the server fixture")
    group.addoption("--mockserver-time-scale", type=float, default=None, help="time scale of the server (0: instant)")
    group.addoption("--mockserver-config", default=None, metavar="PATH", help="fixture YAML the server starts with")
    parser.addini("mockserver_scope", "scope of the mockserver_server fixture (default: session)", default="session")
    parser.addini("mockserver_time_scale", "time scale of the server; 0 (default) answers at once", default="0")
    parser.addini("mockserver_config", "fixture YAML the server starts with (default: built-in)", default="")
    parser.addini("mockserver_seed", "global seed of the server (default 0)", default="0")
    parser.addini("mockserver_env", "set OPENAI_BASE_URL / OPENAI_API_KEY during tests", type="bool", default=True)
    group.addoption(
        "--mockserver-record-mode",
        choices=("none", "once", "new", "all"),
        default=None,
        help="none: replay each test's cassette; once: record a missing one; new: record what is missing; "
        "all: record everything again (docs/recording.md)",
    )
    group.addoption("--mockserver-upstream", default=None, metavar="URL", help="the API recorded from")
    parser.addini("mockserver_record_mode", "record mode: none (default), once, new or all", default="none")
    parser.addini("mockserver_upstream", "the API the record modes record from", default="")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", MARKER_HELP)
    # A failing test must never take the session down on the CPython releases where a finalizer run
    # inside ast.parse (pytest formats failures with it) crashes it: see mockserver.testing.ast_guard.
    ast_guard.install()


def _server_scope(fixture_name: str, config: pytest.Config) -> Any:
    scope = config.getoption("mockserver_scope") or config.getini("mockserver_scope") or "session"
    if scope not in SCOPES:
        raise pytest.UsageError(f"mockserver_scope must be one of {', '.join(SCOPES)}, got {scope!r}")
    return scope


@pytest.fixture(scope=_server_scope)
def mockserver_server(pytestconfig: pytest.Config) -> Iterator[MockServer]:
    """A mockserver running in a thread on a free port."""
    from mockserver.api.asgi.collector import kept_for_good

    # The server's modules, classes and schemas live as long as the session: frozen once imported, the
    # collector never walks them again; otherwise the interpreter's passes at exit took 0.1-0.2 s of each
    # session using the fixture. What the session left behind so far is freed first, not frozen.
    with kept_for_good(free_first=True):
        from mockserver.testing.server import MockServer

    time_scale = pytestconfig.getoption("mockserver_time_scale")
    if time_scale is None:
        time_scale = float(pytestconfig.getini("mockserver_time_scale"))
    config = pytestconfig.getoption("mockserver_config") or pytestconfig.getini("mockserver_config") or None
    if config is not None and not Path(config).is_absolute():
        config = str(pytestconfig.rootpath / config)
    seed = int(pytestconfig.getini("mockserver_seed"))
    with MockServer(port=0, time_scale=time_scale, seed=seed, config=config) as server:
        yield server


@pytest.fixture
def mockserver(mockserver_server: MockServer, request: pytest.FixtureRequest) -> Iterator[MockServerHandle]:
    """This test's handle on the server: ``client()``, ``configure()``, ``requests``, ``reset()``."""
    from mockserver.testing.handle import MockServerHandle

    handle = MockServerHandle(mockserver_server, test_id=_test_id(request.node.nodeid))
    with pytest.MonkeyPatch.context() as env, contextlib.ExitStack() as stack:
        try:
            # Outermost marker first, so the one closest to the test wins.
            for marker in reversed(list(request.node.iter_markers("mockserver"))):
                handle.configure(marker_patch(marker, Path(request.node.path).parent, mockserver_server))
        except Exception as exc:  # a bad marker fails this test, with the reason, not the session
            handle.reset()
            message = getattr(exc, "message", None) or str(exc)
            pytest.fail(f"@pytest.mark.mockserver: {message}", pytrace=False)
        try:
            recording = _cassette(handle, request)
        except ValueError as exc:
            handle.reset()
            pytest.fail(f"mockserver cassette: {exc}", pytrace=False)
        if recording is not None:
            handle.recording = stack.enter_context(recording)
        if request.config.getini("mockserver_env"):
            env.setenv("OPENAI_BASE_URL", handle.base_url)
            if handle.recording is None:
                env.setenv("OPENAI_API_KEY", os.environ.get("MOCKSERVER_TEST_KEY", "sk-mock-preview"))
            else:  # recording: the client's own key goes upstream
                env.setenv("ANTHROPIC_BASE_URL", handle.url)
        try:
            yield handle
        finally:
            handle.close()


def _cassette(handle: MockServerHandle, request: pytest.FixtureRequest) -> RecordingProxy | None:
    """Replay this test's cassette (configured on the server), or the proxy that records it."""
    from mockserver.testing import cassettes

    config = request.config
    mode = config.getoption("mockserver_record_mode") or config.getini("mockserver_record_mode") or "none"
    if mode not in cassettes.RECORD_MODES:
        raise pytest.UsageError(f"mockserver_record_mode must be one of {', '.join(cassettes.RECORD_MODES)}")
    test_file = Path(request.node.path)
    named = next(
        (m.kwargs["cassette"] for m in request.node.iter_markers("mockserver") if "cassette" in m.kwargs), None
    )
    path = test_file.parent / named if named is not None else cassettes.default_cassette(test_file, request.node.name)
    started = config.stash.setdefault(_RECORDED_HERE, set())  # cassettes this run began: they go on recording
    if not cassettes.records(mode, path, begun_here=path in started):
        if path.exists():
            patch: dict[str, Any] = {"replay": [str(path)]}
            if not any("replay_timing" in m.kwargs for m in request.node.iter_markers("mockserver")):
                patch["replay_timing"] = "instant"  # a test waits for nothing, unless it asks to
            handle.configure(patch)
        return None
    upstream = config.getoption("mockserver_upstream") or config.getini("mockserver_upstream")
    if not upstream:
        raise ValueError(f"record mode {mode!r} needs --mockserver-upstream URL (or ini mockserver_upstream)")
    if path not in started:
        cassettes.prepare(mode, path)
        started.add(path)
    from mockserver.testing.recorder import RecordingProxy  # the recording proxy's HTTP client: only to record

    return RecordingProxy(upstream, path, replay_known=mode == "new")


def marker_patch(marker: pytest.Mark, base_dir: Path, server: MockServer) -> dict[str, Any]:
    """The configuration patch a ``@pytest.mark.mockserver(...)`` asks for."""
    from mockserver.config import suggestions
    from mockserver.testing.patches import KNOWN, config_patch

    if marker.args:
        raise ValueError("takes keyword arguments only, e.g. config='scenario.yaml', faults=['status=503']")
    kwargs = dict(marker.kwargs)
    kwargs.pop("cassette", None)  # the test's cassette: see _cassette
    for name in kwargs:
        if name != "config" and name not in KNOWN:
            raise ValueError(suggestions.unknown(name, [*KNOWN, "config"], "argument"))
    patch: dict[str, Any] = {}
    scenario = kwargs.pop("config", None)
    if scenario is not None:
        patch = scenario_patch(Path(scenario) if Path(scenario).is_absolute() else base_dir / scenario, server)
    return config_patch(patch, **kwargs)


def scenario_patch(path: Path, server: MockServer) -> dict[str, Any]:
    """A scenario file as a patch: a whole fixture (profiles, models and accounts, or ``extends:``)
    replaces the fixture in force; anything less is merged into it."""
    from mockserver.config.documents import read_yaml, resolve
    from mockserver.config.fixture import default_fixture_path, parse_fixture
    from mockserver.operations import configuration

    data = read_yaml(path) or {}
    if not isinstance(data, dict):
        raise ValueError(f"{path}: the top level must be a mapping of fields")
    if "extends" in data:
        data = resolve(data, path, default_fixture_path())
    elif not {"profiles", "models", "accounts"} <= data.keys():
        return data
    fixture_data = {k: v for k, v in data.items() if k not in configuration.RUNTIME_FIELDS}
    document = configuration.document(server.state.settings, parse_fixture(fixture_data, source=str(path)))
    document.update({k: data[k] for k in configuration.RUNTIME_FIELDS if k in data})
    return document


def _test_id(nodeid: str) -> str:
    """The test's id as a header value: printable ASCII only."""
    text = nodeid.encode("ascii", "backslashreplace").decode("ascii")
    return "".join(ch if 32 <= ord(ch) < 127 else "?" for ch in text)
