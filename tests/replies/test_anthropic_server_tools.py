"""The planning of Anthropic server tool runs: which run, with what input and result, and where a long
turn pauses and continues."""

from __future__ import annotations

import itertools
from typing import Any

from mockserver.replies import anthropic_server_tools as server_tools
from mockserver.replies.anthropic_server_tools import Context, Deferred, TurnSoFar

WEB_SEARCH = {"type": "web_search_20250305", "name": "web_search"}


def context(prompt: str, seed: int = 3) -> Context:
    counter = itertools.count()
    return Context(
        prompt=prompt,
        seed=seed,
        now=1_800_000_000.0,
        new_id=lambda prefix: f"{prefix}{next(counter)}",
        prose=lambda s, n: " ".join(f"w{s % 97}x{i}" for i in range(n)),
    )


def run(tools: list[dict[str, Any]], prompt: str, so_far: TurnSoFar | None = None, **kw: Any) -> Any:
    server, deferred = server_tools.classify(tools)
    return server_tools.plan_turn(server, deferred, context(prompt), so_far or TurnSoFar(), **kw)


def test_only_server_tool_types_are_server_tools_and_deferred_tools_are_kept_apart() -> None:
    tools = [WEB_SEARCH, {"name": "f", "input_schema": {}}, {"name": "g", "defer_loading": True, "description": "G"}]
    server, deferred = server_tools.classify(tools)
    assert [(t.kind, t.name) for t in server] == [("web_search", "web_search")]
    assert deferred == [Deferred("g", "G")]


def test_a_search_runs_per_quoted_query_up_to_max_uses_with_results_on_example_domains() -> None:
    turn = run([{**WEB_SEARCH, "max_uses": 2}], 'Look up "a b", "c d" and "e f".')
    assert [c.input for c in turn.calls] == [{"query": "a b"}, {"query": "c d"}]
    urls = [r["url"] for c in turn.calls for r in c.result["content"]]
    assert len(urls) == 6 and all(
        u.startswith(("https://example.com/", "https://example.org/", "https://example.net/")) for u in urls
    )
    assert turn.requests("web_search_requests") == 2 and len(turn.sources) == 6
    assert run([WEB_SEARCH], "tides in brest").calls[0].input == {"query": "tides in brest"}


def test_the_same_request_gets_the_same_runs() -> None:
    first, again = run([WEB_SEARCH], '"x y"'), run([WEB_SEARCH], '"x y"')
    assert [c.result for c in first.calls] == [c.result for c in again.calls]


def test_a_turn_of_more_than_ten_runs_pauses_and_continues_where_it_stopped() -> None:
    prompt = " ".join(f'"query {n}"' for n in range(13))
    paused = run([WEB_SEARCH], prompt)
    assert paused.paused and len(paused.calls) == 11 and paused.calls[-1].result is None
    assert paused.requests("web_search_requests") == 10
    dangling = paused.calls[-1]
    resumed = run([WEB_SEARCH], prompt, TurnSoFar(10, (dangling.id, dangling.name, dangling.input)))
    assert not resumed.paused and [c.input["query"] for c in resumed.calls] == ["query 10", "query 11", "query 12"]
    assert resumed.calls[0].id == dangling.id and resumed.calls[0].result is not None


def test_code_execution_works_out_arithmetic_and_echoes_otherwise() -> None:
    code = [{"type": "code_execution_20250825", "name": "code_execution"}]
    turn = run(code, "what is 12 x 7?")
    assert turn.calls[0].input == {"command": "echo $((12 * 7))"}
    assert turn.calls[0].result["content"]["stdout"] == "84\n" and turn.container is not None
    assert run(code, "divide 1 / 4").calls[0].result["content"]["stdout"] == "0.25\n"
    assert run(code, "say hello there").calls[0].result["content"]["stdout"] == "say hello there\n"
    assert run(code, "1 / 0").calls[0].input == {"command": "echo '1 0'"}
    long = "1" * 30 + " * 2"  # past 18 digits a number is not worked out: the scan stays linear
    assert run(code, long).calls[0].input == {"command": f"echo '{'1' * 30} 2'"}


def test_bm25_ranks_the_deferred_tools_by_the_query() -> None:
    scores = server_tools.bm25(["exchange", "rate"], [["get", "exchange", "rate"], ["stock", "price"], []])
    assert scores[0] > 0 and scores[1] == 0 and scores[2] == 0
    tools = [
        {"type": "tool_search_tool_bm25_20251119", "name": "tool_search_tool_bm25"},
        {"name": "stock_lookup", "defer_loading": True, "description": "Stock prices"},
        {"name": "get_exchange_rate", "defer_loading": True, "description": "Currency exchange rates"},
    ]
    turn = run(tools, "USD to EUR exchange rate")
    assert turn.found == ["get_exchange_rate"]
    refs = turn.calls[0].result["content"]["tool_references"]
    assert refs == [{"type": "tool_reference", "tool_name": "get_exchange_rate"}]
    assert run(tools, "nothing matches here").found == ["stock_lookup"]  # the first deferred tool


def test_regex_search_and_the_advisor() -> None:
    tools = [
        {"type": "tool_search_tool_regex_20251119", "name": "tool_search_tool_regex"},
        {"name": "refunds", "defer_loading": True, "description": "Order refund policy"},
        {"type": "advisor_20260301", "name": "advisor", "model": "claude-fable-5"},
    ]
    turn = run(tools, "What is the refund policy?")
    assert turn.calls[0].input["pattern"].startswith("(?i)") and turn.found == ["refunds"]
    advice = turn.calls[1].result["content"]
    assert advice["type"] == "advisor_redacted_result" and turn.advisor is not None


def test_only_the_forced_server_tool_runs_and_a_script_replaces_the_runs() -> None:
    fetch = {"type": "web_fetch_20250910", "name": "web_fetch"}
    forced = run([WEB_SEARCH, fetch], "see https://example.org/a.", only="web_fetch")
    assert [c.input for c in forced.calls] == [{"url": "https://example.org/a"}]
    assert forced.requests("web_fetch_requests") == 1
    scripted = run([WEB_SEARCH], "x", scripted=[{"name": "web_search", "input": {"query": "q"}, "result": []}])
    assert scripted.calls[0].input == {"query": "q"} and scripted.calls[0].result["type"] == "web_search_tool_result"
