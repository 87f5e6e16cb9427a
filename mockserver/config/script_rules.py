"""The fixture's ``scripts:`` section: rules that answer matching requests with a fixed reply.

::

    scripts:
      - name: greeting                       # optional; shown in the journal
        match: {message: "(?i)^hello", model: gpt-5.6-sol}
        reply: {text: "Hi! How can I help?"}
      - match: {message: "(?i)weather"}
        reply:
          tool_calls: [{name: get_weather, arguments: {city: Paris}}]
      - match: {turn: 3}
        reply: {error: "status=429"}
      - match: {message: "(?i)flaky"}
        reply:
          sequence: [{error: {status: 503}}, {text: "Back again."}]
          then: repeat                       # or generate

``match`` uses the vocabulary of ``faults.rules`` (model, tier, key, path prefix, a
``message`` regex), except that ``message`` is searched in the latest user message
only, plus ``turn``: the number of user messages in the conversation. How a rule is
chosen and replayed lives in :mod:`mockserver.harness.scripted`.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

import orjson
from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from mockserver.config.faults import MAX_RETRY_AFTER_S, FaultMatch, FaultSyntaxError, parse_fault
from mockserver.errors.variants import check_variant

_ERROR_FIELDS = ("status", "code", "message", "retry_after", "retry")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ScriptMatch(FaultMatch):
    """Which requests a script rule answers: a fault rule's fields, plus ``turn``. Here ``message``
    is searched in the latest user message's text. Every field set must match; none set matches all."""

    turn: int | None = Field(
        default=None, ge=1, description="The number of user messages in the conversation, this one included."
    )


class ScriptToolCall(_Strict):
    """One function call; the function must be among the request's ``tools``."""

    name: str = Field(min_length=1)
    arguments: dict[str, Any] | str = Field(
        default_factory=dict, description="An object, or a string holding a JSON object (sent verbatim)."
    )

    @field_validator("arguments")
    @classmethod
    def _json_object(cls, value: dict[str, Any] | str) -> dict[str, Any] | str:
        if isinstance(value, str):
            try:
                parsed = orjson.loads(value)
            except orjson.JSONDecodeError:
                raise ValueError("a string of arguments must hold a JSON object") from None
            if not isinstance(parsed, dict):
                raise ValueError("a string of arguments must hold a JSON object")
        return value

    def arguments_text(self) -> str:
        if isinstance(self.arguments, str):
            return self.arguments
        return orjson.dumps(self.arguments).decode()


class ScriptError(_Strict):
    """An HTTP error, with the live API's body and retry headers (as a ``status=`` fault has)."""

    status: int = Field(ge=400, le=599)
    code: str | None = Field(default=None, pattern=r"^[a-z0-9_]+$", description="Which error of that status.")
    message: str | None = Field(default=None, min_length=1, description="Replaces the error's wording.")
    retry_after: float | None = Field(
        default=None,
        ge=0,
        le=MAX_RETRY_AFTER_S,
        allow_inf_nan=False,
        description="Seconds sent in retry-after, verbatim.",
    )
    retry: bool | None = Field(default=None, description="Send x-should-retry: true / false.")

    @model_validator(mode="before")
    @classmethod
    def _from_string(cls, value: Any) -> Any:
        if isinstance(value, str):
            try:
                value = parse_fault(value)
            except FaultSyntaxError as exc:
                raise ValueError(str(exc)) from None
        if isinstance(value, dict):
            others = [name for name in value if name not in _ERROR_FIELDS]
            if others:
                raise ValueError(
                    f"an error reply takes {', '.join(_ERROR_FIELDS)}; not {', '.join(others)} "
                    "(stream faults belong in faults.rules)"
                )
        return value

    @model_validator(mode="after")
    def _known_variant(self) -> ScriptError:
        if self.code is not None:
            check_variant(self.status, self.code)
        return self


MAX_SCRIPTED_CALLS = 16


class ScriptServerTool(_Strict):
    """One run of an Anthropic server tool, shown before the reply's answer: the ``server_tool_use``
    block's ``name`` and ``input``, and the ``content`` of its result block, verbatim."""

    name: str = Field(min_length=1, description="web_search, web_fetch, bash_code_execution, advisor, ...")
    input: dict[str, Any] = Field(default_factory=dict)
    result: Any = Field(default=None, description="The result block's content, as the live API writes it.")


MAX_EMBEDDING_DIMENSIONS = 16_384  # as an embedding model's dimensions (mockserver.config.fixture)


class ScriptStep(_Strict):
    """One reply: exactly one of ``text``, ``tool_calls`` or ``error``."""

    text: str | None = Field(default=None, description="The answer, verbatim.")
    tool_calls: list[ScriptToolCall] | None = Field(
        default=None,
        min_length=1,
        max_length=MAX_SCRIPTED_CALLS,
        description=(
            "The function calls the answer makes: several are parallel tool calls (only the first when the "
            "request sets parallel_tool_calls false)."
        ),
    )
    error: ScriptError | None = Field(default=None, description="An HTTP error: 'status=429' or {status, code}.")
    server_tools: list[ScriptServerTool] | None = Field(
        default=None,
        min_length=1,
        max_length=MAX_SCRIPTED_CALLS,
        description="Anthropic server tool runs shown before the text or tool calls (the Messages API only).",
    )
    embedding: list[Annotated[float, Field(allow_inf_nan=False)]] | None = Field(
        default=None,
        min_length=1,
        max_length=MAX_EMBEDDING_DIMENSIONS,
        description=(
            "The vector /v1/embeddings returns for an input that 'message' matches, as written (with "
            "'dimensions', its first values, normalised). Chat requests pass such a rule over."
        ),
    )

    @model_validator(mode="after")
    def _one_kind(self) -> ScriptStep:
        kinds = self._kinds()
        if len(kinds) != 1:
            raise ValueError(f"a reply needs exactly one of {', '.join(self._choices())}; got {_listed(kinds)}")
        return self

    def _choices(self) -> tuple[str, ...]:
        return ("text", "tool_calls", "error", "embedding")

    def _kinds(self) -> list[str]:
        return [name for name in self._choices() if getattr(self, name, None) is not None]


class ScriptReply(ScriptStep):
    """A rule's reply: one step, or a ``sequence`` of steps given to successive matching requests."""

    sequence: list[ScriptStep] | None = Field(
        default=None, min_length=1, description="Replies for the 1st, 2nd, ... matching request (per test id)."
    )
    then: Literal["repeat", "generate"] | None = Field(
        default=None,
        description="After the sequence: 'repeat' its last reply (default), or 'generate': the rule stops answering.",
    )

    @model_validator(mode="after")
    def _then_with_sequence(self) -> ScriptReply:
        if self.then is not None and self.sequence is None:
            raise ValueError("'then' applies to a sequence only")
        return self

    def _choices(self) -> tuple[str, ...]:
        return ("text", "tool_calls", "error", "embedding", "sequence")

    @property
    def steps(self) -> list[ScriptStep]:
        return list(self.sequence) if self.sequence is not None else [self]


class ScriptRule(_Strict):
    """Requests that ``match`` get ``reply``. Rules are tried in order; the first that applies answers."""

    name: str | None = Field(default=None, min_length=1, description="Shown in the journal's 'script' field.")
    match: ScriptMatch = Field(default_factory=ScriptMatch)
    reply: ScriptReply


def _listed(kinds: list[str]) -> str:
    return ", ".join(kinds) if kinds else "none"
