"""The ``obfuscation`` field of streamed events: padding of varying length, so that the size of an
event does not tell the length of the text it carries (``stream_options.include_obfuscation``, on by
default; ``false`` leaves it out).

The live API writes up to 16 random letters and digits per event. Here they are drawn once, at
import, from a fixed seed: a stream is the same bytes every time, and each event costs one lookup.
"""

from __future__ import annotations

import random
import string
from collections.abc import Iterator

import orjson

_ALPHABET = string.ascii_letters + string.digits
_DRAW = random.Random(0x0B5C)
PADS: tuple[str, ...] = tuple("".join(_DRAW.choices(_ALPHABET, k=_DRAW.randint(0, 16))) for _ in range(32))
# Each pad as the bytes of a JSON member, for streams that splice their frames: ,"obfuscation":"..."
MEMBERS: tuple[bytes, ...] = tuple(b',"obfuscation":' + orjson.dumps(pad) for pad in PADS)


def wanted(stream_options: object) -> bool:
    """Whether a stream carries ``obfuscation``: unless ``stream_options.include_obfuscation`` is false."""
    return getattr(stream_options, "include_obfuscation", None) is not False


def pads() -> Iterator[str]:
    """The pads of one stream, event after event."""
    while True:
        yield from PADS
