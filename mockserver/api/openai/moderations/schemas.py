"""The body of ``POST /v1/moderations``, as the API documents it."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

DEFAULT_MODEL = "omni-moderation-latest"


class _Body(BaseModel):
    # Validators built on the first request that reads one (or the OpenAPI document), not at start-up.
    model_config = ConfigDict(extra="forbid", defer_build=True)


class ModerationTextInput(_Body):
    type: Literal["text"]
    text: str


class ModerationImageURL(_Body):
    url: str = Field(description="A URL, or a data URL holding the image.")


class ModerationImageInput(_Body):
    type: Literal["image_url"]
    image_url: ModerationImageURL


ModerationPart = Annotated[ModerationTextInput | ModerationImageInput, Field(discriminator="type")]


class ModerationRequest(_Body):
    """``POST /v1/moderations``: each string is one input; an array of parts is one input."""

    input: str | Annotated[list[str], Field(min_length=1)] | Annotated[list[ModerationPart], Field(min_length=1)]
    model: str = DEFAULT_MODEL
