"""The features of a request that decide the shape of its reply, as a small readable summary."""

from __future__ import annotations

from typing import Any


def _kind(tool: Any) -> str:
    if not isinstance(tool, dict):
        return "?"
    return str(tool.get("type") or ("custom" if "input_schema" in tool else "?"))


def _choice(choice: Any) -> Any:
    if isinstance(choice, dict):
        kind = choice.get("type")
        mode = (choice.get("allowed_tools") or choice).get("mode") if kind == "allowed_tools" else None
        return f"{kind}:{mode}" if mode else kind
    return choice


def _items(endpoint: str, request: dict[str, Any]) -> list[str]:
    """The kinds of the conversation's items in order, a run of the same kind once."""
    kinds: list[str] = []
    if endpoint == "/v1/chat/completions":
        for m in request.get("messages") or []:
            parts = m.get("content") if isinstance(m.get("content"), list) else []
            kinds.append(m.get("role", "?") + (":tool_calls" if m.get("tool_calls") else ""))
            kinds += [f"  {p.get('type')}" for p in parts if isinstance(p, dict) and p.get("type") != "text"]
    elif endpoint == "/v1/responses":
        items = request.get("input")
        if isinstance(items, str):
            return ["text"]
        for item in items or []:
            kind = item.get("type", "message")
            kinds.append(f"{kind}:{item['role']}" if "role" in item else kind)
            parts = item.get("content") if isinstance(item.get("content"), list) else []
            kinds += [f"  {p.get('type')}" for p in parts if isinstance(p, dict) and p.get("type") != "input_text"]
    elif endpoint == "/v1/messages":
        for m in request.get("messages") or []:
            blocks = m.get("content") if isinstance(m.get("content"), list) else [{"type": "text"}]
            kinds += [f"{m.get('role')}:{b.get('type')}" for b in blocks if isinstance(b, dict)]
    elif endpoint == "/v1/embeddings":
        value = request.get("input")
        return ["list" if isinstance(value, list) else "text"]
    collapsed: list[str] = []
    for kind in kinds:
        if not collapsed or collapsed[-1] != kind:
            collapsed.append(kind)
    return collapsed


def features(endpoint: str, stream: bool, request: dict[str, Any]) -> dict[str, Any]:
    text = request.get("text") if isinstance(request.get("text"), dict) else {}
    output = request.get("output_config") if isinstance(request.get("output_config"), dict) else {}
    form = (
        request.get("response_format")
        or (text or {}).get("format")
        or (output or {}).get("format")
        or request.get("output_format")
    )
    reasoning = request.get("reasoning") or request.get("thinking") or request.get("reasoning_effort")
    out = {
        "stream": stream,
        "tools": sorted({_kind(t) for t in request.get("tools") or []}),
        "tool_choice": _choice(request.get("tool_choice")),
        "format": form.get("type") if isinstance(form, dict) else None,
        "stream_options": sorted(k for k, v in (request.get("stream_options") or {}).items() if v),
        "items": _items(endpoint, request),
        "reasoning": {k: v for k, v in reasoning.items() if k != "budget_tokens"}
        if isinstance(reasoning, dict)
        else reasoning,
        "include": sorted(request.get("include") or []),
        "other": sorted(k for k in request if k not in KNOWN_KEYS),
    }
    return {k: v for k, v in out.items() if v not in (None, [], {})}


KNOWN_KEYS = frozenset(
    {"model", "messages", "input", "tools", "tool_choice", "response_format", "text", "output_config", "output_format",
     "stream", "stream_options", "reasoning", "thinking", "reasoning_effort", "include", "instructions", "system",
     "max_tokens", "max_completion_tokens", "max_output_tokens", "temperature"}
)  # fmt: skip
