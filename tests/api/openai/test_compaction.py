"""When ``context_management`` compacts a Responses conversation: past a positive integer threshold only."""

from __future__ import annotations

import base64

import pytest

from mockserver.api.openai.responses import compaction


@pytest.mark.parametrize(
    ("management", "expected"),
    [
        (None, None),
        ([], None),
        ([{"type": "compaction", "compact_threshold": 1000}], 1000),
        ([{"type": "other"}, {"type": "compaction", "compact_threshold": 5}], 5),
        ([{"type": "compaction"}], None),
        ([{"type": "compaction", "compact_threshold": True}], None),
        ([{"type": "compaction", "compact_threshold": -3}], None),
        ([{"type": "compaction", "compact_threshold": "1000"}], None),
        (["compaction"], None),
    ],
)
def test_the_threshold_is_a_positive_integer(management: list[object] | None, expected: int | None) -> None:
    assert compaction.threshold(management) == expected


def test_a_response_compacts_only_past_the_threshold() -> None:
    management = [{"type": "compaction", "compact_threshold": 1000}]
    assert not compaction.compacts(management, 1000)
    assert compaction.compacts(management, 1001)
    assert not compaction.compacts(None, 10**9)
    item = compaction.item("cmp_1", 1001)
    assert item["type"] == "compaction" and item["id"] == "cmp_1"
    assert base64.b64decode(item["encrypted_content"]) == b"mock:cmp_1:1001"
