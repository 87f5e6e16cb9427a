"""The Chat Completions request, written from OpenAI's API reference, for the minimum server only.

The minimum server (``_minimum_server.py``) validates each body with this model rather than with
mockserver's own, so that what it costs is what any server pays to read this request strictly, not
what mockserver's internals cost. It follows the reference's ``CreateChatCompletionRequest``:
``messages`` is a union discriminated by ``role``; content is a string or a list of typed parts;
``tools``, ``tool_choice``, ``response_format`` (text, JSON object, JSON schema), ``stream_options``,
``service_tier``, and the sampling fields. Unknown fields are refused, as the live API refuses them.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class TextPart(Strict):
    type: Literal["text"]
    text: str


class ImageURL(Strict):
    url: str
    detail: Literal["auto", "low", "high"] | None = None


class ImagePart(Strict):
    type: Literal["image_url"]
    image_url: ImageURL


class InputAudio(Strict):
    data: str
    format: Literal["wav", "mp3"]


class AudioPart(Strict):
    type: Literal["input_audio"]
    input_audio: InputAudio


class FileData(Strict):
    file_data: str | None = None
    file_id: str | None = None
    filename: str | None = None


class FilePart(Strict):
    type: Literal["file"]
    file: FileData


class RefusalPart(Strict):
    type: Literal["refusal"]
    refusal: str


UserPart = Annotated[TextPart | ImagePart | AudioPart | FilePart, Field(discriminator="type")]
AssistantPart = Annotated[TextPart | RefusalPart, Field(discriminator="type")]


class DeveloperMessage(Strict):
    role: Literal["developer"]
    content: str | list[TextPart]
    name: str | None = None


class SystemMessage(Strict):
    role: Literal["system"]
    content: str | list[TextPart]
    name: str | None = None


class UserMessage(Strict):
    role: Literal["user"]
    content: str | list[UserPart]
    name: str | None = None


class FunctionCall(Strict):
    name: str
    arguments: str


class ToolCall(Strict):
    id: str
    type: Literal["function"]
    function: FunctionCall


class AudioReference(Strict):
    id: str


class AssistantMessage(Strict):
    role: Literal["assistant"]
    content: str | list[AssistantPart] | None = None
    refusal: str | None = None
    name: str | None = None
    audio: AudioReference | None = None
    tool_calls: list[ToolCall] | None = None
    function_call: FunctionCall | None = None


class ToolMessage(Strict):
    role: Literal["tool"]
    content: str | list[TextPart]
    tool_call_id: str


class FunctionMessage(Strict):
    role: Literal["function"]
    content: str | None
    name: str


Message = Annotated[
    DeveloperMessage | SystemMessage | UserMessage | AssistantMessage | ToolMessage | FunctionMessage,
    Field(discriminator="role"),
]


class FunctionDefinition(Strict):
    name: str
    description: str | None = None
    parameters: dict[str, Any] | None = None
    strict: bool | None = None


class FunctionTool(Strict):
    type: Literal["function"]
    function: FunctionDefinition


class CustomToolDefinition(Strict):
    name: str
    description: str | None = None
    format: dict[str, Any] | None = None


class CustomTool(Strict):
    type: Literal["custom"]
    custom: CustomToolDefinition


Tool = Annotated[FunctionTool | CustomTool, Field(discriminator="type")]


class NamedFunction(Strict):
    name: str


class NamedToolChoice(Strict):
    type: Literal["function"]
    function: NamedFunction


class JSONSchemaFormat(Strict):
    name: str
    description: str | None = None
    schema_: dict[str, Any] | None = Field(default=None, alias="schema")
    strict: bool | None = None


class TextFormat(Strict):
    type: Literal["text"]


class JSONObjectFormat(Strict):
    type: Literal["json_object"]


class JSONSchemaResponseFormat(Strict):
    type: Literal["json_schema"]
    json_schema: JSONSchemaFormat


ResponseFormat = Annotated[TextFormat | JSONObjectFormat | JSONSchemaResponseFormat, Field(discriminator="type")]


class StreamOptions(Strict):
    include_usage: bool | None = None
    include_obfuscation: bool | None = None


class ChatRequest(Strict):
    """``POST /v1/chat/completions``'s body."""

    model: str
    messages: list[Message] = Field(min_length=1)
    stream: bool | None = None
    stream_options: StreamOptions | None = None
    service_tier: Literal["auto", "default", "flex", "scale", "priority", "fast", "ultrafast"] | None = None
    tools: list[Tool] | None = None
    tool_choice: Literal["none", "auto", "required"] | NamedToolChoice | None = None
    parallel_tool_calls: bool | None = None
    response_format: ResponseFormat | None = None
    temperature: float | None = Field(default=None, ge=0, le=2)
    top_p: float | None = Field(default=None, ge=0, le=1)
    n: int | None = Field(default=None, ge=1, le=128)
    max_tokens: int | None = None
    max_completion_tokens: int | None = None
    presence_penalty: float | None = Field(default=None, ge=-2, le=2)
    frequency_penalty: float | None = Field(default=None, ge=-2, le=2)
    logit_bias: dict[str, int] | None = None
    logprobs: bool | None = None
    top_logprobs: int | None = Field(default=None, ge=0, le=20)
    seed: int | None = None
    stop: str | list[str] | None = None
    user: str | None = None
    safety_identifier: str | None = None
    prompt_cache_key: str | None = None
    reasoning_effort: Literal["none", "minimal", "low", "medium", "high", "xhigh"] | None = None
    verbosity: Literal["low", "medium", "high"] | None = None
    metadata: dict[str, str] | None = None
    store: bool | None = None
    modalities: list[Literal["text", "audio"]] | None = None
