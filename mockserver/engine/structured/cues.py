"""The words that tie a value in a prompt to a tool parameter: cue phrases and parameter hints.

A cue phrase comes before a value ("named Acme", "in Oslo", "名为你好啊集团", "在北京") and says
what kind of parameter the value suits, as a set of hint words; a parameter's own hint words are
those of its name (``user_id`` gives ``user`` and ``id``) and, with less weight, of its
description. A phrase binds to the parameter whose hints it shares. :data:`CHINESE_NAMES` lets
a Chinese prompt name an English parameter ("城市：北京" for ``city``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from mockserver.config.patterns import compile_pattern, deferred_pattern

NAMING = frozenset(
    [
        "name", "title", "label", "username", "nickname", "displayname", "company", "customer", "organization", "org",
        "名称", "名字", "姓名",
    ]
)  # fmt: skip
PLACE = frozenset(
    [
        "city", "location", "place", "region", "country", "area", "town", "address", "where", "state", "province",
        "venue", "locale", "destination", "地点", "城市", "位置", "地址",
    ]
)  # fmt: skip
FOR = PLACE | frozenset(
    [
        "query", "customer", "user", "name", "symbol", "ticker", "term", "topic", "keyword", "item", "product",
        "recipient", "person", "company", "account", "q", "search", "for",
    ]
)  # fmt: skip
ABOUT = frozenset(
    [
        "topic", "subject", "query", "keyword", "term", "q", "search", "about", "theme", "prompt",
    ]
)  # fmt: skip
ORIGIN = frozenset(
    [
        "origin", "source", "from", "departure", "start", "sender", "src",
    ]
)  # fmt: skip
TARGET = frozenset(
    [
        "destination", "to", "target", "arrival", "end", "dest", "dst", "recipient",
    ]
)  # fmt: skip
AUTHOR = frozenset(
    [
        "author", "artist", "by", "creator", "director",
    ]
)  # fmt: skip
SEARCH = frozenset(
    [
        "query", "q", "search", "term", "keyword", "keywords", "text",
    ]
)  # fmt: skip
OF = frozenset(
    [
        "symbol", "ticker", "stock", "company", "item", "product", "city", "location", "country",
    ]
)  # fmt: skip

# (cue, hint words, whether the value runs to the end of the clause)
ENGLISH_CUES: dict[str, tuple[frozenset[str], bool]] = {
    "named": (NAMING, False),
    "called": (NAMING, False),
    "titled": (NAMING, False),
    "entitled": (NAMING, False),
    "labeled": (NAMING, False),
    "labelled": (NAMING, False),
    "in": (PLACE, False),
    "at": (PLACE, False),
    "for": (FOR, False),
    "about": (ABOUT, True),
    "on": (ABOUT, False),
    "from": (ORIGIN, False),
    "to": (TARGET, False),
    "by": (AUTHOR, False),
    "of": (OF, False),
    "search for": (SEARCH, True),
    "look up": (SEARCH, True),
    "find": (SEARCH, True),
}
CHINESE_CUES: dict[str, tuple[frozenset[str], bool]] = {
    "名为": (NAMING, False),
    "名叫": (NAMING, False),
    "叫做": (NAMING, False),
    "名字叫": (NAMING, False),
    "名字是": (NAMING, False),
    "名称为": (NAMING, False),
    "名称是": (NAMING, False),
    "命名为": (NAMING, False),
    "称为": (NAMING, False),
    "标题为": (NAMING, False),
    "在": (PLACE, False),
    "位于": (PLACE, False),
    "从": (ORIGIN, False),
    "到": (TARGET, False),
    "前往": (TARGET, False),
    "给": (FOR, False),
    "关于": (ABOUT, True),
    "搜索": (SEARCH, True),
}
_ENGLISH_CUE = deferred_pattern(
    r"(?i)(?:^|[^\p{L}\p{N}_])(search\s+for|look\s+up|named|called|titled|entitled|labell?ed|in|at|for|about|on|"
    r"from|to|by|of|find)[ \t]+(?:(?:the|a|an)[ \t]+)?"
)
_CHINESE_CUE = deferred_pattern("(" + "|".join(sorted(CHINESE_CUES, key=len, reverse=True)) + r")[ \t]*")
# A place before 天气 (weather) or 气温 (temperature): "北京今天的天气怎么样".
_CHINESE_WEATHER = deferred_pattern(r"(\p{Han}{1,12}?)(?:今天|明天|现在|后天)?的?(?:天气|气温)")
_CHINESE_PREFIXES = (
    "请问",
    "请",
    "帮我",
    "麻烦",
    "查询一下",
    "查询",
    "查一下",
    "查",
    "看看",
    "看一下",
    "告诉我",
    "一下",
    "现在",
)

# Chinese words a prompt may use for a parameter with one of these English words in its name.
CHINESE_NAMES: Mapping[str, tuple[str, ...]] = {
    "city": ("城市",),
    "location": ("地点", "位置", "地方"),
    "place": ("地点", "地方"),
    "address": ("地址",),
    "country": ("国家",),
    "name": ("名称", "名字", "姓名"),
    "title": ("标题",),
    "date": ("日期",),
    "time": ("时间",),
    "query": ("查询", "关键词", "搜索词"),
    "keyword": ("关键词",),
    "email": ("邮箱", "电子邮件"),
    "phone": ("电话", "手机"),
    "count": ("数量", "个数"),
    "quantity": ("数量",),
    "number": ("数量", "号码"),
    "limit": ("数量", "条数", "上限"),
    "amount": ("金额",),
    "price": ("价格",),
    "days": ("天数",),
    "age": ("年龄",),
    "language": ("语言",),
    "content": ("内容",),
    "text": ("文本", "内容"),
    "message": ("消息", "内容"),
    "body": ("正文",),
    "user": ("用户",),
    "customer": ("客户",),
    "id": ("编号",),
    "unit": ("单位",),
    "priority": ("优先级",),
    "status": ("状态",),
    "description": ("描述",),
    "category": ("类别", "分类"),
    "currency": ("货币", "币种"),
    "color": ("颜色",),
    "size": ("尺寸", "大小"),
}
_NAME_PART = deferred_pattern(r"[A-Z]?[a-z]+|[A-Z]+(?:[a-z]+)?|[0-9]+|\p{Han}+")
_DESCRIPTION_WORD = deferred_pattern(r"[A-Za-z]{2,}|\p{Han}{2,4}")
DESCRIPTION_CHARS = 300  # of a parameter's description read for its hint words


@dataclass(frozen=True)
class PhraseCue:
    """A cue phrase in the text and where the value after it starts."""

    cue: str
    hints: frozenset[str]
    clause: bool
    start: int
    value_start: int


def phrase_cues(text: str, limit: int) -> list[PhraseCue]:
    """The cue phrases of ``text`` (at most ``limit``), in the order they appear."""
    cues: list[PhraseCue] = []
    for match in _ENGLISH_CUE.finditer(text):
        cue = " ".join(match.group(1).lower().split())
        hints, clause = ENGLISH_CUES[cue]
        cues.append(PhraseCue(cue, hints, clause, match.start(1), match.end()))
        if len(cues) >= limit:
            return cues
    for match in _CHINESE_CUE.finditer(text):
        hints, clause = CHINESE_CUES[match.group(1)]
        cues.append(PhraseCue(match.group(1), hints, clause, match.start(1), match.end()))
        if len(cues) >= 2 * limit:
            break
    return sorted(cues, key=lambda c: c.start)


def chinese_weather_place(text: str) -> tuple[str, int, int] | None:
    """The place a Chinese weather question names ("北京今天天气怎么样" gives 北京), with its span."""
    match = _CHINESE_WEATHER.search(text)
    if match is None:
        return None
    place, start = match.group(1), match.start(1)
    stripped = True
    while stripped:
        stripped = False
        for prefix in _CHINESE_PREFIXES:
            if place.startswith(prefix) and len(place) > len(prefix):
                place, start, stripped = place[len(prefix) :], start + len(prefix), True
    return (place, start, start + len(place)) if place else None


@lru_cache(maxsize=512)
def name_words(name: str) -> tuple[str, ...]:
    """The words of a parameter name, lower case: ``userId`` and ``user_id`` give ``('user', 'id')``."""
    return tuple(part.lower() for part in _NAME_PART.findall(name))


def description_words(schema: Any) -> frozenset[str]:
    """The words of a parameter's ``description`` and ``title`` (the first few hundred characters)."""
    if not isinstance(schema, Mapping):
        return frozenset()
    text = " ".join(str(schema.get(k, ""))[:DESCRIPTION_CHARS] for k in ("title", "description"))
    return frozenset(word.lower() for word in _DESCRIPTION_WORD.findall(text))


@lru_cache(maxsize=512)
def name_pattern(name: str) -> Any:
    """A pattern that finds ``name`` written in a prompt: ``user_id``, ``user id``, ``userId``, or a
    Chinese word for it (:data:`CHINESE_NAMES`); the match ends where a connector or the value starts."""
    words = name_words(name)
    spellings = [_escape(name)]
    if len(words) > 1:
        spellings.append(r"[ \t_-]*".join(_escape(w) for w in words))
    latin = "|".join(dict.fromkeys(spellings))
    chinese = [zh for w in (*words, name.lower()) for zh in CHINESE_NAMES.get(w, ())]
    pattern = rf"(?i)(?:^|[^\p{{L}}\p{{N}}_])[\"'`]?(?:{latin})s?[\"'`]?"
    if chinese:
        pattern += "|" + "|".join(dict.fromkeys(chinese))
    return compile_pattern(pattern)


def _escape(text: str) -> str:
    return "".join(f"\\{c}" if not c.isalnum() and c != "_" else c for c in text)
