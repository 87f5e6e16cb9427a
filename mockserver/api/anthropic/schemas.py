"""Request bodies of the Messages API, as Anthropic documents them.

Unknown fields are refused (``foo: Extra inputs are not permitted``), as the live API does.
Content blocks, tools and ``tool_choice`` are read by :mod:`.turns` and :mod:`.messages`, which
refuse malformed ones with a message naming their place.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field


class _Body(BaseModel):
    # Validators built on the first request that reads one (or the OpenAPI document), not at start-up.
    model_config = ConfigDict(extra="forbid", defer_build=True)


class MessageParam(_Body):
    role: Literal["user", "assistant", "system"]  # system: mid-conversation instructions
    content: str | list[dict[str, Any]]


class CountTokensRequest(_Body):
    """``POST /v1/messages/count_tokens``: what would be sent to ``/v1/messages``, minus the output settings."""

    model: str
    messages: list[MessageParam]
    system: str | list[dict[str, Any]] | None = None
    tools: list[dict[str, Any]] | None = None
    tool_choice: dict[str, Any] | None = None
    thinking: dict[str, Any] | None = None
    output_config: dict[str, Any] | None = None
    output_format: dict[str, Any] | None = None  # the older place of output_config.format
    speed: Literal["standard", "fast"] | None = None
    mcp_servers: Any = None
    context_management: Any = None
    cache_control: Any = None


class MessagesRequest(CountTokensRequest):
    """``POST /v1/messages``."""

    max_tokens: int = Field(ge=0)  # 0 only warms the prompt cache: no content
    stream: bool | None = None
    stop_sequences: list[str] | None = None
    temperature: float | None = Field(default=None, ge=0, le=1)
    top_p: float | None = Field(default=None, ge=0, le=1)
    top_k: int | None = Field(default=None, ge=0)
    metadata: dict[str, Any] | None = None
    service_tier: Literal["auto", "standard_only"] | None = None
    container: Any = None
    inference_geo: str | None = None
    diagnostics: Any = None
