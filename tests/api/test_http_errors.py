"""Errors below the SDK: every failure is OpenAI-shaped, never FastAPI's 422 or a bare 500."""

from __future__ import annotations

import threading
import time

import httpx
import pytest

from mockserver import MockServer, Settings, create_app
from mockserver.engine.pacing import FakeClock
from mockserver.service.exchange import Exchange

CHAT = "/v1/chat/completions"
GOOD = {"model": "gpt-5.6-sol", "messages": [{"role": "user", "content": "hi"}]}


def assert_openai_error(reply: httpx.Response, status: int) -> dict[str, object]:
    assert reply.status_code == status
    assert reply.headers["content-type"].startswith("application/json")
    assert reply.headers["x-request-id"].startswith("req_")
    body = reply.json()
    assert set(body) == {"error"}
    assert set(body["error"]) == {"message", "type", "param", "code"}
    assert body["error"]["message"]
    return body["error"]  # type: ignore[no-any-return]


def test_malformed_json(http: httpx.Client) -> None:
    error = assert_openai_error(http.post(CHAT, content=b"{not json"), 400)
    assert "could not parse the JSON body" in str(error["message"])


def test_json_without_content_type_is_still_parsed(http: httpx.Client) -> None:
    reply = http.post(
        CHAT, content=httpx.Request("POST", "/", json=GOOD).content, headers={"content-type": "text/plain"}
    )
    assert reply.status_code == 200


@pytest.mark.parametrize(
    ("body", "param", "code"),
    [
        ({"messages": GOOD["messages"]}, "model", None),
        ({"model": "gpt-5.6-sol"}, "messages", "missing_required_parameter"),
        ({**GOOD, "n": "two"}, "n", "invalid_type"),
        ({**GOOD, "n": 0}, "n", "integer_below_min_value"),
        ({**GOOD, "temperature": 3}, "temperature", "decimal_above_max_value"),
        ({**GOOD, "messages": []}, "messages", "empty_array"),
        ({**GOOD, "messages": [{"role": "robot", "content": "x"}]}, "messages[0].role", "invalid_value"),
        ({**GOOD, "stream": "yes"}, "stream", "invalid_type"),
        ({**GOOD, "reasoning_effort": "ultra"}, "reasoning_effort", "invalid_value"),
        ({**GOOD, "service_tier": "turbo"}, "service_tier", "invalid_value"),
    ],
)
def test_bad_fields(http: httpx.Client, body: dict[str, object], param: str, code: str | None) -> None:
    error = assert_openai_error(http.post(CHAT, json=body), 400)
    assert error["param"] == param
    assert error["code"] == code
    assert error["type"] == "invalid_request_error"


def test_a_bound_is_written_as_the_live_api_writes_it(http: httpx.Client) -> None:
    """The live reply to a temperature of -1, as recorded: the decimal field's bound is written ``0``."""
    error = assert_openai_error(http.post(CHAT, json={**GOOD, "temperature": -1}), 400)
    assert error["message"] == (
        "Invalid 'temperature': decimal below minimum value. Expected a value >= 0, but got -1 instead."
    )
    assert error["code"] == "decimal_below_min_value"


def test_unknown_parameter_uses_live_wording(http: httpx.Client) -> None:
    error = assert_openai_error(http.post(CHAT, json={**GOOD, "temprature": 1}), 400)
    assert error["message"] == "Unrecognized request argument supplied: temprature"


@pytest.mark.parametrize("body", [b"[1, 2]", b'"text"', b"null", b""])
def test_body_must_be_an_object(http: httpx.Client, body: bytes) -> None:
    assert_openai_error(http.post(CHAT, content=body), 400)


def test_unknown_route_and_method(http: httpx.Client) -> None:
    error = assert_openai_error(http.get("/v1/nothing-here"), 404)
    assert error["message"] == "Invalid URL (GET /v1/nothing-here)"
    assert_openai_error(http.delete(CHAT), 405)


