"""The README's pytest examples run as written: a newcomer can copy them and get green tests."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

pytest_plugins = ["pytester"]

README = Path(__file__).resolve().parent.parent / "README.md"
SECTION = "## Testing with mockserver"


def harness_test_blocks() -> list[str]:
    text = README.read_text(encoding="utf-8")
    section = text[text.index(SECTION) :]
    section = section[: section.index("\n## ", len(SECTION))]
    blocks = re.findall(r"```python\n(.*?)```", section, flags=re.S)
    return [b for b in blocks if "def test_" in b]


def test_readme_has_the_promised_examples() -> None:
    code = "\n".join(harness_test_blocks())
    for promised in ("mockserver.requests", "x-mock-fault", "sk-mock-standard", "ultrafast_concurrency", "scripts="):
        assert promised in code


def test_readme_pytest_examples_pass(pytester: pytest.Pytester) -> None:
    blocks = harness_test_blocks()
    pytester.makepyfile(test_readme_examples="import openai\nimport pytest\n\n" + "\n\n".join(blocks))
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--strict-markers")
    tests = sum(block.count("def test_") for block in blocks)
    result.assert_outcomes(passed=tests)
