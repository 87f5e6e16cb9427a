"""What an inference API family gives the request pipeline (:func:`mockserver.api.pipeline.serve`).

Each family (Chat Completions, the Responses API, Anthropic's Messages) is one :class:`Family`
object with the same small interface:

- its :attr:`~Family.dialect` (the models it may ask for, how its prompt is counted, how its stream
  is framed) and its :attr:`~Family.request_model` (which validates the body and documents it in the
  OpenAPI document);
- how a caller is authenticated, and how a body that cannot be read is worded
  (:class:`mockserver.api.handler_inputs.BodyWording`);
- what it refuses before anything is taken (:meth:`Family.refuse_early`);
- how one request is read into an :class:`Asked` (:meth:`Family.asked`): the request as the admission
  and the planner see it, with how its prompt is measured and cut for the prompt cache, how an
  admission becomes its plan, and how the plan becomes its reply.

Which requests speak Anthropic's API at all is another matter: :mod:`mockserver.api.anthropic.family`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Iterable, Mapping
from typing import Any, ClassVar, Generic, TypeVar

from pydantic import BaseModel

from mockserver.api.handler_inputs import OPENAI_WORDING, BodyWording
from mockserver.api.serving import Reply
from mockserver.config.fixture import Account, Fixture, ModelSpec
from mockserver.engine.dialects import Dialect, DialectName
from mockserver.engine.prompt_count import PromptCount
from mockserver.replies.recorded_shapes import BodyStream
from mockserver.server_state import ServerState
from mockserver.service import context_window
from mockserver.service.access import Admission
from mockserver.service.exchange import Exchange
from mockserver.service.prompt_cache import Part

Body = TypeVar("Body", bound=BaseModel)
Plan = TypeVar("Plan")


class Asked(Generic[Plan]):
    """One inference request, read: the model, tier and stream it asks for, with the server's state,
    its exchange and its caller, which every step after it reads. A family's subclass adds its body
    and what it read of it, and says how the request is planned and answered."""

    caches_prompt: ClassVar[bool] = True  # its prompt is cut into parts for the prompt cache
    reads_first: ClassVar[bool] = False  # it reads its prompt (:meth:`read`) before it is admitted
    reads_ahead: ClassVar[bool] = False  # it reads its prompt (:meth:`read_ahead`) once the window is passed

    __slots__ = ("account", "exchange", "model", "raw", "service_tier", "state", "stream")

    def __init__(
        self,
        state: ServerState,
        exchange: Exchange,
        account: Account,
        raw: dict[str, Any],
        *,
        model: str,
        service_tier: str | None,
        stream: bool,
    ) -> None:
        self.state = state
        self.exchange = exchange
        self.account = account
        self.raw = raw  # the body as sent: it seeds the generated content and is journalled
        self.model = model
        self.service_tier = service_tier
        self.stream = stream

    async def read(self) -> None:
        """Read the prompt before the request is admitted (when :attr:`reads_first`): what the prompt cache
        and the plan read of it, or an earlier turn it continues."""

    def measure(self, model: ModelSpec, dialect: DialectName) -> Awaitable[PromptCount]:
        """The prompt's tokens, held to ``model``'s window (raising the live 400 past it)."""
        return context_window.measure(model, self.raw, dialect)

    def measured_at_once(self, model: ModelSpec) -> PromptCount | None:
        """:meth:`measure`, when the prompt is counted at once, without a coroutine (most prompts of
        the families that say so); None: await :meth:`measure`."""
        return None

    def read_ahead(self) -> Awaitable[None] | None:
        """Read what the plan needs of a long prompt, with the event loop's turns (when
        :attr:`reads_ahead`; planning itself is one call); None when there is nothing to wait for."""
        return None

    def cache_parts(self) -> Iterable[Part]:
        """The prompt cut into the parts the prompt cache matches (:mod:`mockserver.service.prompt_cache`)."""
        return ()

    def plan(self, admission: Admission) -> Plan:
        """The reply, fixed up front, for the model and tier ``admission`` serves."""
        raise NotImplementedError

    def reply(self, admission: Admission, plan: Plan) -> Reply:
        """The plan as its reply: its usage, its schedule, its stream's events and its whole body."""
        raise NotImplementedError


class Family(Generic[Body]):
    """One inference API family, as :func:`mockserver.api.pipeline.serve` serves it."""

    dialect: Dialect
    request_model: type[Body]
    wording: BodyWording = OPENAI_WORDING  # how a body that cannot be read is refused
    replay_stream: BodyStream | None = None  # the stream of a recorded body that was not streamed
    keeps_replies: bool = False  # the reply is kept for later requests (:meth:`keep`)

    def authenticate(self, fixture: Fixture, headers: Mapping[str, str]) -> Account:
        """The caller's account, or the 401 the family's API answers."""
        raise NotImplementedError

    def refuse_early(self, fixture: Fixture, body: Body) -> None:
        """Refuse what must be refused before any recording, quota or slot is looked at."""
        raise NotImplementedError

    def asked(self, state: ServerState, exchange: Exchange, account: Account, body: Body, raw: Any) -> Asked[Any]:
        """The request as the admission and the planner read it."""
        raise NotImplementedError

    async def keep(self, asked: Asked[Any], plan: Any) -> None:
        """Keep the planned reply for later requests (when :attr:`keeps_replies`)."""
