"""Every figure the README and the manual publish comes from a script's results file.

The README and every page of the manual (``docs/`` and its folders, ``docs/recipes/`` included) are read.

- Every ``benchmarks/results/...`` file the docs name exists in the repository, and the page that
  names it names the scenario that writes it (``python -m benchmarks NAME``, or its file,
  ``benchmarks/GROUP/NAME.py``): one whose source names the file, one of the same name, or the one
  its ``command`` field says ran.
- A picture a page shows that a script of ``benchmarks/`` draws (its source names the picture) is
  shown with that script named on the same page.
- Every scenario the docs name is one ``python -m benchmarks`` runs, and every file of
  ``benchmarks/`` they name exists.
- A table the docs mark with ``<!-- figures: benchmarks/results/NAME.json -->`` on the line before
  it gives only numbers that file holds: each number in its cells (but the first, which names the
  row) is one of the file's numbers, as rounded in the table (``1,775`` is 1775; a sign is kept).
  A benchmark rerun whose figures changed fails this until the table is updated with them.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from benchmarks.__main__ import scenarios

ROOT = Path(__file__).resolve().parent.parent
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]  # the recipes/ too
NAMED = re.compile(r"benchmarks/results/[a-z0-9][a-z0-9_.-]*\.(?:json|png|csv|txt)")  # NAME: a placeholder
MARKED = re.compile(r"<!-- figures: (benchmarks/results/[\w.-]+\.json) -->\n((?:\|.*\|[ \t]*\n?)+)")
# A number standing on its own: not part of a name (``gpt-oss-120b``, ``claude-opus-4.8``).
NUMBER = re.compile(r"(?<![\w.\-/])[-+]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?![\w.])")
CODE = re.compile(r"`[^`]*`")
# A scenario by name: `python -m benchmarks NAME`, a path (`benchmarks/load/NAME.py`, or the older
# `benchmarks/NAME.py` a results file's command may hold), or a module (`python -m benchmarks.NAME`).
SCRIPT = re.compile(
    r"python -m benchmarks ([a-z0-9_]+)|benchmarks/(?:[a-z]+/)*_?([a-z0-9_]+)\.py|benchmarks\.(?:[a-z]+\.)*([a-z0-9_]+)"
)
FILE = re.compile(r"benchmarks/[\w/]+\.py")
PICTURE = re.compile(r"!\[[^\]]*\]\(([^)\s]+\.(?:png|svg|jpg))\)")
SCENARIOS = {name: ROOT / "benchmarks" / group / f"{name}.py" for name, (group, _, _) in scenarios().items()}
SOURCES = {p.stem: p for p in sorted((ROOT / "benchmarks").rglob("*.py")) if not p.name.startswith("__")}


def named() -> Iterator[tuple[str, str]]:
    for doc in DOCS:
        for path in sorted(set(NAMED.findall(doc.read_text(encoding="utf-8")))):
            yield doc.relative_to(ROOT).as_posix(), path


def marked_tables() -> Iterator[tuple[str, str, str]]:
    for doc in DOCS:
        for match in MARKED.finditer(doc.read_text(encoding="utf-8")):
            yield doc.relative_to(ROOT).as_posix(), match.group(1), match.group(2)


def scripts_named(text: str) -> set[str]:
    """The names of the scripts of ``benchmarks/`` that ``text`` names, as a command, a path or a module."""
    return {"".join(names) for names in SCRIPT.findall(text)}


def writers(path: str) -> set[str]:
    """The scenarios that write the results file ``path``."""
    file = ROOT / path
    found = {
        name
        for name, source in SCENARIOS.items()
        if source.stem == file.stem or file.name in source.read_text(encoding="utf-8")
    }
    if file.suffix == ".json" and file.is_file():
        data = json.loads(file.read_text(encoding="utf-8"))
        if isinstance(data, dict) and isinstance(data.get("command"), str):
            found |= scripts_named(data["command"])
    return found


def pictures() -> Iterator[tuple[str, str]]:
    for doc in DOCS:
        for picture in PICTURE.findall(doc.read_text(encoding="utf-8")):
            yield doc.relative_to(ROOT).as_posix(), Path(picture).name


def numbers_in(value: Any) -> Iterator[float]:
    if isinstance(value, bool):
        return
    if isinstance(value, int | float):
        yield float(value)
    elif isinstance(value, dict):
        for item in value.values():
            yield from numbers_in(item)
    elif isinstance(value, list):
        for item in value:
            yield from numbers_in(item)


def shown_numbers(table: str) -> Iterator[str]:
    """The numbers in a table's cells, header and separator rows and first column left out."""
    for row in table.strip().splitlines()[2:]:
        for cell in row.strip().strip("|").split("|")[1:]:
            yield from NUMBER.findall(CODE.sub("", cell))


