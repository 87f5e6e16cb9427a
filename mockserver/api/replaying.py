"""A request answered from a recording: the hook each inference route calls before it generates.

With cassettes in force (``--replay``, the fixture's ``replay:``), a request that matches a
recording is admitted like any other (accounts, access, capacity, rate limits) and served the
recorded reply through :func:`mockserver.api.serving.respond`, so the ledger, the journal, faults and
the metrics see it as they see a generated one; a reply that is one JSON document (embeddings,
moderations, count_tokens) is served by :func:`answer_whole` the same way. A request that matches
none gets the fixture's ``replay_miss``: the ``no_recording`` 400, ``None`` (the route generates a reply), or, with
``record``, the request forwarded to ``--upstream``, recorded into the first cassette, and answered.
A server that replays nothing never loads the cassettes (:mod:`mockserver.harness.replay.library`) or the
recordings' plans (:mod:`mockserver.replies.recorded`): :class:`Replayed` loads them with the first request replayed.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

from fastapi import Request
from starlette.responses import Response

from mockserver.api import admitting, serving, whole_replies
from mockserver.api.family import Asked
from mockserver.api.handler_inputs import server_state
from mockserver.api.middleware import exchange_of
from mockserver.api.serving import Reply
from mockserver.config.fixture import Account, ModelKind
from mockserver.engine.dialects import Dialect
from mockserver.harness.journal import TEST_ID_HEADER
from mockserver.replies.recorded_shapes import BodyStream
from mockserver.server_state import ServerState
from mockserver.service import access
from mockserver.service.access import Admission

if TYPE_CHECKING:
    from mockserver.cassettes.format import Record
    from mockserver.harness.replay.library import Entry
    from mockserver.recording.recorders import Recorders
    from mockserver.replies.recorded import ReplayPlan

RECORDERS = "recorders"  # the server's :class:`Recorders`, in its resources: closed when it stops


async def answer(request: Request, asked: Asked[Any], dialect: Dialect, family: BodyStream | None) -> Response | None:
    """The recorded reply to the request ``asked``, or the miss's answer; ``None`` when the route should
    generate one. ``family`` is the API family's stream of a recorded body that was not streamed
    (Responses, Messages)."""
    if not asked.state.fixture.replay:
        return None
    found = await _recording(request, asked.state, asked.raw)
    if found is None or isinstance(found, Response):
        return found
    replayed = Replayed(asked, found.record, family)
    admission, plan = await admitting.admit(replayed, dialect, request.receive)
    return await serving.respond(request, replayed.reply(admission, plan), stream=asked.stream)


class Replayed(Asked["ReplayPlan"]):
    """A request a recording answers: admitted as the request itself, planned from the record."""

    caches_prompt = False

    __slots__ = ("family", "record")

    def __init__(self, asked: Asked[Any], record: Record, family: BodyStream | None) -> None:
        super().__init__(
            asked.state,
            asked.exchange,
            asked.account,
            asked.raw,
            model=asked.model,
            service_tier=asked.service_tier,
            stream=asked.stream,
        )
        self.record = record
        self.family = family

    def plan(self, admission: Admission) -> ReplayPlan:
        from mockserver.replies.recorded import plan_replay  # the recordings' plans: only for a server that replays

        state, raw = self.state, self.raw
        fixture = state.fixture
        options = raw.get("stream_options") if isinstance(raw, dict) else None
        return plan_replay(
            self.record,
            admission,
            start=admission.start_time(state.clock),
            stream=self.stream,
            include_usage=bool(options.get("include_usage")) if isinstance(options, dict) else False,
            timing=fixture.replay_timing,
            time_scale=state.settings.time_scale,
            chat_ultrafast_tier=fixture.policies.chat_ultrafast_service_tier,
            family=self.family,
        )

    def reply(self, admission: Admission, plan: ReplayPlan) -> Reply:
        return Reply(plan.usage, plan.schedule, plan.events, plan.body)


async def answer_whole(request: Request, account: Account, raw: Any, *, model: str, kind: ModelKind) -> Response | None:
    """The recorded reply of a request answered by one JSON document (embeddings, moderations), or the
    miss's answer; ``None`` when the route should generate one. It is admitted as the route admits it."""
    state = server_state(request)
    if not state.fixture.replay:
        return None
    found = await _recording(request, state, raw)
    if found is None or isinstance(found, Response):
        return found
    from mockserver.cassettes.figures import figures

    record = found.record
    document = _document(record)
    tokens = figures(record).input_tokens or 0
    admission, _ = await whole_replies.admit(
        request, account, model=model, kind=kind, raw_body=raw, plan=lambda _: None, input_tokens=lambda _: tokens,
        in_thread=False,
    )  # fmt: skip
    if state.fixture.replay_timing == "instant":  # no wait for the model's TTFT or the prompt's reading
        at_once = admission.profile.model_copy(update={"ttft_ms": 0.0, "prefill_tokens_per_second": None})
        admission = dataclasses.replace(admission, profile=at_once)
    return await whole_replies.respond(request, admission, input_tokens=tokens, body=whole_replies.encode(document))


async def counted_tokens(request: Request, account: Account, raw: Any, *, model: str) -> dict[str, Any] | None:
    """The recorded reply of ``count_tokens``, after the route's own model check; ``None`` when the route
    should count (no cassette, or a miss that generates or would be recorded: it is counted instead)."""
    state = server_state(request)
    if not state.fixture.replay:
        return None
    found = await _recording(request, state, raw, recordable=False)
    if found is None or isinstance(found, Response):
        return None
    access.find_model(state.fixture, account, model, api="anthropic")
    return _document(found.record)


def _document(record: Record) -> dict[str, Any]:
    """A recorded whole reply; a recorded failure raised again."""
    if record.response.status >= 400:
        from mockserver.replies.recorded import recorded_error

        raise recorded_error(record)
    body = record.response.body
    return body if isinstance(body, dict) else {"text": record.response.text}


async def _recording(
    request: Request, state: ServerState, raw: Any, *, recordable: bool = True
) -> Entry | Response | None:
    """The recording that answers the request (cassettes are in force: the callers ask first); else ``None``
    (generate one), the recorded miss, or the 400."""
    from mockserver.harness.replay import library  # the cassettes: only for a server that replays

    fixture = state.fixture
    found = library.library_for(fixture)
    exchange = exchange_of(request.scope)
    key, entries = found.matches(request.method, exchange.path, raw)
    if not entries:
        if fixture.replay_miss == "generate" or (fixture.replay_miss == "record" and not recordable):
            return None
        if fixture.replay_miss == "record" and state.settings.upstream:
            return await _record(request, state, state.settings.upstream, fixture.replay[0], list(fixture.redact))
        raise found.miss(request.method, exchange.path, raw)
    return await library.take(state.replay_order, exchange.headers.get(TEST_ID_HEADER), key, entries)


async def _record(request: Request, state: ServerState, upstream: str, cassette: str, redact: list[str]) -> Response:
    """Forward a request no recording matches, and record it; the library reloads the cassette after."""
    from mockserver.recording.proxy import forward  # an HTTP client: only for a server that records misses

    body = await request.body()
    recorder = await recorders(state).get(upstream, cassette, redact)
    return await forward(recorder, request, body)  # counts the exchange on the recorder before it awaits


def recorders(state: ServerState) -> Recorders:
    """The server's recorders of replay misses, made on the first miss recorded."""
    from mockserver.recording.recorders import Recorders

    kept = state.resources.get(RECORDERS)
    if isinstance(kept, Recorders):
        return kept
    made = Recorders()
    state.resources[RECORDERS] = made
    return made
