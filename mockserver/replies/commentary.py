"""A word to the user before a tool call, when the instructions ask for one.

Current models answer "Briefly narrate what you are about to do before calling each tool" with a
short message, ``phase: "commentary"``, before their function calls (the answer proper is
``phase: "final_answer"``). A request whose instructions or system messages ask to narrate, or to say
what the model is about to do before it calls a tool, gets such a message naming the tools it calls.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

MAX_CUE_CHARS = 20_000  # the start of the system texts read for the cue
_CUE = re.compile(
    r"\bnarrat(?:e|es|ing|ion)\b|\bbefore (?:calling|using|invoking) (?:each|any|a|the)? ?tools?\b"
    r"|\b(?:say|explain|tell [a-z]+) what you(?:'re| are) (?:about|going) to do\b",
    re.IGNORECASE,
)


def narrates(system_texts: Sequence[str]) -> bool:
    """Whether the instructions ask for a word before each tool call."""
    return any(_CUE.search(text[:MAX_CUE_CHARS]) for text in system_texts)


def commentary(names: Sequence[str]) -> str:
    """The message before calls of ``names``."""
    listed = ", ".join(f"`{name}`" for name in dict.fromkeys(names))
    return f"Calling {listed} now."
