"""What a fault is, where it applies, and the one-line syntax shared by the header and the fixture.

A fault is written the same way everywhere: in the ``x-mock-fault`` request
header, as a string in the fixture's ``faults:`` section, in the pytest marker
and in ``configure(faults=...)``. Items are separated by ``;`` or spaces; each is
``name=value`` or a bare flag::

    status=429                       an HTTP error with the live API's body and retry headers
    status=429;code=insufficient_quota;retry=false
    once status=503                  only the first matching request (per x-mock-test-id), then success
    drop_after=5                     close the connection after 5 token events (a transport error)
    error_event_after=3              an error event in the stream after 3 token events
    stall_ms=2000;at=mid             the stream stops for 2 s after its first token event
    stall                            the reply never comes (until the client gives up)
    truncate                         the stream ends cleanly but without [DONE] / response.completed
    truncate=4                       the stream ends cleanly after 4 token events
    ttft_ms=1500                     the reply (headers included) starts 1.5 s late
    none                             no fault, whatever the fixture's rules or probability say

Fault durations are real milliseconds: they are not scaled by ``time_scale``,
because they exist to trip client timeouts. Every number must be finite and bounded
(an hour for durations and ``retry_after``, a million for token-event counts), so a
typo cannot park a worker forever or put ``inf`` in a header.
"""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from mockserver.config import suggestions
from mockserver.config.patterns import compile_pattern
from mockserver.errors.variants import check_variant

FAULT_HEADER = "x-mock-fault"
# Bounds that keep a typo (or 1e309) from parking a worker forever or sending ``retry-after-ms: inf``.
MAX_RETRY_AFTER_S = 3600.0
MAX_DURATION_MS = 3_600_000.0  # one hour, for stall_ms and ttft_ms
MAX_TOKEN_EVENTS = 1_000_000  # drop_after, error_event_after, truncate=N, at=N
MAX_TIMES = 1_000_000
_FLAGS = {"once": ("times", 1), "truncate": ("truncate", True), "stall": ("stall", True), "none": ("none", True)}
_SEPARATORS = re.compile(r"[;,\s]+")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class FaultSyntaxError(ValueError):
    """A fault string that cannot be read; the message names the item at fault."""


def parse_fault(text: str) -> dict[str, Any]:
    """``"once status=503"`` -> ``{"times": 1, "status": "503"}``. Values stay strings; the model types them."""
    fields: dict[str, Any] = {}
    for item in _SEPARATORS.split(text.strip()):
        if not item:
            continue
        name, sep, value = item.partition("=")
        name = name.strip().lower().replace("-", "_")
        if not sep:
            if name in FaultSpec.model_fields and name not in _FLAGS:  # a field written without its value
                raise FaultSyntaxError(f"'{item}' needs a value: {name}=...")
            if name not in _FLAGS:
                raise FaultSyntaxError(suggestions.unknown(item, [*_FLAGS, *FaultSpec.model_fields], "fault"))
            key, flag = _FLAGS[name]
            fields[key] = flag
            continue
        if not name or not value:
            raise FaultSyntaxError(f"'{item}' needs a name and a value")
        if name in fields:
            raise FaultSyntaxError(f"'{name}' is given twice")
        fields[name] = value
    if not fields:
        raise FaultSyntaxError("the fault is empty")
    return fields


