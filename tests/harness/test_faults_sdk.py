"""Every fault drives the official SDK the way WIRE.md §6-§8 says the live API would."""

from __future__ import annotations

import contextlib
import logging
import time

import httpx
import openai
import pytest

from mockserver import MockServer
from mockserver.testing.handle import MockServerHandle
from tests.support import sdk

MESSAGES = [{"role": "user", "content": "Write a haiku about speed."}]
MODEL = "gpt-5.6-sol"


def fault(spec: str) -> dict[str, str]:
    return {"x-mock-fault": spec}


@pytest.mark.parametrize(
    ("spec", "error", "code", "wording"),
    [
        ("status=401", openai.AuthenticationError, "invalid_api_key", "Incorrect API key provided: sk-moc"),
        ("status=401;code=missing_api_key", openai.AuthenticationError, None, "You didn't provide an API key."),
        ("status=403", openai.PermissionDeniedError, "model_not_found", "does not have access to model `gpt-5.6-sol`"),
        (
            "status=403;code=unsupported_country_region_territory",
            openai.PermissionDeniedError,
            "unsupported_country_region_territory",
            "Country, region, or territory not supported",
        ),
        ("status=404", openai.NotFoundError, "model_not_found", "The model `gpt-5.6-sol` does not exist"),
        ("status=429", openai.RateLimitError, "rate_limit_exceeded", "on requests per min (RPM)"),
        ("status=429;code=tokens", openai.RateLimitError, "rate_limit_exceeded", "on tokens per min (TPM)"),
        ("status=500", openai.InternalServerError, None, "The server had an error while processing your request."),
        ("status=503", openai.InternalServerError, None, "The engine is currently overloaded"),
        ("status=503;code=server_is_overloaded", openai.InternalServerError, "server_is_overloaded", "overloaded"),
        ("status=409", openai.ConflictError, None, "Conflict"),
    ],
)
def test_status_faults_raise_the_sdk_class_with_live_wording(
    mockserver: MockServerHandle, spec: str, error: type[openai.APIStatusError], code: str | None, wording: str
) -> None:
    client = mockserver.client(strict=True, max_retries=0)
    with pytest.raises(error) as caught:
        client.chat.completions.create(model=MODEL, messages=MESSAGES, extra_headers=fault(spec))
    assert caught.value.code == code
    assert wording in caught.value.message
    assert caught.value.request_id and caught.value.request_id.startswith("req_")
    assert mockserver.requests.last.fault == spec


def test_429_carries_retry_headers_scaled_to_the_time_scale(mockserver: MockServerHandle) -> None:
    client = mockserver.client(max_retries=0)
    with pytest.raises(openai.RateLimitError) as caught:
        client.chat.completions.create(model=MODEL, messages=MESSAGES, extra_headers=fault("status=429"))
    headers = caught.value.response.headers
    assert headers["retry-after-ms"] == "1"  # 1 s x time scale 0, floored at 1 ms
    assert headers["retry-after"] == "1"


def test_one_shot_503_then_success_with_default_retries(mockserver: MockServerHandle) -> None:
    client = mockserver.client(strict=True)  # default max_retries=2
    completion = client.chat.completions.create(model=MODEL, messages=MESSAGES, extra_headers=fault("once status=503"))
    assert completion.choices[0].message.content
    calls = mockserver.requests.filter(path="/v1/chat/completions")
    assert [c.status for c in calls] == [503, 200]
    assert [c.headers["x-stainless-retry-count"] for c in calls] == ["0", "1"]


def test_persistent_429_is_retried_twice_then_raised(mockserver: MockServerHandle) -> None:
    with pytest.raises(openai.RateLimitError):
        mockserver.client().chat.completions.create(model=MODEL, messages=MESSAGES, extra_headers=fault("status=429"))
    assert mockserver.requests.call_count == 3


def test_quota_429_is_not_retried(mockserver: MockServerHandle) -> None:
    with pytest.raises(openai.RateLimitError) as caught:
        mockserver.client().chat.completions.create(
            model=MODEL, messages=MESSAGES, extra_headers=fault("status=429;code=insufficient_quota")
        )
    assert caught.value.code == "insufficient_quota"
    assert caught.value.response.headers["x-should-retry"] == "false"
    assert mockserver.requests.call_count == 1


def test_retry_after_over_120_s_means_no_retry_in_python(mockserver: MockServerHandle) -> None:
    with pytest.raises(openai.RateLimitError):
        mockserver.client().chat.completions.create(
            model=MODEL, messages=MESSAGES, extra_headers=fault("status=429;retry_after=500")
        )
    assert mockserver.requests.call_count == 1


def test_x_should_retry_true_retries_even_a_400(mockserver: MockServerHandle) -> None:
    with pytest.raises(openai.BadRequestError):
        mockserver.client().chat.completions.create(
            model=MODEL, messages=MESSAGES, extra_headers=fault("status=400;retry=true;retry_after=0.001")
        )
    assert mockserver.requests.call_count == 3