def matches(shown: str, held: list[float]) -> bool:
    text = shown.replace(",", "")
    decimals = len(text.partition(".")[2])
    value = float(text)
    return any(round(number, decimals) == value or round(abs(number), decimals) == abs(value) for number in held)


@pytest.mark.parametrize(("doc", "path"), list(named()))
def test_every_results_file_the_docs_name_exists(doc: str, path: str) -> None:
    assert (ROOT / path).is_file(), f"{doc} names {path}, which is not in the repository: run its script"


def test_the_pages_of_the_manual_in_folders_are_read() -> None:
    assert ROOT / "docs" / "recipes" / "speed.md" in DOCS


@pytest.mark.parametrize(("doc", "path"), list(named()))
def test_a_results_file_the_docs_name_comes_with_the_script_that_writes_it(doc: str, path: str) -> None:
    found = writers(path)
    assert found, f"{doc} names {path}, which no script in benchmarks/ writes: a figure without a script goes"
    text = (ROOT / doc).read_text(encoding="utf-8")
    assert found & scripts_named(text), f"{doc} names {path} but not the script that writes it: {sorted(found)}"


@pytest.mark.parametrize(("doc", "picture"), list(pictures()))
def test_a_picture_a_benchmark_draws_is_shown_with_its_script(doc: str, picture: str) -> None:
    drawn_by = {name for name, source in SOURCES.items() if picture in source.read_text(encoding="utf-8")}
    text = (ROOT / doc).read_text(encoding="utf-8")
    assert not drawn_by or drawn_by & scripts_named(text), f"{doc} shows {picture} without naming {sorted(drawn_by)}"


def test_the_docs_mark_their_tables_of_figures() -> None:
    assert list(marked_tables()), "no table is marked <!-- figures: benchmarks/results/... -->"


@pytest.mark.parametrize(("doc", "path", "table"), list(marked_tables()))
def test_a_marked_table_gives_the_numbers_of_its_results_file(doc: str, path: str, table: str) -> None:
    assert (ROOT / path).is_file(), f"{doc} marks a table with {path}, which is not in the repository"
    held = list(numbers_in(json.loads((ROOT / path).read_text(encoding="utf-8"))))
    missing = [shown for shown in shown_numbers(table) if not matches(shown, held)]
    assert not missing, f"{doc}: the table marked with {path} shows numbers the file does not hold: {missing}"


@pytest.mark.parametrize("doc", [doc.relative_to(ROOT).as_posix() for doc in DOCS])
def test_the_benchmarks_the_docs_name_exist(doc: str) -> None:
    text = (ROOT / doc).read_text(encoding="utf-8")
    runs = set(re.findall(r"python -m benchmarks ([a-z0-9_]+)", text))
    assert runs <= set(SCENARIOS), (
        f"{doc} runs scenarios python -m benchmarks does not list: {sorted(runs - set(SCENARIOS))}"
    )
    files = {name for name in FILE.findall(text) if not (ROOT / name).is_file()}
    assert not files, f"{doc} names files of benchmarks/ that are not in the repository: {sorted(files)}"
