"""``constraints.txt`` pins every package ``pyproject.toml`` names (what CI and the image install), and
every runtime dependency is bounded below its next major version. After adding a dependency,
refresh the file as docs/development.md says (``uv pip compile ...``)."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
NAME = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)")


def normalized(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def named(requirement: str) -> str:
    match = NAME.match(requirement)
    assert match, requirement
    return normalized(match.group(1))


def pinned() -> dict[str, str]:
    pins = {}
    for line in (ROOT / "constraints.txt").read_text(encoding="utf-8").splitlines():
        if "==" in line and not line.lstrip().startswith("#"):
            name, version = line.split("==", 1)
            pins[normalized(name.strip())] = version.split(";")[0].strip()
    return pins


def test_every_dependency_is_pinned_in_the_constraints_file() -> None:
    project = PYPROJECT["project"]
    requirements = list(project["dependencies"])
    for extra in project.get("optional-dependencies", {}).values():
        requirements += extra
    names = {named(r) for r in requirements} - {"mockserver"}
    missing = sorted(names - set(pinned()))
    assert not missing, f"constraints.txt does not pin {missing}: refresh it (docs/development.md)"


def test_every_runtime_dependency_has_an_upper_bound() -> None:
    unbounded = [r for r in PYPROJECT["project"]["dependencies"] if "<" not in r.split("#")[0]]
    assert not unbounded, f"no upper bound (the next major version): {unbounded}"