class FaultSpec(_Strict):
    """One fault. At most one of ``status``, ``drop_after``, ``error_event_after`` and ``truncate``;
    ``stall``/``stall_ms`` and ``ttft_ms`` can be added to any of them."""

    status: int | None = Field(default=None, ge=400, le=599, description="Answer with this HTTP error status.")
    code: str | None = Field(
        default=None,
        pattern=r"^[a-z0-9_]+$",
        description="Which error of that status (e.g. 429 insufficient_quota); also the code of an error event.",
    )
    retry_after: float | None = Field(
        default=None,
        ge=0,
        le=MAX_RETRY_AFTER_S,
        allow_inf_nan=False,
        description="Seconds sent in retry-after / retry-after-ms, verbatim. Unset: 1 s times the time scale.",
    )
    retry: bool | None = Field(default=None, description="Send x-should-retry: true / false.")
    drop_after: int | None = Field(
        default=None, ge=0, le=MAX_TOKEN_EVENTS, description="Close the connection after N token events."
    )
    error_event_after: int | None = Field(
        default=None, ge=0, le=MAX_TOKEN_EVENTS, description="Send an error event after N token events."
    )
    error_form: Literal["flat", "nested"] = Field(
        default="flat",
        description="Responses error event: the documented flat fields, or the nested form the live API sends.",
    )
    truncate: bool | int | None = Field(
        default=None, description="true: end without [DONE] / response.completed; N: end cleanly after N token events."
    )
    stall: bool | None = Field(default=None, description="Stop sending until the client goes away.")
    stall_ms: float | None = Field(
        default=None,
        ge=0,
        le=MAX_DURATION_MS,
        allow_inf_nan=False,
        description="Stop sending for this many milliseconds.",
    )
    at: Literal["first", "mid"] | int = Field(
        default="first",
        description="Where a stall happens: before the first event, after the first token event, or after N.",
    )
    ttft_ms: float | None = Field(
        default=None,
        ge=0,
        le=MAX_DURATION_MS,
        allow_inf_nan=False,
        description="Delay the whole reply, headers included.",
    )
    times: int | None = Field(
        default=None, ge=1, le=MAX_TIMES, description="Fire for the first N matching requests only ('once' = 1)."
    )
    none: bool | None = Field(default=None, description="Explicitly no fault (the header overrides rules).")

    @model_validator(mode="before")
    @classmethod
    def _from_string(cls, value: Any) -> Any:
        if isinstance(value, str):
            try:
                return parse_fault(value)
            except FaultSyntaxError as exc:
                raise ValueError(str(exc)) from None
        return value

    @field_validator("at", mode="before")
    @classmethod
    def _at_number(cls, value: Any) -> Any:
        if isinstance(value, str) and value.isdigit():
            return int(value)
        return value

    @field_validator("truncate", mode="before")
    @classmethod
    def _truncate_value(cls, value: Any) -> Any:
        if isinstance(value, str):
            lowered = value.lower()
            if lowered in ("true", "false"):
                return lowered == "true"
            if value.isdigit():
                value = int(value)
        if isinstance(value, int) and not isinstance(value, bool) and not 0 <= value <= MAX_TOKEN_EVENTS:
            raise ValueError(f"must be true or a number of token events (0 to {MAX_TOKEN_EVENTS})")
        return value

    @model_validator(mode="after")
    def _consistent(self) -> FaultSpec:
        if self.none:
            others = self.model_dump(exclude_defaults=True, exclude={"none"})
            if others:
                raise ValueError(f"'none' cannot be combined with {', '.join(sorted(others))}")
            return self
        names = ("status", "drop_after", "error_event_after", "truncate")
        endings = [n for n in names if getattr(self, n) is not None and getattr(self, n) is not False]
        if len(endings) > 1:
            raise ValueError(f"choose one of {', '.join(endings)}")
        if self.status is not None and (self.stall or self.stall_ms is not None):
            raise ValueError("status cannot be combined with a stall; use ttft_ms to delay an error")
        if not endings and not self.stall and self.stall_ms is None and self.ttft_ms is None:
            raise ValueError(
                "no fault given: set status, drop_after, error_event_after, truncate, stall, stall_ms or ttft_ms"
            )
        if self.code is not None and self.status is not None:
            check_variant(self.status, self.code)
        if self.code is not None and self.status is None and self.error_event_after is None:
            raise ValueError("code applies to status or error_event_after")
        if isinstance(self.at, int) and not 0 <= self.at <= MAX_TOKEN_EVENTS:
            raise ValueError(f"at must be 'first', 'mid' or a number of token events (0 to {MAX_TOKEN_EVENTS})")
        return self

    @property
    def is_none(self) -> bool:
        return bool(self.none)

    @property
    def delivers_whole_reply(self) -> bool:
        """Whether the client still gets the entire reply, only later (a slow start or a bounded stall)."""
        cut_short = self.drop_after is not None or self.error_event_after is not None or self.truncate
        return self.status is None and not cut_short and not self.stall

    @property
    def stalls(self) -> bool:
        return bool(self.stall) or self.stall_ms is not None

    @property
    def stall_after(self) -> int:
        """Token events sent before the stall; -1 means before the very first event."""
        if self.at == "first":
            return -1
        if self.at == "mid":
            return 1
        return int(self.at)

    def describe(self) -> str:
        """The canonical one-line form, as recorded in the journal."""
        parts = []
        for name, value in self.model_dump(exclude_defaults=True).items():
            if value is True:
                parts.append(name)
            else:
                parts.append(f"{name}={_plain(value)}")
        return ";".join(parts)


def _plain(value: Any) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, bool):
        return str(value).lower()
    return str(value)


class FaultMatch(_Strict):
    """Which requests a fixture rule applies to. Every field set must match; none set matches all."""

    model: str | None = Field(default=None, description="The model id as requested.")
    tier: Literal["default", "priority", "flex", "ultrafast"] | None = Field(
        default=None, description="The tier that serves the request (after resolution)."
    )
    key: str | None = Field(default=None, description="The API key.")
    path: str | None = Field(default=None, description="A path prefix, e.g. /v1/responses.")
    message: str | None = Field(
        default=None, description="A regular expression (RE2 syntax, linear time) searched in the request's text."
    )

    @field_validator("message")
    @classmethod
    def _compiles(cls, value: str | None) -> str | None:
        if value is not None:
            compile_pattern(value)  # refused here, at load time, rather than on the first request
        return value


class FaultRule(_Strict):
    """A fixture rule: requests that ``match`` get ``fault``, ``count`` times (``once``) or always."""

    match: FaultMatch = Field(default_factory=FaultMatch)
    fault: FaultSpec
    count: int | Literal["once"] | None = Field(
        default=None, description="'once', a number of requests, or null: always."
    )

    @field_validator("count")
    @classmethod
    def _positive(cls, value: int | str | None) -> int | str | None:
        if isinstance(value, int) and value < 1:
            raise ValueError("count must be 'once' or a number of 1 or more")
        return value

    @property
    def times(self) -> int | None:
        if self.count == "once":
            return 1
        if isinstance(self.count, int):
            return self.count
        return self.fault.times


class Faults(_Strict):
    """The fixture's ``faults:`` section."""

    rules: list[FaultRule] = Field(default_factory=list, description="Checked in order; the first match wins.")
    probability: float = Field(
        default=0.0,
        ge=0,
        le=1,
        allow_inf_nan=False,
        description="Chance that any other inference request gets a fault from 'choices'.",
    )
    choices: list[FaultSpec] = Field(
        default_factory=lambda: [FaultSpec(status=500)],
        min_length=1,
        description="The faults drawn (uniformly, from the seeded random source) when 'probability' fires.",
    )
