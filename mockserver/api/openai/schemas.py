"""Request bodies, as the API documents them.

Every documented parameter is declared, so a client sending any of them is
accepted; a parameter the API does not know is refused with the live wording
("Unrecognized request argument supplied: ..."). Fields that do not change the
reply yet are typed loosely (``Any``) and ignored.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

ReasoningEffortValue = Literal["none", "minimal", "low", "medium", "high", "xhigh", "max"]


class _Body(BaseModel):
    model_config = ConfigDict(extra="forbid")


# The Responses API's models: validators built on the first request that reads one (or the OpenAPI
# document), not at start-up, which serves Chat Completions first.
ON_FIRST_USE = ConfigDict(defer_build=True)


class ToolCallFunction(BaseModel):
    model_config = ConfigDict(extra="allow")

    name: str
    arguments: str


class ChatToolCall(BaseModel):
    """One entry of an assistant message's ``tool_calls``."""

    model_config = ConfigDict(extra="allow")

    id: str
    type: Literal["function", "custom"]
    function: ToolCallFunction | None = None
    custom: dict[str, Any] | None = None


class ChatMessage(BaseModel):
    model_config = ConfigDict(extra="allow")

    role: Literal["developer", "system", "user", "assistant", "tool", "function"]
    content: str | list[dict[str, Any]] | None = None
    name: str | None = None  # counts toward prompt_tokens, as on the live API
    tool_calls: list[ChatToolCall] | None = None
    tool_call_id: str | None = None

    def text(self) -> str:
        """The message's text, with list content flattened."""
        if isinstance(self.content, str):
            return self.content
        if not self.content:
            return ""
        return "".join(str(part.get("text", "")) for part in self.content if isinstance(part, dict))


class StreamOptions(BaseModel):
    model_config = ConfigDict(extra="allow")

    include_usage: bool | None = None
    include_obfuscation: bool | None = None


class ChatCompletionRequest(_Body):
    """``POST /v1/chat/completions``."""

    model: str
    messages: list[ChatMessage] = Field(min_length=1)
    stream: bool | None = False
    stream_options: StreamOptions | None = None
    max_completion_tokens: int | None = Field(default=None, ge=1)
    max_tokens: int | None = Field(default=None, ge=1)
    n: int | None = Field(default=1, ge=1, le=128)
    stop: str | list[str] | None = None
    seed: int | None = None
    service_tier: str | None = None
    reasoning_effort: ReasoningEffortValue | None = None
    temperature: float | None = Field(default=None, ge=0, le=2)
    top_p: float | None = Field(default=None, ge=0, le=1)
    presence_penalty: float | None = Field(default=None, ge=-2, le=2)
    frequency_penalty: float | None = Field(default=None, ge=-2, le=2)
    logit_bias: dict[str, int] | None = None
    logprobs: bool | None = None
    top_logprobs: int | None = Field(default=None, ge=0, le=20)
    tools: list[dict[str, Any]] | None = None
    tool_choice: str | dict[str, Any] | None = None
    parallel_tool_calls: bool | None = None
    response_format: dict[str, Any] | None = None
    verbosity: Literal["low", "medium", "high"] | None = None
    store: bool | None = None
    metadata: dict[str, str] | None = None
    user: str | None = None
    safety_identifier: str | None = None
    prompt_cache_key: str | None = None
    prompt_cache_retention: Literal["in_memory", "24h"] | None = None
    prompt_cache_options: dict[str, Any] | None = None  # accepted, as the Responses API's: not modelled
    modalities: list[str] | None = None
    audio: dict[str, Any] | None = None
    prediction: dict[str, Any] | None = None
    web_search_options: dict[str, Any] | None = None
    moderation: Any = None
    functions: list[dict[str, Any]] | None = None
    function_call: str | dict[str, Any] | None = None

    @property
    def output_limit(self) -> int | None:
        return self.max_completion_tokens if self.max_completion_tokens is not None else self.max_tokens

    @property
    def stop_sequences(self) -> list[str]:
        if self.stop is None:
            return []
        return [self.stop] if isinstance(self.stop, str) else list(self.stop)


# -- Responses API ------------------------------------------------------------------------------

ReasoningSummaryValue = Literal["auto", "concise", "detailed"]


class ReasoningParam(BaseModel):
    model_config = ConfigDict(extra="allow", defer_build=True)

    effort: ReasoningEffortValue | None = None
    summary: ReasoningSummaryValue | None = None
    generate_summary: ReasoningSummaryValue | None = None  # deprecated alias of summary
    context: Literal["auto", "current_turn", "all_turns"] | None = None
    mode: str | None = None

    @property
    def summary_style(self) -> str | None:
        return self.summary or self.generate_summary


class TextParam(BaseModel):
    model_config = ConfigDict(extra="allow", defer_build=True)

    format: dict[str, Any] | None = None
    verbosity: Literal["low", "medium", "high"] | None = None


class ResponseCreateRequest(_Body):
    """``POST /v1/responses``. ``input`` items are checked by :mod:`mockserver.api.openai.responses.lifecycle`."""

    model_config = ON_FIRST_USE

    model: str
    input: str | list[Any] | None = None
    instructions: str | None = None
    stream: bool | None = False
    stream_options: StreamOptions | None = None
    max_output_tokens: int | None = Field(default=None, ge=16)
    max_tool_calls: int | None = Field(default=None, ge=1)
    reasoning: ReasoningParam | None = None
    text: TextParam | None = None
    tools: list[dict[str, Any]] | None = None
    tool_choice: str | dict[str, Any] | None = None
    parallel_tool_calls: bool | None = None
    previous_response_id: str | None = None
    conversation: str | dict[str, Any] | None = None
    store: bool | None = None
    background: bool | None = None
    include: list[str] | None = None
    metadata: dict[str, str] | None = None
    temperature: float | None = Field(default=None, ge=0, le=2)
    top_p: float | None = Field(default=None, ge=0, le=1)
    top_logprobs: int | None = Field(default=None, ge=0, le=20)
    presence_penalty: float | None = Field(default=None, ge=-2, le=2)
    frequency_penalty: float | None = Field(default=None, ge=-2, le=2)
    truncation: Literal["auto", "disabled"] | None = None
    service_tier: str | None = None
    seed: int | None = None
    safety_identifier: str | None = None
    user: str | None = None
    prompt: dict[str, Any] | None = None
    prompt_cache_key: str | None = None
    prompt_cache_retention: Literal["in_memory", "24h"] | None = None
    prompt_cache_options: dict[str, Any] | None = None
    context_management: list[dict[str, Any]] | None = None
    moderation: Any = None
    access_programs: dict[str, Any] | None = None
    background_options: dict[str, Any] | None = None
    image: dict[str, Any] | None = None


class InputTokenCountRequest(_Body):
    """``POST /v1/responses/input_tokens``: what a ``POST /v1/responses`` would read, without generating."""

    model_config = ON_FIRST_USE

    model: str | None = None
    input: str | list[Any] | None = None
    instructions: str | None = None
    tools: list[dict[str, Any]] | None = None
    tool_choice: str | dict[str, Any] | None = None
    parallel_tool_calls: bool | None = None
    previous_response_id: str | None = None
    conversation: str | dict[str, Any] | None = None
    reasoning: ReasoningParam | None = None
    text: TextParam | None = None
    truncation: Literal["auto", "disabled"] | None = None
    personality: str | None = None