def test_error_event_mid_stream_raises_api_error(mockserver: MockServerHandle) -> None:
    client = mockserver.client(strict=True)
    stream = client.chat.completions.create(
        model=MODEL, messages=MESSAGES, stream=True, extra_headers=fault("error_event_after=3")
    )
    contents = []
    with pytest.raises(openai.APIError) as caught:
        for chunk in stream:
            contents.append(chunk.choices[0].delta.content)
    assert not isinstance(caught.value, openai.APIStatusError)
    assert caught.value.message.startswith("The server had an error while processing your request.")
    assert contents[0] == "" and len(contents) == 4  # the role chunk, then exactly 3 token events
    assert mockserver.requests.call_count == 1  # never retried once the body is being read


def test_dropped_connection_mid_stream_is_a_connection_error(mockserver: MockServerHandle) -> None:
    client = mockserver.client(strict=True)
    stream = client.chat.completions.create(
        model=MODEL, messages=MESSAGES, stream=True, extra_headers=fault("drop_after=5")
    )
    contents = []
    with pytest.raises(openai.APIConnectionError):
        for chunk in stream:
            contents.append(chunk.choices[0].delta.content)
    assert len(contents) == 6  # role chunk + 5 tokens
    call = mockserver.requests.last
    assert call.disconnected and call.fault == "drop_after=5"


