"""The fixture's ``moderation:`` section: which inputs ``POST /v1/moderations`` flags, and for what.

::

    moderation:
      rules:
        - pattern: "(?i)\\bkill\\b"            # RE2 syntax, searched in each text input
          categories: [violence]
        - pattern: "(?i)forbidden\\.png"       # searched in an image input's URL
          categories: [sexual]
          input_types: [image]
          score: 0.97

Nothing is flagged by default: an input that no rule matches gets every category ``false``
with low scores. How a result is built is :mod:`mockserver.engine.moderation`.
"""

from __future__ import annotations

from typing import Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from mockserver.config.patterns import compile_pattern

# The categories the live model also scores for images; the others apply to text only.
IMAGE_CATEGORIES = frozenset(
    {"self-harm", "self-harm/intent", "self-harm/instructions", "sexual", "violence", "violence/graphic"}
)
MAX_RULES = 256

Category = Literal[
    "harassment",
    "harassment/threatening",
    "hate",
    "hate/threatening",
    "illicit",
    "illicit/violent",
    "self-harm",
    "self-harm/intent",
    "self-harm/instructions",
    "sexual",
    "sexual/minors",
    "violence",
    "violence/graphic",
]
InputType = Literal["text", "image"]
# The categories of omni-moderation-latest, in the order the live API lists them.
CATEGORIES: tuple[str, ...] = get_args(Category)


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


def _text_only() -> list[InputType]:
    return ["text"]


class ModerationRule(_Strict):
    """Inputs whose text (or image URL) ``pattern`` matches are flagged in ``categories``."""

    pattern: str = Field(
        min_length=1, description="A regular expression (RE2 syntax, linear time) searched in the input."
    )
    categories: list[Category] = Field(min_length=1, description="The categories this rule flags.")
    input_types: list[InputType] = Field(
        default_factory=_text_only,
        min_length=1,
        description="Which inputs the pattern is searched in: 'text', and/or 'image' (its URL or data URL).",
    )
    score: float = Field(default=0.95, gt=0.5, le=1.0, description="The category_scores value of a flagged category.")

    @field_validator("pattern")
    @classmethod
    def _compiles(cls, value: str) -> str:
        compile_pattern(value)  # refused when the fixture is loaded rather than on the first request
        return value

    @model_validator(mode="after")
    def _image_categories(self) -> ModerationRule:
        if "image" in self.input_types:
            text_only = [c for c in self.categories if c not in IMAGE_CATEGORIES]
            if text_only:
                raise ValueError(
                    f"images are scored only in {', '.join(sorted(IMAGE_CATEGORIES))}; not {', '.join(text_only)}"
                )
        return self


class Moderation(_Strict):
    """What ``/v1/moderations`` flags. Every rule that matches an input adds its categories."""

    rules: list[ModerationRule] = Field(
        default_factory=list, max_length=MAX_RULES, description="Rules tried on every input; none by default."
    )