def test_bad_override_header(http: httpx.Client) -> None:
    error = assert_openai_error(http.post(CHAT, json=GOOD, headers={"x-mock-tokens-per-second": "fast"}), 400)
    assert error["param"] == "x-mock-tokens-per-second"


def test_authentication_comes_before_body_validation(server: MockServer) -> None:
    reply = httpx.post(f"{server.url}{CHAT}", content=b"{broken")
    assert_openai_error(reply, 401)


def test_every_reply_has_a_request_id(http: httpx.Client) -> None:
    ids = {http.get("/health").headers["x-request-id"], http.get("/v1/models").headers["x-request-id"]}
    ids.add(http.post(CHAT, json={**GOOD, "stream": True}).headers["x-request-id"])
    assert len(ids) == 3 and all(i.startswith("req_") and len(i) == 36 for i in ids)


def test_disconnect_mid_stream_stops_the_producer() -> None:
    finished: list[Exchange] = []
    done = threading.Event()
    with MockServer(time_scale=1) as slow:

        def record(exchange: Exchange) -> None:
            if exchange.path == CHAT:
                finished.append(exchange)
                done.set()

        slow.state.hooks.on_complete.append(record)
        headers = {
            "authorization": "Bearer sk-mock-preview",
            "x-mock-tokens-per-second": "2",  # 200 tokens would take 100 s
            "x-mock-ttft-ms": "0",
            "x-mock-output-tokens": "200",
        }
        started = time.monotonic()
        with httpx.stream("POST", f"{slow.url}{CHAT}", json={**GOOD, "stream": True}, headers=headers) as reply:
            first = next(reply.iter_lines())
            assert first.startswith("data: ")
        assert done.wait(5), "the stream kept running after the client went away"
        assert time.monotonic() - started < 5
        assert finished[0].status == 200


@pytest.mark.parametrize(
    ("header", "value"),
    [
        ("x-mock-output-tokens", "1000000000"),
        ("x-mock-ttft-ms", "1e12"),
        ("x-mock-tokens-per-second", "inf"),
        ("x-mock-tokens-per-second", "nan"),
        ("x-mock-tokens-per-second", "-5"),
        # Outside the documented range of 0.01 to 100,000 tokens/s (MIN/MAX_TOKENS_PER_SECOND).
        ("x-mock-tokens-per-second", "1e-310"),
        ("x-mock-tokens-per-second", "0.009"),
        ("x-mock-tokens-per-second", "1e9"),
        ("x-mock-tokens-per-second", "100001"),
    ],
)
def test_override_headers_are_bounded(http: httpx.Client, header: str, value: str) -> None:
    error = assert_openai_error(http.post(CHAT, json=GOOD, headers={header: value}), 400)
    assert error["param"] == header


@pytest.mark.parametrize("value", ["0.01", "100000"])
def test_the_ends_of_the_rate_range_are_accepted(http: httpx.Client, value: str) -> None:
    headers = {"x-mock-tokens-per-second": value, "x-mock-output-tokens": "2"}
    assert http.post(CHAT, json=GOOD, headers=headers).status_code == 200  # the server's time scale is 0


def test_refused_requests_do_not_use_up_the_rate_limit() -> None:
    headers = {"authorization": "Bearer sk-mock-low-limits"}
    invalid = {**GOOD, "response_format": {"type": "json_object"}}  # json_object needs "json" in the prompt
    settings = Settings(port=0, time_scale=0)
    frozen = MockServer(settings, app=create_app(settings, clock=FakeClock()))  # windows don't refill
    with frozen, httpx.Client(base_url=frozen.url, headers=headers) as c:
        before = c.post(CHAT, json=GOOD)
        assert before.status_code == 200
        remaining = int(before.headers["x-ratelimit-remaining-requests"])
        for _ in range(remaining + 1):
            assert_openai_error(c.post(CHAT, json=invalid), 400)
        after = c.post(CHAT, json=GOOD)
        assert after.status_code == 200
        assert int(after.headers["x-ratelimit-remaining-requests"]) == remaining - 1
