"""The manual in ``docs/`` builds with ``zensical build --strict``: no broken link or anchor; no page
left out of the nav in ``mkdocs.yml``. Its nav follows a newcomer's order, a long page has ``##``
sections, and every image is on a page. The build takes a few seconds."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_the_manual_builds_strictly(tmp_path: Path) -> None:
    """Built from a copy, so the site and Zensical's cache are written under ``tmp_path``, not here."""
    shutil.copytree(ROOT / "docs", tmp_path / "docs")
    shutil.copy(ROOT / "mkdocs.yml", tmp_path / "mkdocs.yml")
    result = subprocess.run(
        [sys.executable, "-m", "zensical", "build", "--strict"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "NO_COLOR": "1"},
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert (tmp_path / "site" / "index.html").is_file()
    assert (tmp_path / "site" / "recipes" / "capacity" / "index.html").is_file()


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
    """Zensical builds a page missing from the nav without a word; say which one."""
    nav = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    for page in (ROOT / "docs").rglob("*.md"):
        name = page.relative_to(ROOT / "docs").as_posix()
        assert f": {name}" in nav, f"docs/{name} is not in the nav of mkdocs.yml"


def test_every_recipe_is_given_for_both_apis() -> None:
    """Each section of a recipe page has a test on the Responses API and one on Chat Completions."""
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


SECTIONS = ["Getting started", "Recipes", "Guides", "Reference", "Internals"]
LONG_PAGE_WORDS = 600  # past this a page needs ## sections, or it reads as one block with an empty table of contents
FENCED = re.compile(r"^```.*?^```", re.S | re.M)


def test_the_nav_goes_from_getting_started_to_internals() -> None:
    import yaml

    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))
    assert [next(iter(item)) for item in config["nav"]] == SECTIONS


def test_every_long_page_has_sections() -> None:
    """A page of more than 600 words (code blocks left out) has ``##`` headings."""
    for page in sorted((ROOT / "docs").rglob("*.md")):
        text = page.read_text(encoding="utf-8")
        words = len(FENCED.sub("", text).split())
        has_sections = re.search(r"^## ", text, flags=re.M) is not None
        name = page.relative_to(ROOT).as_posix()
        assert has_sections or words <= LONG_PAGE_WORDS, f"{name} has {words} words and no ## headings"


def test_every_image_is_on_a_page() -> None:
    pages = "\n".join(p.read_text(encoding="utf-8") for p in (ROOT / "docs").rglob("*.md"))
    for image in sorted((ROOT / "docs" / "images").iterdir()):
        assert f"images/{image.name}" in pages, f"docs/images/{image.name} is on no page of the manual"
