"""A failing test never takes the session down: pytest still prints its summary.

On CPython 3.11 before 3.11.8 (the interpreter CI uses is one), a finalizer that raises while
``ast.parse`` builds a tree makes that parse fail with ``SystemError: AST constructor recursion
depth mismatch``; when the parse is pytest formatting a failure, the session ends in an
``INTERNALERROR`` with no summary. An SDK client whose constructor raised (a timeout of the wrong
type) is such an object. The sessions below leave one behind, held until the failure is formatted,
and fail on purpose in a large module, whose source pytest parses to show the failure.
:mod:`mockserver.testing.ast_guard`, installed by the plugin, keeps the summary; without the
plugin, the same session crashes on the releases that have the bug.
"""

from __future__ import annotations

import ast
import gc
import subprocess
import sys
from pathlib import Path

import pytest

from mockserver.testing import ast_guard

CONFTEST = '''
import gc

import pytest


class HalfBuilt:
    """Left behind by a constructor that raised: its __del__ fails, and a cycle leaves it to the collector."""

    def __init__(self):
        self.cycle = self

    def __del__(self):
        self._state.close()


HELD = []


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    if call.when == "call" and call.excinfo is not None:
        HELD.extend(HalfBuilt() for _ in range(3))
        gc.collect()  # they survive into the oldest generation: only a full collection frees them
        HELD.clear()  # garbage now, for the full collection the formatting's allocations start
        gc.set_threshold(1, 1, 1)
    try:
        return (yield)
    finally:
        gc.set_threshold(700, 10, 10)
'''

TESTS = """
import _pydecimal


def test_fails_on_purpose():
    _pydecimal.Context(traps=[_pydecimal.InvalidOperation]).create_decimal("not a number")


def test_runs_after_it():
    pass
"""


def session(tmp_path: Path, *options: str) -> subprocess.CompletedProcess[str]:
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    (tmp_path / "conftest.py").write_text(CONFTEST)
    (tmp_path / "test_on_purpose.py").write_text(TESTS)
    command = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", *options, "test_on_purpose.py"]
    return subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=120, check=False)


def test_a_failure_formatted_while_a_finalizer_raises_leaves_the_summary(tmp_path: Path) -> None:
    done = session(tmp_path)
    assert "INTERNALERROR" not in done.stdout + done.stderr, done.stdout[-3000:]
    assert done.returncode == 1
    assert "FAILED test_on_purpose.py::test_fails_on_purpose" in done.stdout
    assert "1 failed, 1 passed" in done.stdout.splitlines()[-1]


@pytest.mark.skipif(not ast_guard.needed(), reason="this interpreter's AST constructor counts its depth per call")
def test_without_the_guard_the_same_session_crashes(tmp_path: Path) -> None:
    """The session above provokes the bug: without the plugin (and its guard), pytest crashes."""
    done = session(tmp_path, "-p", "no:mockserver")
    assert "SystemError: AST constructor recursion depth mismatch" in done.stdout + done.stderr
    assert "1 failed, 1 passed" not in done.stdout


def test_the_guard_raises_what_the_parse_raises_and_gives_the_collector_back() -> None:
    ast_guard.install()
    with pytest.raises(SyntaxError):
        ast.parse("def (")
    assert ast.literal_eval("[1, (2, 3)]") == [1, (2, 3)]
    assert gc.isenabled()
