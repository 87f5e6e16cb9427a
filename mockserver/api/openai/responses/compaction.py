"""Server-side compaction of a Responses conversation, as ``context_management`` asks for it.

A request that sends ``context_management: [{"type": "compaction", "compact_threshold": N}]`` gets,
once its tokens (prompt and output together) pass ``N``, a ``compaction`` output item after the answer:
the conversation so far, compacted and encrypted, for the client to send back in place of the turns it
replaces. The content is opaque, as the live one is; a later request accepts the item and reads no text
from it.
"""

from __future__ import annotations

import base64
from collections.abc import Mapping, Sequence
from typing import Any


def threshold(context_management: Sequence[Any] | None) -> int | None:
    """The ``compact_threshold`` of the request's compaction entry, if it sends one (a positive integer)."""
    for entry in context_management or ():
        if isinstance(entry, Mapping) and entry.get("type") == "compaction":
            value = entry.get("compact_threshold")
            if isinstance(value, int) and not isinstance(value, bool) and value > 0:
                return value
    return None


def compacts(context_management: Sequence[Any] | None, total_tokens: int) -> bool:
    """Whether a response of ``total_tokens`` (prompt and output) ends with a compaction item."""
    limit = threshold(context_management)
    return limit is not None and total_tokens > limit


def item(item_id: str, total_tokens: int) -> dict[str, Any]:
    """The ``compaction`` output item: its id and the (mock) encrypted compacted conversation."""
    content = base64.b64encode(f"mock:{item_id}:{total_tokens}".encode()).decode()
    return {"id": item_id, "type": "compaction", "encrypted_content": content}
