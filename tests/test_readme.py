"""Every snippet in the README and the manual (``docs/``) runs as written.

A newcomer copies a block and expects it to work, so each kind of block is checked:

- a Python block with ``def test_`` is a pytest module: run by pytest, every test must pass;
- any other Python block, and the Python of a ``python - <<'PY'`` shell block, is a script: run
  while the pytest plugin's server is up, with ``OPENAI_BASE_URL`` / ``OPENAI_API_KEY`` pointing at
  it, exactly as when the reader runs ``mockserver serve`` in another shell;
- a JSON block is a sample reply: valid JSON, with keys masked as the server masks them;
- a YAML block is a fixture file (whole, or ``extends: default`` plus what it changes) and must
  load as one, except GitHub Actions workflows (``jobs:``), which must be valid YAML.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from mockserver.config.fixture import ConfigError, load_fixture

pytest_plugins = ["pytester"]

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
DOCUMENTS = [README, *sorted((ROOT / "docs").rglob("*.md"))]
FENCE = re.compile(r"^```(\w*)[^\n]*\n(.*?)^```", re.S | re.M)
HEREDOC = re.compile(r"python3? - <<'PY'\n(.*?)^PY$", re.S | re.M)


@dataclass(frozen=True)
class Snippet:
    document: Path
    index: int
    language: str
    code: str

    @property
    def name(self) -> str:
        stem = re.sub(r"\W", "_", self.document.relative_to(ROOT).with_suffix("").as_posix())
        return f"{stem}_{self.index}"

    def __str__(self) -> str:
        return f"{self.document.relative_to(ROOT)} block {self.index}"


def snippets(*languages: str) -> list[Snippet]:
    found = []
    for document in DOCUMENTS:
        blocks = FENCE.findall(document.read_text(encoding="utf-8"))
        for index, (language, code) in enumerate(blocks):
            if language == "sh":
                found += [Snippet(document, index, "python", script) for script in HEREDOC.findall(code)]
            else:
                found.append(Snippet(document, index, language, code))
    return [s for s in found if s.language in languages]


def python_tests() -> list[Snippet]:
    return [s for s in snippets("python") if "def test_" in s.code]


def python_scripts() -> list[Snippet]:
    return [s for s in snippets("python") if "def test_" not in s.code]


def test_the_documents_have_the_promised_examples() -> None:
    code = "\n".join(s.code for s in python_tests())
    for promised in ("mockserver.requests", "x-mock-fault", "sk-mock-standard", "ultrafast_concurrency", "scripts="):
        assert promised in code
    assert any(s.document == README for s in python_tests())
    assert any(s.document == README for s in python_scripts())


def test_every_python_snippet_runs_as_written(pytester: pytest.Pytester) -> None:
    """One pytest run: the test modules as they are, and each script inside a test that holds the
    ``mockserver`` fixture (which points ``OPENAI_BASE_URL`` at its server while the test runs)."""
    files: dict[str, str] = {}
    for snippet in python_tests():
        files[f"test_{snippet.name}"] = snippet.code
    for snippet in python_scripts():
        files[f"script_{snippet.name}"] = snippet.code
        files[f"test_script_{snippet.name}"] = (
            "import runpy\nfrom pathlib import Path\n\n\n"
            "def test_script(mockserver):\n"
            f"    runpy.run_path(str(Path(__file__).with_name('script_{snippet.name}.py')), run_name='__main__')\n"
        )
    pytester.makepyfile(**files)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--strict-markers", "-W", "error")
    tests = sum(len(re.findall(r"^(?:async )?def test_", s.code, flags=re.M)) for s in python_tests())
    result.assert_outcomes(passed=tests + len(python_scripts()))


@pytest.mark.parametrize("snippet", snippets("yaml"), ids=str)
def test_every_yaml_snippet_loads(snippet: Snippet, tmp_path: Path) -> None:
    data = yaml.safe_load(snippet.code)
    assert isinstance(data, dict), "a YAML block is a mapping"
    if "jobs" in data:
        return  # a GitHub Actions workflow
    path = tmp_path / "fixture.yaml"
    path.write_text(snippet.code, encoding="utf-8")
    try:
        load_fixture(path)
    except ConfigError as exc:
        pytest.fail(
            f"{snippet} is not a fixture a reader can use with --config: {exc}. A partial block starts "
            "with `extends: default`."
        )


@pytest.mark.parametrize("snippet", snippets("json"), ids=str)
def test_every_json_snippet_parses_and_masks_keys(snippet: Snippet) -> None:
    """A JSON block is a sample of what the server sends: valid JSON, and keys masked as the server masks them."""
    json.loads(snippet.code)
    assert not re.search(r"sk-mock-[a-z]", snippet.code), f"{snippet} shows a full API key; the server masks them"


def test_readme_links_resolve() -> None:
    """The README is read on the repository's web page, so its links point at files in the repository."""
    text = README.read_text(encoding="utf-8")
    for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", text):
        if "://" not in target:
            assert (ROOT / target).exists(), f"README links to {target}, which is not in the repository"
