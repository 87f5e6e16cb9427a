"""The manual in ``docs/`` builds with ``mkdocs build --strict``: no broken link or anchor, no page
left out of the nav in ``mkdocs.yml``. It takes a few seconds."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_the_manual_builds_strictly(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert (tmp_path / "site" / "index.html").is_file()


def test_every_serve_option_is_in_the_server_page() -> None:
    """A new option gets its row in docs/server.md's tables, with its environment variable."""
    from mockserver import cli
    from mockserver.config.settings import Settings

    page = (ROOT / "docs" / "server.md").read_text(encoding="utf-8")
    commands = next(a for a in cli.build_parser(Settings())._actions if a.dest == "command")
    serve = commands.choices["serve"]
    for action in serve._actions:
        for flag in action.option_strings:
            if flag.startswith("--") and flag != "--help":
                assert f"| `{flag}" in page, f"{flag} has no row in docs/server.md"
                variable = "MOCKSERVER_" + action.dest.upper()
                assert variable in page, f"{variable} is not in docs/server.md"


def test_every_page_is_in_the_nav() -> None:
    """MkDocs only warns about a page missing from the nav; say which one."""
    nav = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    for page in (ROOT / "docs").rglob("*.md"):
        name = page.relative_to(ROOT / "docs").as_posix()
        assert f": {name}" in nav, f"docs/{name} is not in the nav of mkdocs.yml"


def test_every_recipe_is_given_for_both_apis() -> None:
    """Each section of a recipe page has a test on the Responses API and one on Chat Completions."""
    import re

    for page in sorted((ROOT / "docs" / "recipes").glob("*.md")):
        if page.name == "index.md":
            continue
        sections = re.split(r"^## ", page.read_text(encoding="utf-8"), flags=re.M)[1:]
        assert sections, f"docs/recipes/{page.name} has no ## sections"
        for section in sections:
            title = section.splitlines()[0]
            tests = re.findall(r"```python\n(.*?)```", section, flags=re.S)
            assert any("responses." in t and "def test_" in t for t in tests), (
                f"{page.name} / {title}: no Responses test"
            )
            assert any("chat.completions." in t and "def test_" in t for t in tests), (
                f"{page.name} / {title}: no Chat test"
            )