class _Kept(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


@pytest.mark.parametrize("time_scale", [0.0, 1.0])
def test_a_stream_dropped_as_it_opens_leaves_no_error_in_the_server_log(time_scale: float) -> None:
    """A drop due as the stream opens (time scale 0, or the first token due at once) closes the
    connection before the handler would return: it waits for the server to see the connection closed,
    as after a drop later in a stream, and uvicorn has no reply left incomplete to log."""
    kept = _Kept()
    uvicorn_log = logging.getLogger("uvicorn.error")
    with MockServer(time_scale=time_scale, seed=1) as server, sdk(server) as client:
        uvicorn_log.addHandler(kept)
        try:
            stream = client.chat.completions.create(
                model=MODEL,
                messages=MESSAGES,
                stream=True,
                extra_headers={**fault("drop_after=0"), "x-mock-ttft-ms": "0"},
            )
            with pytest.raises(openai.APIConnectionError):
                list(stream)
            time.sleep(0.2)  # what uvicorn logs, it logs as the handler returns
        finally:
            uvicorn_log.removeHandler(kept)
        assert server.requests.last.disconnected
    assert [r.getMessage() for r in kept.records] == []


def test_dropped_connection_before_a_reply_is_retried(mockserver: MockServerHandle) -> None:
    completion = mockserver.client().chat.completions.create(
        model=MODEL, messages=MESSAGES, extra_headers=fault("once drop_after=0")
    )
    assert completion.choices[0].message.content
    assert [c.status for c in mockserver.requests] == [499, 200]


def test_truncated_chat_stream_still_gives_a_final_completion(mockserver: MockServerHandle) -> None:
    client = mockserver.client(strict=True)
    with client.chat.completions.stream(model=MODEL, messages=MESSAGES, extra_headers=fault("truncate")) as stream:
        final = stream.get_final_completion()
    assert final.choices[0].finish_reason == "stop" and final.choices[0].message.content
    raw = httpx.post(
        f"{mockserver.base_url}/chat/completions",
        json={"model": MODEL, "messages": MESSAGES, "stream": True},
        headers={"authorization": "Bearer sk-mock-preview", **fault("truncate")},
    )
    assert raw.status_code == 200 and "[DONE]" not in raw.text and '"finish_reason":"stop"' in raw.text


def test_truncate_after_n_tokens_ends_cleanly_without_finish_reason(mockserver: MockServerHandle) -> None:
    stream = mockserver.client().chat.completions.create(
        model=MODEL, messages=MESSAGES, stream=True, extra_headers=fault("truncate=2")
    )
    chunks = list(stream)
    assert len(chunks) == 3 and all(c.choices[0].finish_reason is None for c in chunks)


def test_stall_before_first_token_trips_the_read_timeout_and_frees_the_server(mockserver: MockServerHandle) -> None:
    client = mockserver.client(max_retries=0, timeout=openai.Timeout(0.3, connect=5))
    stream = client.chat.completions.create(model=MODEL, messages=MESSAGES, stream=True, extra_headers=fault("stall"))
    with pytest.raises(openai.APITimeoutError):
        list(stream)
    stream.close()
    call = mockserver.requests.last  # recorded: the server's producer ended when the client left
    assert call.disconnected and call.fault == "stall"


def test_stall_mid_stream_then_resume(mockserver: MockServerHandle) -> None:
    started = time.monotonic()
    stream = mockserver.client().chat.completions.create(
        model=MODEL, messages=MESSAGES, stream=True, max_tokens=4, extra_headers=fault("stall_ms=250;at=mid")
    )
    text = "".join(c.choices[0].delta.content or "" for c in stream if c.choices)
    assert time.monotonic() - started >= 0.25
    assert text and mockserver.requests.last.status == 200


def test_slow_first_token_delays_the_headers_so_the_sdk_retries_the_timeout(mockserver: MockServerHandle) -> None:
    client = mockserver.client(max_retries=1, timeout=openai.Timeout(0.15, connect=5))
    completion = client.chat.completions.create(model=MODEL, messages=MESSAGES, extra_headers=fault("once ttft_ms=600"))
    assert completion.choices[0].message.content
    calls = mockserver.requests
    assert [c.status for c in calls] == [499, 200]  # the first attempt timed out before any reply


def test_slow_first_token_on_a_stream(mockserver: MockServerHandle) -> None:
    started = time.monotonic()
    stream = mockserver.client().chat.completions.create(
        model=MODEL, messages=MESSAGES, stream=True, extra_headers=fault("ttft_ms=200")
    )
    assert time.monotonic() - started >= 0.2  # create() itself waited: the headers came late
    assert list(stream)


@pytest.mark.parametrize(
    "spec",
    [
        "bogus",
        "status=200",
        "status=abc",
        "status=429;code=nope",
        "drop_after=-1",
        "drop_after=2;error_event_after=1",
        "status=500;stall",
        "once",
        "stall_ms=1;at=sideways",
        "none;status=500",
        "status=429;status=503",
        "=3",
        "",
        "status=429;retry_after=1e308",
        "status=429;retry_after=nan",
        "status=503;retry_after=3601",
        "stall_ms=1e309",
        "ttft_ms=inf",
        "ttft_ms=3600001",
        "drop_after=1000001",
        "truncate=99999999",
        "stall;at=99999999",
        "once;status=500;times=2",
    ],
)
def test_a_bad_fault_header_is_an_openai_shaped_400(mockserver: MockServerHandle, spec: str) -> None:
    with pytest.raises(openai.BadRequestError) as caught:
        mockserver.client(max_retries=0).chat.completions.create(
            model=MODEL, messages=MESSAGES, extra_headers=fault(spec)
        )
    assert caught.value.param == "x-mock-fault" and caught.value.code == "invalid_value"
    assert "Invalid value for header 'x-mock-fault'" in caught.value.message


@pytest.mark.mockserver(
    faults=[{"match": {"model": "gpt-5.6-mini", "message": "(?i)flaky"}, "fault": "status=503", "count": "once"}]
)
def test_fixture_rule_matches_model_and_message_once(mockserver: MockServerHandle) -> None:
    client = mockserver.client(max_retries=0)
    client.chat.completions.create(model=MODEL, messages=[{"role": "user", "content": "a FLAKY one"}])
    with pytest.raises(openai.InternalServerError):
        client.chat.completions.create(model="gpt-5.6-mini", messages=[{"role": "user", "content": "a FLAKY one"}])
    client.chat.completions.create(model="gpt-5.6-mini", messages=[{"role": "user", "content": "a FLAKY one"}])
    assert [c.status for c in mockserver.requests] == [200, 503, 200]
    assert mockserver.requests[1].fault == "status=503"


@pytest.mark.mockserver(faults=["status=500"])
def test_header_none_overrides_a_rule(mockserver: MockServerHandle) -> None:
    client = mockserver.client(max_retries=0)
    client.chat.completions.create(model=MODEL, messages=MESSAGES, extra_headers=fault("none"))
    with pytest.raises(openai.InternalServerError):
        client.chat.completions.create(model=MODEL, messages=MESSAGES)


def test_header_overrides_a_rule(mockserver: MockServerHandle) -> None:
    mockserver.configure(faults=["status=500"])
    with pytest.raises(openai.RateLimitError):
        mockserver.client(max_retries=0).chat.completions.create(
            model=MODEL, messages=MESSAGES, extra_headers=fault("status=429")
        )


def _statuses(handle: MockServerHandle, n: int) -> list[int]:
    client = handle.client(max_retries=0)
    for _ in range(n):
        with contextlib.suppress(openai.APIStatusError):
            client.chat.completions.create(model=MODEL, messages=MESSAGES, max_tokens=1)
    return [c.status for c in handle.requests]


def test_server_wide_probability_is_deterministic_under_the_seed(mockserver: MockServerHandle) -> None:
    mockserver.configure(faults={"probability": 0.5, "choices": ["status=500", "status=503"]})
    first = _statuses(mockserver, 12)
    mockserver.reset()
    mockserver.configure(faults={"probability": 0.5, "choices": ["status=500", "status=503"]})
    second = _statuses(mockserver, 12)
    assert first == second
    assert {200, 500, 503} <= set(first)
    mockserver.reset()
    mockserver.configure(seed=99, faults={"probability": 0.5, "choices": ["status=500", "status=503"]})
    assert _statuses(mockserver, 12) != first
