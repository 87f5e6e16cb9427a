"""The fallback example of docs/anthropic.md runs as written: Ultrafast at capacity (429), then
Claude Opus 4.8 in fast mode on the Anthropic API, both SDKs against one server, offline."""

from __future__ import annotations

import re
from pathlib import Path

DOC = Path(__file__).resolve().parents[2] / "docs" / "anthropic.md"


def example() -> str:
    text = DOC.read_text(encoding="utf-8")
    section = text[text.index("## Fallback from Ultrafast") :]
    blocks = re.findall(r"```python\n(.*?)```", section, flags=re.S)
    assert blocks, "the fallback section has no Python example"
    return str(blocks[0])


def test_the_documented_fallback_runs() -> None:
    code = example()
    assert "ultrafast_concurrency" in code and "claude-opus-4-8" in code and "RateLimitError" in code
    exec(compile(code, str(DOC), "exec"), {"__name__": "fallback_example"})
