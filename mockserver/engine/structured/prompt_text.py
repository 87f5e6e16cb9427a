"""Reading values out of a prompt's text: quoted strings, numbers, dates, e-mail addresses, URLs
and the words after a cue ("named Acme Corp", "在北京").

Everything here reads client-controlled text, so every regular expression runs on RE2 (linear
in the text's length, see :mod:`mockserver.config.patterns`) and the text read is bounded:
at most :data:`MAX_PROMPT_CHARS` characters of each prompt text, quoted strings of at most
:data:`MAX_QUOTED_CHARS`, and at most :data:`MAX_VALUES` values of each kind.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from mockserver.config.patterns import deferred_pattern

MAX_PROMPT_CHARS = 2_000  # of the latest user turn (its end) and of the system prompt (its start)
MAX_QUOTED_CHARS = 200
MAX_VALUES = 32  # of each kind (quoted strings, numbers, ...) in one text
MAX_WORDS = 8  # words in one value read after a cue

_QUOTES = ('""', "''", "“”", "‘’", "「」", "『』", "《》", "«»", "``")  # each opening and closing mark, in that order
_QUOTED = deferred_pattern("|".join(f"{o}[^{c}\\n]{{1,{MAX_QUOTED_CHARS}}}{c}" for o, c in map(tuple, _QUOTES)))
_APOSTROPHE = deferred_pattern(r"[\p{L}\p{N}]'[\p{L}]")
_DATE = deferred_pattern(r"\d{4}-\d{2}-\d{2}(?:[Tt ]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:[Zz]|[+-]\d{2}:\d{2})?)?")
_NUMBER = deferred_pattern(r"-?\d{1,18}(?:\.\d{1,12})?")
_EMAIL = deferred_pattern(r"[A-Za-z0-9._%+-]{1,64}@[A-Za-z0-9-]{1,63}(?:\.[A-Za-z0-9-]{1,63}){1,8}")
_URL = deferred_pattern(r"https?://[^\s\"'<>()\[\]{}，。]{1,500}")
_TITLE_WORDS = deferred_pattern(r"\p{Lu}[\p{L}\p{N}&._'-]*(?:[ \t]+[\p{Lu}\p{N}][\p{L}\p{N}&._'-]*){0,5}")
_WORD = deferred_pattern(r"[\p{L}\p{N}_@.+#-]*[\p{L}\p{N}_]")
_CJK = deferred_pattern(
    r"[\p{Han}\p{Hiragana}\p{Katakana}\p{Hangul}][\p{Han}\p{Hiragana}\p{Katakana}\p{Hangul}\p{N}·]{0,39}"
)
_SPACE = deferred_pattern(r"[ \t]*")

# Words that end a value read after a cue ("for Oslo and Paris", "named Bob with ...").
STOP_WORDS = frozenset(
    [
        "a", "an", "the", "and", "or", "but", "with", "without", "then", "please", "using", "via", "by", "for", "from",
        "to", "in", "on", "at", "of", "as", "is", "are", "was", "this", "that", "these", "those", "it", "its", "my",
        "your", "our", "their", "me", "us", "them", "what", "which", "who", "whom", "how", "when", "where", "why",
        "today", "tomorrow", "now", "please", "thanks", "thank", "if", "so", "also", "too",
    ]
)  # fmt: skip
# Where a Chinese value read after a cue ends: particles, and verbs that commonly follow a name.
CJK_STOPS = (
    "的", "和", "与", "及", "并", "吗", "呢", "吧", "了", "是", "在", "到", "去", "至", "发", "打", "写",
    "查询", "创建", "预订", "今天", "明天", "现在",
)  # fmt: skip
# Words that end a clause read after a cue or a name ("text: water the plants, then ...").
CLAUSE_STOPS = frozenset(
    [
        "and", "or", "but", "then", "with", "please", "so", "because", "if", "using", "via",
    ]
)  # fmt: skip


@dataclass(frozen=True)
class Found:
    """A value in the text: its text, its Python value where it has one (a number, a literal), its
    kind and its place ``[start, end)``."""

    text: str
    kind: str  # quoted, number, date, email, url, words, literal
    start: int
    end: int
    value: Any = None

    def overlaps(self, other: Found) -> bool:
        return self.start < other.end and other.start < self.end


@dataclass(frozen=True)
class Scan:
    """The values one prompt text holds, found once and shared by every rule."""

    text: str
    quoted: tuple[Found, ...]
    dates: tuple[Found, ...]
    numbers: tuple[Found, ...]
    emails: tuple[Found, ...]
    urls: tuple[Found, ...]
    starts: dict[int, Found]

    def at(self, position: int) -> Found | None:
        """The quoted string, date, e-mail, URL or number that starts at ``position``."""
        return self.starts.get(position)


def scan(text: str) -> Scan:
    """The quoted strings, dates, e-mail addresses, URLs and numbers of ``text`` (already bounded)."""
    quoted = _quoted(text)
    dates = _all(_DATE, text, "date")
    emails = _all(_EMAIL, text, "email")
    urls = _all(_URL, text, "url")
    covered = bytearray(len(text) + 1)  # the places the values above take: no number is read inside them
    for found in (*quoted, *dates, *emails, *urls):
        covered[found.start : found.end] = b"\x01" * (found.end - found.start)

    def standalone(start: int, end: int) -> bool:
        return _standalone(text, start, end) and not any(covered[start:end])

    numbers = _all(_NUMBER, text, "number", standalone)
    starts: dict[int, Found] = {}
    for found in (*quoted, *dates, *emails, *urls, *numbers):
        starts.setdefault(found.start, found)
    return Scan(text, quoted, dates, numbers, emails, urls, starts)


def _all(pattern: Any, text: str, kind: str, keep: Callable[[int, int], bool] | None = None) -> tuple[Found, ...]:
    found = []
    for match in pattern.finditer(text):
        start, end = match.start(), match.end()
        if keep is not None and not keep(start, end):
            continue
        value = text[start:end]
        found.append(Found(value, kind, start, end, _number(value, kind)))
        if len(found) >= MAX_VALUES:
            break
    return tuple(found)


def _number(text: str, kind: str) -> Any:
    if kind != "number":
        return None
    return float(text) if "." in text else int(text)


def _standalone(text: str, start: int, end: int) -> bool:
    """A number that is not part of a word or a longer token ("gpt4", "v2.1.0", "3rd")."""
    before = text[start - 1] if start > 0 else " "
    after = text[end] if end < len(text) else " "
    return not (before.isalnum() or before in "_.-/") and not (after.isalpha() or after == "_" or after.isdigit())


def _quoted(text: str) -> tuple[Found, ...]:
    # An apostrophe between letters ("what's", "Oslo's") would open a quote: mask it first, keeping places.
    masked = text
    marks = [m.start() + 1 for m in _APOSTROPHE.finditer(text)]
    if marks:
        chars = list(text)
        for i in marks:
            chars[i] = "\u02bc"
        masked = "".join(chars)
    found = []
    for match in _QUOTED.finditer(masked):
        start, end = match.start(), match.end()  # every quote mark is one character
        body = text[start + 1 : end - 1]
        if body.strip():
            found.append(Found(body.strip(), "quoted", start, end))
        if len(found) >= MAX_VALUES:
            break
    return tuple(found)


def words_at(text: str, position: int, *, clause: bool = False) -> Found | None:
    """The value that starts at ``position`` after a cue: a Title Case run ("Acme Corp", "New York"),
    a CJK run up to a particle, or lower-case words up to a stop word (one word unless ``clause``)."""
    position = _SPACE.match(text, position).end()
    if position >= len(text):
        return None
    cjk = _CJK.match(text, position)
    if cjk is not None:
        run = cjk.group(0)
        cut = min((i for i in (run.find(stop) for stop in CJK_STOPS) if i > 0), default=len(run))
        run = run[:cut]
        return Found(run, "words", position, position + len(run))
    title = _TITLE_WORDS.match(text, position)
    if title is not None and not clause:
        titled: list[str] = []
        for word in title.group(0).split():
            if word.lower() in STOP_WORDS and titled:
                break
            titled.append(word)
        value = " ".join(titled).rstrip(".")
        if value and value.lower() not in STOP_WORDS:
            return Found(value, "words", position, position + len(value))
        return None
    kept: list[str] = []
    end = cursor = position
    while len(kept) < (MAX_WORDS if clause else 1):
        word = _WORD.match(text, cursor)
        stops = CLAUSE_STOPS if clause and kept else STOP_WORDS
        if word is None or (word.group(0).lower() in stops and (kept or not clause)):
            break
        kept.append(word.group(0))
        end = word.end()
        cursor = _SPACE.match(text, end).end()
        if cursor == end:  # punctuation, or the end of the text
            break
    if not kept:
        return None
    return Found(text[position:end], "words", position, end)
