"""Token splitting and counting, offline.

The exact o200k tokenizer needs a vocabulary download, so mockserver uses a
documented estimate instead. A *token* here is one CJK character, one word with
its leading whitespace, or one punctuation mark. For English this lands within
about 10-20% of o200k; for Chinese it counts one token per character.

Generated text is built from these tokens, so ``usage`` counts exactly what was
sent. Prompt tokens use the same estimate plus OpenAI's per-message framing:
3 tokens per message and 3 to prime the reply.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

TOKENS_PER_MESSAGE = 3
TOKENS_PER_REPLY = 3

# Every character falls into exactly one alternative, so "".join(split(t)) == t.
_TOKEN = re.compile(
    r"[\u3000-\u303f\u3400-\u4dbf\u4e00-\u9fff\uff00-\uffef]"  # one CJK character or full-width mark
    r"|\s*[^\W_]+"  # a word (letters and digits) with its leading space
    r"|\s*[^\w\s]"  # one punctuation mark
    r"|\s*_+"
    r"|\s+"
)
_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff]")


def split(text: str) -> list[str]:
    """Split ``text`` into tokens whose concatenation is ``text``."""
    return _TOKEN.findall(text)


def count(text: str) -> int:
    return len(_TOKEN.findall(text))


def count_messages(texts: Iterable[str]) -> int:
    """Prompt tokens for a conversation whose messages carry ``texts``."""
    total = TOKENS_PER_REPLY
    for text in texts:
        total += TOKENS_PER_MESSAGE + count(text)
    return total


def is_chinese(text: str) -> bool:
    """Whether the text is mostly written in Chinese characters."""
    cjk = len(_CJK.findall(text))
    return cjk > 0 and cjk * 2 >= len(text.replace(" ", "")) * 0.5
