"""One API request as the server saw it: who asked, what was decided, what was sent.

The middleware opens an :class:`Exchange` for every HTTP request and closes it
when the reply is finished (or the client went away). Routes fill it in as they
decide things. Observers registered on :class:`ExchangeHooks` read it: to add
headers when the reply starts, and to record it once it is complete.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from mockserver import errors
from mockserver.config.fixture import Account
from mockserver.engine.dialects import CHAT, Dialect

if TYPE_CHECKING:
    from mockserver.service.capacity import Slot


logger = logging.getLogger("mockserver")


@dataclass
class Usage:
    """Tokens of one reply, as reported to the client."""

    input_tokens: int = 0
    output_tokens: int = 0  # reasoning tokens included
    reasoning_tokens: int = 0
    cached_tokens: int = 0  # of input_tokens, read from the prompt cache
    cache_write_tokens: int = 0  # of input_tokens, written to the prompt cache

    @property
    def total_tokens(self) -> int:
        return self.input_tokens + self.output_tokens


@dataclass(frozen=True)
class Refusal:
    """The error a reply carried, as the client reads it: ``type`` as rendered for the request's API
    family, and the server's ``code`` and ``param`` (Anthropic's body has neither; the journal keeps them
    so a test can tell a capacity 429, ``param: "service_tier"``, from a rate-limit 429)."""

    type: str
    code: str | None
    param: str | None
    message: str | None = None  # the error's message, masked when shown (the journal's error_message)


@dataclass(slots=True)  # one per request: slots make it one object instead of two, and quicker to read
class Exchange:
    request_id: str
    method: str
    path: str
    headers: dict[str, str]
    started_at: float
    account: Account | None = None
    model: str | None = None
    requested_tier: str | None = None
    tier: str | None = None
    downgraded: bool = False
    usage: Usage | None = None
    # The prompt's tokens as the context window counted them (tool definitions included): what the
    # reply's usage reports, so a plan takes it from here instead of counting a long prompt again.
    prompt_tokens: int | None = None
    stream: bool = False
    body: Any = None
    status: int | None = None
    finished_at: float | None = None
    disconnected: bool = False
    request_body: bytes = b""  # the raw body as received, so the journal shows refused requests too
    completed: bool = False  # the whole inference reply went out (the ledger records only these)
    rate_limit_headers: dict[str, str] | None = None  # x-ratelimit-* as of admission
    capacity_slot: Slot | None = None  # an Ultrafast slot held until the reply ends
    # The API it speaks: its error replies, and its reply's stream. The middleware labels the request with its
    # family's (Anthropic's, or Chat's for OpenAI's); the route that serves it sets its own.
    dialect: Dialect = CHAT
    route: str | None = None  # the matched route's template (/v1/responses/{response_id}); None if none matched
    refusal: Refusal | None = None  # the error the reply carried, if it was one
    # What the request holds, or owes, until its reply has gone out (or its client left): see :attr:`releases`.
    _releases: list[Callable[[], None]] | None = None
    # Noted by the layers above as the request is served, for the journal, /metrics and the live view:
    fault: str | None = None  # the fault the reply carried, in its one-line form (FaultSpec.describe)
    fault_source: str | None = None  # where that fault came from: "header", "rule" or "random"
    script: dict[str, Any] | None = None  # the script rule that answered: its index, name and step
    script_steps: dict[int, int] | None = None  # the sequence step each script rule gave this request
    script_counters: object | None = None  # the sequence counters read for it (harness.scripted.Steps)
    prefill_ms: float | None = None  # the prefill part of the TTFT (service.prefill)
    queued_ms: float | None = None  # how long it waited for an Ultrafast slot (service.capacity.queue)
    queue_outcome: str | None = None  # how that wait ended (service.capacity.queue.Outcome)
    first_token_at: float | None = None  # the clock's time the stream's first token event went out
    last_token_at: float | None = None  # the clock's time its last event went out
    journal_in_flight: bool = False  # counted by the journal as in flight, until it is recorded
    journal_body_dropped: int | None = None  # the raw body's size, when the journal let it go as too large
    collector_hold: Callable[[], None] | None = None  # a large body's hold of the garbage collector: its release
    large_body_lists: list[list[Any]] | None = None  # a large body's long lists, freed a piece at a time

    @property
    def api(self) -> str:
        """The API family the request speaks (``openai`` or ``anthropic``): its error shape and headers."""
        return self.dialect.api

    def refuse(self, error: errors.MockAPIError) -> tuple[int, dict[str, Any]]:
        """The status and body of the reply to ``error``, in the shape of the API the request speaks (its
        dialect's); the error is noted as the one this exchange answers with."""
        body = self.dialect.error_body(error, self.request_id)
        shown = body.get("error")
        shown_type = shown.get("type") if isinstance(shown, dict) else None
        shown_type = shown_type if isinstance(shown_type, str) else error.type
        self.refusal = Refusal(shown_type, error.code, error.param, error.message)
        return self.dialect.error_status(error), body

    def release_capacity(self) -> None:
        """Start giving back the Ultrafast slot, if any. Safe to call any number of times."""
        if self.capacity_slot is not None:
            self.capacity_slot.release()

    @property
    def releases(self) -> list[Callable[[], None]]:
        """What the request holds, or owes, until its reply has gone out (or its client left): each is
        called once, then (:meth:`let_go`): a budget given back, a stored response made whole. Made
        when first asked for: most requests hold nothing, and an empty list per request would be one
        more object per open stream for the garbage collector's passes."""
        if self._releases is None:
            self._releases = []
        return self._releases

    def let_go(self) -> None:
        """Call what :attr:`releases` holds, once. One that fails is logged, and the others still run:
        the request's own end (its slot, its journal entry) comes after them."""
        releases = self._releases
        if releases:
            self._releases = None
            for release in releases:
                try:
                    release()
                except Exception:
                    logger.exception("could not finish what %s %s held", self.method, self.path)

    async def capacity_released(self) -> None:
        """Give back the Ultrafast slot, if any, and wait until the store has it."""
        if self.capacity_slot is not None:
            await self.capacity_slot.released()


# Reply headers as the server sends them: (name, value) pairs of bytes.
RawHeaders = list[tuple[bytes, bytes]]
# What a header hook adds: encoded pairs (the hooks of every reply answer so, at once, so nothing is
# encoded twice), a dict of names and values, or something to await for either.
AddedHeaders = RawHeaders | tuple[tuple[bytes, bytes], ...] | dict[str, str]
# A hook is a plain function or a coroutine function: the ledger and a shared journal write to
# the store, which may be across the network.
HeaderHook = Callable[[Exchange], AddedHeaders | Awaitable[AddedHeaders]]
CompleteHook = Callable[[Exchange], Awaitable[None] | None]


@dataclass
class ExchangeHooks:
    """Observers of every exchange. Each hook must be quick: it runs on the request path."""

    on_response_start: list[HeaderHook] = field(default_factory=list)
    on_complete: list[CompleteHook] = field(default_factory=list)

    def add_headers(self, exchange: Exchange, raw: RawHeaders) -> Awaitable[None] | None:
        """Add the headers the hooks give for ``exchange``'s reply to ``raw``, in the hooks' order: at once
        and returning None, or returning something to await when a hook has to wait (a shared store).
        Most replies need no coroutine at all, so none is made."""
        hooks = self.on_response_start
        for index, hook in enumerate(hooks):
            added = hook(exchange)
            kind = type(added)
            if kind is list or kind is tuple:
                raw += added  # type: ignore[arg-type]
            elif isinstance(added, dict):
                raw += encoded(added)
            else:
                return self._add_headers_from(exchange, raw, added, index + 1)  # type: ignore[arg-type]
        return None

    async def _add_headers_from(
        self, exchange: Exchange, raw: RawHeaders, waiting: Awaitable[AddedHeaders], start: int
    ) -> None:
        raw += encoded(await waiting)
        for hook in self.on_response_start[start:]:
            added = hook(exchange)
            raw += encoded(added if isinstance(added, list | tuple | dict) else await added)

    def complete(self, exchange: Exchange) -> Awaitable[None] | None:
        """Tell every ``on_complete`` hook, in order: None once they are all done, or something to await
        when a hook has to wait (a shared store), which runs the hooks after it too. Most requests need
        no coroutine at all, so none is made."""
        hooks = self.on_complete
        for index, hook in enumerate(hooks):
            try:
                done = hook(exchange)
            except Exception as exc:
                _failed(exchange, exc)
                continue
            if done is not None:  # a coroutine function's; a plain function's hook returns None
                return self._complete_from(exchange, done, index + 1)
        return None

    async def _complete_from(self, exchange: Exchange, waiting: Awaitable[None], start: int) -> None:
        try:
            await waiting
        except Exception as exc:
            _failed(exchange, exc)
        for hook in self.on_complete[start:]:
            try:
                done = hook(exchange)
                if done is not None:
                    await done
            except Exception as exc:
                _failed(exchange, exc)


def _failed(exchange: Exchange, exc: Exception) -> None:
    if isinstance(exc, errors.MockAPIError):
        # The reply is already going out: a record the shared store could not take (Redis is
        # unreachable) is logged, and the reply is not turned into a failure.
        logger.warning("could not record %s %s: %s", exchange.method, exchange.path, exc.message)
    else:
        # Nor does a bug in one observer fail the reply or keep the others from their record.
        logger.exception("recording %s %s failed", exchange.method, exchange.path, exc_info=exc)


def encoded(headers: AddedHeaders) -> RawHeaders | tuple[tuple[bytes, bytes], ...]:
    """``headers`` as encoded pairs."""
    if isinstance(headers, dict):
        return [(name.encode(), value.encode()) for name, value in headers.items()]
    return headers
