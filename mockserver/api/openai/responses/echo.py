"""What a ``Response`` object reports back of its request: the settings in force and the tools.

The live API echoes every setting, the request's value or the default in force: the penalties,
the reasoning effort (and on current models its ``context`` and ``mode``, from the model's fixture
entry), the verbosity, the prompt cache's retention. Tools come back as sent, with the fields the API
fills in (a function's ``description``, ``output_schema`` and ``strict``; a hosted tool's options:
``web_search``'s ``filters`` and ``return_token_budget``, but not ``web_search_preview``'s; the image
model ``image_generation`` uses), and without the request-only ``external_web_access`` and
``image_generation``'s ``input_fidelity`` and ``partial_images``, which live replies leave out.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from collections.abc import Set as AbstractSet
from typing import Any

from mockserver.api.openai.schemas import ResponseCreateRequest
from mockserver.config.models import ModelSpec
from mockserver.service.access import Admission

# What the API fills in for each hosted tool's options the request leaves out.
_WEB_SEARCH_DEFAULTS: Mapping[str, Any] = {
    "filters": None,
    "search_context_size": "medium",
    "return_token_budget": "default",
}
_WEB_SEARCH_PREVIEW_DEFAULTS: Mapping[str, Any] = {"search_context_size": "medium"}  # no filters, no budget
_USER_LOCATION_DEFAULTS: Mapping[str, Any] = {
    "type": "approximate",
    "city": None,
    "country": "US",
    "region": None,
    "timezone": None,
}
_IMAGE_GENERATION_DEFAULTS: Mapping[str, Any] = {
    "background": "auto",
    "model": "gpt-image-1",
    "moderation": "auto",
    "n": 1,
    "output_compression": 100,
    "output_format": "png",
    "quality": "auto",
    "size": "auto",
}
_ECHO_GROUPS = {"function": 0, "namespace": 2}  # the tools echo's order: functions, hosted tools, namespaces
_REQUEST_ONLY = frozenset({"external_web_access"})  # accepted, never echoed
_IMAGE_REQUEST_ONLY = frozenset({"input_fidelity", "partial_images"})  # image_generation options never echoed


def settings(
    body: ResponseCreateRequest,
    admission: Admission,
    fmt: dict[str, Any],
    effort: str | None,
    *,
    loaded: AbstractSet[str] = frozenset(),
    added: Sequence[Mapping[str, Any]] = (),
) -> dict[str, Any]:
    """The request's settings as the ``Response`` object reports them (every state of it alike).
    ``loaded``: the deferred functions a tool search's output in the conversation loaded, by name;
    ``added``: the functions ``additional_tools`` input items added, each listed in a namespace of its name."""
    model = admission.model
    return {
        "background": bool(body.background),
        "frequency_penalty": body.frequency_penalty if body.frequency_penalty is not None else 0.0,
        "instructions": body.instructions,
        "max_output_tokens": body.max_output_tokens,
        "max_tool_calls": body.max_tool_calls,
        "metadata": body.metadata or {},
        "model": model.id,
        "moderation": None,
        "parallel_tool_calls": body.parallel_tool_calls if body.parallel_tool_calls is not None else True,
        "presence_penalty": body.presence_penalty if body.presence_penalty is not None else 0.0,
        "previous_response_id": body.previous_response_id,
        "prompt_cache_key": body.prompt_cache_key,
        "prompt_cache_retention": body.prompt_cache_retention or model.prompt_cache_retention,
        "reasoning": reasoning(body, model, effort),
        "safety_identifier": body.safety_identifier,
        "service_tier": admission.tier.tier,
        "store": body.store is not False,
        "temperature": body.temperature if body.temperature is not None else 1.0,
        "text": {"format": _format(fmt), "verbosity": (body.text.verbosity if body.text else None) or "medium"},
        "tool_choice": body.tool_choice if body.tool_choice is not None else "auto",
        "tools": tools(body.tools or (), loaded) + [_own_namespace(tool(f)) for f in added],
        "top_logprobs": body.top_logprobs or 0,
        "top_p": body.top_p if body.top_p is not None else 1.0,
        "truncation": body.truncation or "disabled",
        "user": body.user,
    }


def _format(fmt: dict[str, Any]) -> dict[str, Any]:
    """``text.format`` as reported: a ``json_schema`` format with its ``description`` (null when unsent)."""
    return {"description": None, **fmt} if fmt.get("type") == "json_schema" else fmt


def reasoning(body: ResponseCreateRequest, model: ModelSpec, effort: str | None) -> dict[str, Any]:
    """``reasoning``: the effort in force (the model's reported default when nothing sets one) and the
    summary asked for; on a model whose fixture entry has ``reasoning_context``, its context and mode too."""
    sent = body.reasoning
    summary = sent.summary_style if sent else None
    if effort is None and model.reasoning:
        effort = model.reported_effort
    if model.reasoning_context is None:
        return {"effort": effort, "summary": summary}
    return {
        "context": (sent.context if sent else None) or model.reasoning_context,
        "effort": effort,
        "mode": (sent.mode if sent else None) or model.reasoning_mode,
        "summary": summary,
    }


def tools(sent: Sequence[Mapping[str, Any]], loaded: AbstractSet[str] = frozenset()) -> list[dict[str, Any]]:
    """The ``tools`` list as live replies order it: the functions first, then the hosted tools, then the
    namespaces (a loaded function's among them), each group in the order sent."""
    echoed = [tool(t, loaded=loaded) for t in sent]
    return sorted(echoed, key=lambda t: _ECHO_GROUPS.get(str(t.get("type")), 1))


def tool(sent: Mapping[str, Any], *, loaded: AbstractSet[str] = frozenset()) -> dict[str, Any]:
    """One tool as the ``Response`` object lists it: as sent, with the fields the API fills in. A
    function sent with ``defer_loading`` stays so until a tool search has ``loaded`` it; then it is
    listed in a namespace of its own name."""
    kind = sent.get("type")
    echoed = {k: v for k, v in sent.items() if k not in _REQUEST_ONLY}
    if kind == "function":
        function = {"description": None, "output_schema": None, "strict": True, **echoed}
        if not (function.get("defer_loading") and function.get("name") in loaded):
            return function
        del function["defer_loading"]
        return _own_namespace(function)
    if kind == "namespace":
        nested = echoed.get("tools")
        if isinstance(nested, list):
            echoed["tools"] = [tool(t) if isinstance(t, Mapping) else t for t in nested]
        return echoed
    if kind == "tool_search":
        return {"description": None, "parameters": None, **echoed}
    if kind in ("web_search", "web_search_2025_08_26", "web_search_preview"):
        location = echoed.get("user_location")
        located = {**_USER_LOCATION_DEFAULTS, **location} if isinstance(location, Mapping) else _USER_LOCATION_DEFAULTS
        offline = {"search_content_types": ["text"]} if sent.get("external_web_access") is False else {}
        defaults = _WEB_SEARCH_PREVIEW_DEFAULTS if kind == "web_search_preview" else _WEB_SEARCH_DEFAULTS
        return {**defaults, **offline, **echoed, "user_location": dict(located)}
    if kind == "image_generation":
        return {**_IMAGE_GENERATION_DEFAULTS, **{k: v for k, v in echoed.items() if k not in _IMAGE_REQUEST_ONLY}}
    return echoed


def _own_namespace(function: dict[str, Any]) -> dict[str, Any]:
    """A function listed as the live API lists one a tool search loaded or an ``additional_tools`` item
    added: in a namespace of its own name and description."""
    name, description = function.get("name"), function.get("description") or ""
    return {"type": "namespace", "name": name, "description": description, "tools": [function]}


def tool_usage(web_searches: int = 0, image_tokens: int = 0) -> dict[str, Any]:
    """``tool_usage``: what the hosted tools used, per tool (the live API lists both, used or not):
    the web searches made, and the image tokens the generated images took."""
    return {
        "image_gen": {
            "input_tokens": 0,
            "input_tokens_details": {"image_tokens": 0, "text_tokens": 0},
            "output_tokens": image_tokens,
            "output_tokens_details": {"image_tokens": image_tokens, "text_tokens": 0},
            "total_tokens": image_tokens,
        },
        "web_search": {"num_requests": web_searches},
    }
