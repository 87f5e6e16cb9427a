"""Anthropic's prompt caching as the ``anthropic`` SDK reads it, from a real server: a ``cache_control``
breakpoint is written, then read, in ``messages.create`` and the stream helper (``message_start``
and the final usage); the 1-hour TTL, top-level automatic caching, workspaces kept apart, and the
live API's 400 for a fifth breakpoint."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import anthropic
import httpx
import pytest

from mockserver import MockServer
from mockserver.config.fixture import load_fixture_data, parse_fixture

DOCUMENT = "Clause 4.2: the supplier delivers within ten working days of the order. " * 100
QUESTION = {"role": "user", "content": "When does the supplier deliver?"}


def system(ttl: str | None = None) -> list[dict[str, Any]]:
    marker: dict[str, Any] = {"type": "ephemeral"} if ttl is None else {"type": "ephemeral", "ttl": ttl}
    return [{"type": "text", "text": "You answer questions about this contract."},
            {"type": "text", "text": DOCUMENT, "cache_control": marker}]  # fmt: skip


@pytest.fixture
def server() -> Iterator[MockServer]:
    # A second key of the preview organization, in another project (an Anthropic workspace).
    data = load_fixture_data()
    data["accounts"].append(
        {"key": "sk-mock-other-workspace", "organization": "org-mock-preview", "project": "proj_other"}
    )
    world = parse_fixture(data, presets=["claude-opus-4.8-fast"])
    with MockServer(fixture=world, time_scale=0) as running:
        yield running


def client(server: MockServer, key: str = "sk-mock-preview") -> anthropic.Anthropic:
    return anthropic.Anthropic(base_url=server.url, api_key=key, max_retries=0)


def test_a_breakpoint_is_written_then_read(server: MockServer) -> None:
    with client(server) as claude:
        first = claude.messages.create(model="claude-opus-4-8", max_tokens=64, system=system(), messages=[QUESTION])
        second = claude.messages.create(model="claude-opus-4-8", max_tokens=64, system=system(), messages=[QUESTION])
    written = first.usage.cache_creation_input_tokens
    assert written is not None and written >= 1024
    assert first.usage.cache_read_input_tokens == 0
    assert first.usage.cache_creation is not None and first.usage.cache_creation.ephemeral_5m_input_tokens == written
    assert second.usage.cache_creation_input_tokens == 0
    assert second.usage.cache_read_input_tokens == written
    assert second.usage.input_tokens == first.usage.input_tokens < 30  # only what follows the breakpoint
    count = client(server).messages.count_tokens(model="claude-opus-4-8", system=system(), messages=[QUESTION])
    assert count.input_tokens == second.usage.input_tokens + written  # the three add up to the whole prompt


def test_the_stream_reports_the_cache_in_message_start_and_the_final_usage(server: MockServer) -> None:
    request: dict[str, Any] = {"model": "claude-opus-4-8", "max_tokens": 64, "system": system(), "messages": [QUESTION]}
    with client(server) as claude:
        with claude.messages.stream(**request) as stream:
            start = next(event for event in stream if event.type == "message_start")
            stream.until_done()
            created = stream.get_final_message()
        with claude.messages.stream(**request) as stream:
            read = stream.get_final_message()
    assert start.message.usage.cache_creation_input_tokens == created.usage.cache_creation_input_tokens
    assert (created.usage.cache_creation_input_tokens or 0) >= 1024
    assert read.usage.cache_read_input_tokens == created.usage.cache_creation_input_tokens
    assert read.usage.cache_creation_input_tokens == 0


def test_one_hour_breakpoints_and_top_level_automatic_caching(server: MockServer) -> None:
    with client(server) as claude:
        hour = claude.messages.create(model="claude-opus-4-8", max_tokens=16, system=system("1h"), messages=[QUESTION])
        conversation = [{"role": "user", "content": DOCUMENT}]
        auto = {"model": "claude-opus-4-8", "max_tokens": 16, "cache_control": {"type": "ephemeral"}}
        automatic = claude.messages.create(**auto, messages=conversation)
        again = claude.messages.create(**auto, messages=conversation)
    assert hour.usage.cache_creation is not None
    assert hour.usage.cache_creation.ephemeral_1h_input_tokens == hour.usage.cache_creation_input_tokens
    assert hour.usage.cache_creation.ephemeral_5m_input_tokens == 0
    assert (automatic.usage.cache_creation_input_tokens or 0) >= 1024
    assert again.usage.cache_read_input_tokens == automatic.usage.cache_creation_input_tokens


def test_workspaces_do_not_share_a_cache(server: MockServer) -> None:
    request: dict[str, Any] = {"model": "claude-opus-4-8", "max_tokens": 16, "system": system(), "messages": [QUESTION]}
    with client(server) as claude, client(server, "sk-mock-other-workspace") as other:
        claude.messages.create(**request)
        theirs = other.messages.create(**request)
    assert theirs.usage.cache_read_input_tokens == 0


def test_a_fifth_breakpoint_is_refused_as_the_live_api_refuses_it(server: MockServer) -> None:
    block = {"type": "text", "text": "x", "cache_control": {"type": "ephemeral"}}
    with client(server) as claude, pytest.raises(anthropic.BadRequestError) as refused:
        claude.messages.create(
            model="claude-opus-4-8", max_tokens=16, messages=[{"role": "user", "content": [block] * 5}]
        )
    assert "A maximum of 4 blocks with cache_control may be provided. Found 5." in str(refused.value)
    with client(server) as claude, pytest.raises(anthropic.BadRequestError):
        claude.messages.create(
            model="claude-opus-4-8", max_tokens=16,
            messages=[{"role": "user", "content": [{**block, "cache_control": {"type": "ephemeral", "ttl": "2h"}}]}],
        )  # fmt: skip


def test_a_one_hour_breakpoint_after_a_five_minute_one_is_refused(server: MockServer) -> None:
    five = {"type": "text", "text": DOCUMENT, "cache_control": {"type": "ephemeral"}}
    hour = {"type": "text", "text": "Answer briefly.", "cache_control": {"type": "ephemeral", "ttl": "1h"}}
    with client(server) as claude, pytest.raises(anthropic.BadRequestError) as refused:
        claude.messages.create(
            model="claude-opus-4-8", max_tokens=16, system=[five], messages=[{"role": "user", "content": [hour]}]
        )
    assert refused.value.status_code == 400
    assert str(refused.value.body["error"]["message"]).startswith(  # type: ignore[index]
        "messages.0.content.0.cache_control.ttl: a ttl='1h' cache_control block must not come after a ttl='5m' "
        "cache_control block. Note that blocks are processed in the following order: `tools`, `system`, `messages`."
    )
    with client(server) as claude, pytest.raises(anthropic.BadRequestError):  # the top-level one comes last
        claude.messages.create(
            model="claude-opus-4-8", max_tokens=16, system=[five], cache_control={"type": "ephemeral", "ttl": "1h"},
            messages=[QUESTION],
        )  # fmt: skip
    with client(server) as claude:  # 1h then 5m is the order the live API asks for
        long_first = [{**five, "cache_control": {"type": "ephemeral", "ttl": "1h"}}]
        fine = claude.messages.create(
            model="claude-opus-4-8", max_tokens=16, system=long_first,
            messages=[{"role": "user", "content": [{**hour, "cache_control": {"type": "ephemeral"}}]}],
        )  # fmt: skip
    assert fine.usage.cache_creation is not None and fine.usage.cache_creation.ephemeral_1h_input_tokens >= 1024


def test_the_top_level_marker_takes_a_fifth_slot_unless_the_last_block_has_one(server: MockServer) -> None:
    block = {"type": "text", "text": "x", "cache_control": {"type": "ephemeral"}}
    with client(server) as claude, pytest.raises(anthropic.BadRequestError) as refused:
        claude.messages.create(
            model="claude-opus-4-8", max_tokens=16, cache_control={"type": "ephemeral"},
            messages=[{"role": "user", "content": [block] * 4 + [{"type": "text", "text": "y"}]}],
        )  # fmt: skip
    assert "A maximum of 4 blocks with cache_control may be provided. Found 5." in str(refused.value)
    with client(server) as claude:
        shared = claude.messages.create(
            model="claude-opus-4-8", max_tokens=16, cache_control={"type": "ephemeral"},
            messages=[{"role": "user", "content": [block] * 4}],
        )  # fmt: skip
    assert shared.usage.cache_read_input_tokens == 0


def test_the_journal_shows_the_tokens_written_and_read(server: MockServer) -> None:
    request: dict[str, Any] = {"model": "claude-opus-4-8", "max_tokens": 16, "system": system(), "messages": [QUESTION]}
    with client(server) as claude:
        first = claude.messages.create(**request)
        second = claude.messages.create(**request)
    entries = httpx.get(f"{server.url}/_mock/requests", params={"path": "/v1/messages"}).json()["data"]
    written = first.usage.cache_creation_input_tokens
    assert [(e["usage"]["cache_write_tokens"], e["usage"]["cached_tokens"]) for e in entries] == [
        (written, 0),
        (0, second.usage.cache_read_input_tokens),
    ]


def test_claude_fable_5_caches_from_512_tokens() -> None:
    world = parse_fixture(load_fixture_data(), presets=["claude-fable-5", "claude-opus-4.8-fast"])
    short = [{"type": "text", "text": "Clause 1: deliveries are weekly. " * 90, "cache_control": {"type": "ephemeral"}}]
    with MockServer(fixture=world, time_scale=0) as running, client(running) as claude:
        fable = claude.messages.create(model="claude-fable-5", max_tokens=8, system=short, messages=[QUESTION])
        opus = claude.messages.create(model="claude-opus-4-8", max_tokens=8, system=short, messages=[QUESTION])
    assert 512 <= (fable.usage.cache_creation_input_tokens or 0) < 1024
    assert opus.usage.cache_creation_input_tokens == 0  # under Opus 4.8's 1,024


def test_a_breakpoint_on_a_tool_result_is_written_then_read(server: MockServer) -> None:
    # An agent's loop: the tool's long output is marked, so the next turn reads it from the cache.
    tool = {"name": "read_contract", "input_schema": {"type": "object"}}
    marker = {"type": "ephemeral"}
    turns: list[Any] = [
        {"role": "user", "content": "Read the contract."},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1", "name": "read_contract", "input": {}}]},
        {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "toolu_1", "content": DOCUMENT, "cache_control": marker},
        ]},
    ]  # fmt: skip
    with client(server) as claude:
        first = claude.messages.create(model="claude-opus-4-8", max_tokens=16, tools=[tool], messages=turns)
        second = claude.messages.create(model="claude-opus-4-8", max_tokens=16, tools=[tool], messages=turns)
    assert (first.usage.cache_creation_input_tokens or 0) >= 1024
    assert second.usage.cache_read_input_tokens == first.usage.cache_creation_input_tokens


def test_tokens_read_from_the_cache_do_not_count_against_the_token_limit() -> None:
    # About 1,740 tokens a request against a window of 3,000: only the first pays for the cached prefix.
    data = load_fixture_data()
    data["accounts"].append({"key": "sk-mock-small-tpm", "organization": "org-small-tpm", "rate_limits": {"tpm": 3000}})
    world = parse_fixture(data, presets=["claude-opus-4.8-fast"])
    request: dict[str, Any] = {"model": "claude-opus-4-8", "max_tokens": 16, "system": system(), "messages": [QUESTION]}
    with MockServer(fixture=world, time_scale=0) as running, client(running, "sk-mock-small-tpm") as claude:
        first = claude.messages.create(**request)
        later = [claude.messages.create(**request) for _ in range(3)]
        with pytest.raises(anthropic.RateLimitError):  # a miss pays for its whole prompt
            claude.messages.create(**{**request, "system": [{**system()[1], "text": DOCUMENT + " Rev. 2"}]})
    assert (first.usage.cache_creation_input_tokens or 0) >= 1024
    assert [u.usage.cache_read_input_tokens for u in later] == [first.usage.cache_creation_input_tokens] * 3
