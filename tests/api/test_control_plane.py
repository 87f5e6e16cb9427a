"""The /_mock/ control plane: journal (masked keys, filters, scoping, bounds), config patches, reset."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import openai
import orjson
import pytest

from mockserver import MockServer
from mockserver.testing.handle import MockServerHandle

MESSAGES = [{"role": "user", "content": "hello"}]
KEYS = ["sk-mock-preview", "sk-mock-standard", "sk-unknown-0123456789abcdef", "sk-proj-SECRETSECRETSECRET"]


@pytest.fixture
def http(mockserver: MockServerHandle) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=mockserver.url, headers=mockserver.headers) as client:
        yield client


def test_journal_never_shows_a_full_api_key(mockserver: MockServerHandle, http: httpx.Client) -> None:
    preview, standard = mockserver.client("sk-mock-preview"), mockserver.client("sk-mock-standard", max_retries=0)
    preview.chat.completions.create(
        model="gpt-5.6-sol",
        messages=[{"role": "user", "content": "my other key is sk-proj-SECRETSECRETSECRET, keep it"}],
        stream=True,
    ).close()
    with pytest.raises(openai.PermissionDeniedError):
        standard.chat.completions.create(
            model="gpt-5.6-sol", messages=MESSAGES, extra_body={"service_tier": "ultrafast"}
        )
    with pytest.raises(openai.AuthenticationError):
        mockserver.client(KEYS[2], max_retries=0).models.list()
    with pytest.raises(openai.BadRequestError):  # a key in a body field is masked by the field's name
        preview.chat.completions.create(model="gpt-5.6-sol", messages=MESSAGES, extra_body={"api_key": KEYS[1]})
    http.get("/v1/models", headers={"x-api-key": KEYS[0], "authorization": f"Bearer {KEYS[0]}"})

    over_http = http.get("/_mock/requests").json()["data"]
    in_process = [c.json() for c in mockserver.requests]
    assert len(over_http) == len(in_process) == 5
    for document in (over_http, in_process, http.get("/_mock/config").json()):
        text = orjson.dumps(document).decode()
        for key in KEYS:
            assert key not in text
    assert over_http[0]["headers"]["authorization"] == "Bearer sk-moc*****view"
    assert over_http[1]["body"]["service_tier"] == "ultrafast"  # a refused request still shows what it sent
    assert over_http[1]["status"] == 403 and over_http[1]["key"] == "sk-moc******dard"


def test_journal_entry_fields_and_filters(mockserver: MockServerHandle, http: httpx.Client) -> None:
    mockserver.client().chat.completions.create(model="gpt-5.6-sol-ultrafast", messages=MESSAGES, max_tokens=5)
    mockserver.client("sk-mock-standard").chat.completions.create(
        model="gpt-5.6-sol", messages=MESSAGES, max_tokens=3, service_tier="flex"
    )
    mockserver.client().models.list()

    entry = http.get("/_mock/requests", params={"model": "gpt-5.6-sol-ultrafast"}).json()["data"]
    assert len(entry) == 1
    first = entry[0]
    assert (first["method"], first["path"], first["tier"], first["status"]) == (
        "POST",
        "/v1/chat/completions",
        "ultrafast",
        200,
    )
    assert first["usage"]["output_tokens"] == 5 and first["duration_ms"] >= 0 and first["stream"] is False
    assert first["test_id"] == mockserver.test_id
    by_key = http.get("/_mock/requests", params={"key": "sk-mock-standard"}).json()["data"]
    assert [(e["tier"], e["requested_tier"]) for e in by_key] == [("flex", "flex")]
    assert len(http.get("/_mock/requests", params={"path": "/v1/models"}).json()["data"]) == 1
    newest = http.get("/_mock/requests", params={"limit": 2}).json()["data"]
    assert [e["path"] for e in newest] == ["/v1/chat/completions", "/v1/models"]  # the newest two, oldest first
    flex = http.get("/_mock/requests", params={"tier": "flex", "status": 200}).json()["data"]
    assert [e["key"] for e in flex] == ["sk-moc******dard"]

    calls = mockserver.requests
    calls.assert_called(path="/v1/models")
    calls.assert_called_once(key="sk-mock-standard", tier="flex")
    calls.assert_not_called(path="/v1/responses")
    assert calls.filter(path="/v1/*").call_count == 3
    with pytest.raises(AssertionError, match="expected 1 request"):
        calls.assert_called_once(path="/v1/*")


def test_a_refused_tier_is_in_the_journal_as_asked(mockserver: MockServerHandle) -> None:
    standard = mockserver.client("sk-mock-standard", max_retries=0)
    with pytest.raises(openai.PermissionDeniedError) as refused:
        standard.chat.completions.create(
            model="gpt-5.6-sol", messages=MESSAGES, extra_body={"service_tier": "ultrafast"}
        )
    assert refused.value.code == "service_tier_not_available"
    call = mockserver.requests.assert_called_once(status=403)
    assert (call.requested_tier, call.tier) == ("ultrafast", "ultrafast")  # as a capacity 429 records it


def test_bad_query_is_a_400_not_a_422(http: httpx.Client) -> None:
    reply = http.get("/_mock/requests", params={"limit": "many"})
    assert reply.status_code == 400 and reply.json()["error"]["param"] == "query.limit"


def test_test_id_scopes_the_journal_and_one_shot_faults(mockserver: MockServerHandle) -> None:
    a = mockserver.server.client(test_id="test-a", max_retries=0)
    b = mockserver.server.client(test_id="test-b", max_retries=0)
    once = {"x-mock-fault": "once status=503"}
    for client in (a, b):  # each test id gets its own "once"
        with pytest.raises(openai.InternalServerError):
            client.chat.completions.create(model="gpt-5.6-sol", messages=MESSAGES, extra_headers=once)
        client.chat.completions.create(model="gpt-5.6-sol", messages=MESSAGES, extra_headers=once)
    url = mockserver.url
    seen_a = httpx.get(f"{url}/_mock/requests", headers={"x-mock-test-id": "test-a"}).json()["data"]
    seen_b = httpx.get(f"{url}/_mock/requests", params={"test_id": "test-b"}).json()["data"]
    assert [e["status"] for e in seen_a] == [e["status"] for e in seen_b] == [503, 200]
    assert {e["test_id"] for e in seen_a} == {"test-a"}
    assert httpx.delete(f"{url}/_mock/requests", params={"test_id": "test-a"}).json()["deleted"] == 2
    assert httpx.get(f"{url}/_mock/requests", params={"test_id": "test-a"}).json()["data"] == []
    assert len(httpx.get(f"{url}/_mock/requests", params={"test_id": "test-b"}).json()["data"]) == 2
    assert httpx.post(f"{url}/_mock/reset", params={"test_id": "test-b"}).json() == {
        "object": "reset",
        "scope": "test-b",
    }
    with pytest.raises(openai.InternalServerError):  # its "once" is fresh again
        b.chat.completions.create(model="gpt-5.6-sol", messages=MESSAGES, extra_headers=once)


def test_patch_config_changes_runtime_settings_and_fixture(mockserver: MockServerHandle, http: httpx.Client) -> None:
    reply = http.patch(
        "/_mock/config",
        json={
            "time_scale": 0.5,
            "profiles": {"ultrafast": {"tokens_per_second": 2000}},
            "policies": {"ultrafast_without_access": "downgrade"},
        },
    )
    assert reply.status_code == 200, reply.text
    config = http.get("/_mock/config").json()
    assert config["time_scale"] == 0.5
    assert config["profiles"]["ultrafast"] == {
        "tokens_per_second": 2000,
        "ttft_ms": 200,
        "prefill_tokens_per_second": 200000,
        "jitter": 0.1,
        "tokens_per_chunk": 1,
    }
    assert config["profiles"]["default"]["tokens_per_second"] == 54
    assert config["policies"]["ultrafast_without_access"] == "downgrade"
    completion = mockserver.client("sk-mock-standard").chat.completions.create(
        model="gpt-5.6-sol", messages=MESSAGES, max_tokens=1, extra_body={"service_tier": "ultrafast"}
    )
    assert completion.service_tier == "default"
    assert http.patch("/_mock/config", json={"time_scale": None}).json()["time_scale"] == 0  # back to the start value


@pytest.mark.parametrize(
    ("patch", "param"),
    [
        (
            {"time_scale": 0.25, "profiles": {"ultrafast": {"tokens_per_second": -1}}},
            "profiles.ultrafast.tokens_per_second",
        ),
        ({"policies": {"ultrafast_without_access": "maybe"}}, "policies.ultrafast_without_access"),
        ({"faults": {"rules": [{"fault": "status=999"}]}}, "faults.rules.0.fault.status"),
        ({"faults": {"rules": [{"fault": "status=500", "match": {"message": "("}}]}}, "faults.rules.0.match.message"),
        ({"no_such_field": 1}, "no_such_field"),
        ({"time_scale": -1}, "time_scale"),
        ({"time_scale": "fast"}, "time_scale"),
        ({"port": 1}, "port"),
        ({"models": []}, "models"),
    ],
)
def test_invalid_patch_is_refused_whole(http: httpx.Client, patch: dict[str, object], param: str) -> None:
    before = http.get("/_mock/config").json()
    reply = http.patch("/_mock/config", json=patch)
    assert reply.status_code == 400, reply.text
    error = reply.json()["error"]
    assert error["param"] == param and error["type"] == "invalid_request_error"
    assert http.get("/_mock/config").json() == before


@pytest.mark.parametrize("body", [b"[1, 2]", b"{not json", b"", b"null"])
def test_patch_that_is_not_an_object_is_a_400(http: httpx.Client, body: bytes) -> None:
    reply = http.patch("/_mock/config", content=body, headers={"content-type": "application/merge-patch+json"})
    assert reply.status_code == 400 and "error" in reply.json()


def test_reset_restores_config_and_clears_journal() -> None:
    with MockServer(time_scale=0) as server:
        server.client().models.list()
        server.configure(time_scale=2, faults=["status=500"])
        reply = httpx.post(f"{server.url}/_mock/reset")
        assert reply.json() == {"object": "reset", "scope": "all"}
        assert server.state.settings.time_scale == 0 and not server.state.fixture.faults.rules
        assert len(server.requests) == 0


def test_journal_is_bounded_and_skips_the_control_plane() -> None:
    with MockServer(time_scale=0, journal_size=3) as server:
        client = server.client()
        for _ in range(5):
            client.models.list()
        httpx.get(f"{server.url}/health")
        httpx.get(f"{server.url}/_mock/requests")
        seqs = [c.seq for c in server.requests]
        assert seqs == [3, 4, 5]


def test_unittest_style_powers_on_mockserver() -> None:
    with MockServer(time_scale=0) as server:
        server.configure(tokens_per_second={"ultrafast": 1000}, faults=["once status=503"])
        assert server.state.fixture.profiles["ultrafast"].tokens_per_second == 1000
        server.client(strict=True).chat.completions.create(model="gpt-5.6-sol-ultrafast", messages=MESSAGES)
        assert [c.status for c in server.requests] == [503, 200]
        with pytest.raises(Exception, match="tokens_per_second"):
            server.configure(tokens_per_second=0)
        server.reset()
        assert server.state.fixture.profiles["ultrafast"].tokens_per_second == 750


def test_control_plane_is_documented_in_openapi(mockserver: MockServerHandle) -> None:
    schema = httpx.get(f"{mockserver.url}/openapi.json").json()
    for path, methods in {
        "/_mock/config": ("get", "patch"),
        "/_mock/requests": ("get", "delete"),
        "/_mock/reset": ("post",),
    }.items():
        for method in methods:
            operation = schema["paths"][path][method]
            assert operation["tags"] == ["control plane"] and operation["summary"]
    assert "JournalEntry" in schema["components"]["schemas"]
    assert "requestBody" in schema["paths"]["/_mock/config"]["patch"]
