"""Reading a Responses request: ``input`` items, flat function tools and ``text.format``.

Each item becomes a :data:`ConversationItem` ``(kind, text)``, which is all the
rest needs: its text counts as input tokens, its kind decides whether a tool
result already answers the last user message. A malformed item is refused with a
400 naming the exact ``input[i]...`` path; nothing is stored before that check.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from mockserver import errors
from mockserver.engine import in_turns, tokens
from mockserver.engine.jsonbody import dumps
from mockserver.errors import describe

if TYPE_CHECKING:
    from mockserver.engine.structured import FunctionSpec

# The structured-output engine (its FunctionSpec and JSON writer) is imported where a tool is read: the rate
# limits and the scripts read conversations from start-up on, and the engine loads with the first tool.

MESSAGE_ROLES = ["user", "assistant", "system", "developer"]
# One conversation item as the next turn sees it: (role or item type, text).
ConversationItem = tuple[str, str]

TEXT_FORMATS = ["text", "json_object", "json_schema"]
TOOL_RESULT_KINDS = {"function_call_output", "custom_tool_call_output", "tool", "function"}


def read_input(raw: str | list[Any] | None) -> list[ConversationItem]:
    """The conversation items of ``input``: a string is one user message."""
    if raw is None:
        return []
    if isinstance(raw, str):
        return [("user", raw)]
    return [_read_item(item, f"input[{i}]") for i, item in enumerate(raw)]


async def read_input_in_turns(raw: str | list[Any] | None) -> list[ConversationItem]:
    """:func:`read_input`, the event loop getting its turn between pieces of a long ``input``
    (:func:`mockserver.engine.in_turns.mapped`): the same items, the same error for the first bad one."""
    if not isinstance(raw, list) or len(raw) <= in_turns.ITEMS_PER_TURN:
        return read_input(raw)
    return await in_turns.mapped(lambda i: _read_item(raw[i], f"input[{i}]"), range(len(raw)))


def _read_item(item: Any, where: str) -> ConversationItem:
    if not isinstance(item, Mapping):
        raise errors.invalid_type(where, "an object", describe(item))
    kind = item.get("type", "message" if "role" in item else None)
    if kind is None:
        raise errors.missing_parameter(f"{where}.type")
    if kind == "message":
        role = item.get("role")
        if role is None:
            raise errors.missing_parameter(f"{where}.role")
        if role not in MESSAGE_ROLES:
            raise errors.invalid_value(f"{where}.role", role, MESSAGE_ROLES)
        return str(role), content_text(item.get("content"), f"{where}.content")
    if kind == "function_call":
        for name in ("call_id", "name", "arguments"):
            if not isinstance(item.get(name), str):
                raise _missing_or_type(item, f"{where}.{name}", name)
        return "function_call", f"{item['name']}{item['arguments']}"
    if kind == "function_call_output":
        if "output" not in item:
            raise errors.missing_parameter(f"{where}.output")
        output = item["output"]
        text = output if isinstance(output, str) else content_text(output, f"{where}.output")
        return "function_call_output", text
    if kind == "reasoning":
        summary = item.get("summary", [])
        if not isinstance(summary, list):
            raise errors.invalid_type(f"{where}.summary", "an array", describe(summary))
        return "reasoning", content_text(summary, f"{where}.summary")
    # Other item types (hosted tool calls, item references, ...) are accepted and carry no text.
    return str(kind), ""


def _missing_or_type(item: Mapping[str, Any], where: str, name: str) -> errors.MockAPIError:
    if name not in item:
        return errors.missing_parameter(where)
    return errors.invalid_type(where, "a string", describe(item[name]))


def content_text(content: Any, where: str) -> str:
    """The text of a message's content: a string, or a list of parts with ``text`` (or ``refusal``)."""
    if content is None or isinstance(content, str):
        return content or ""
    if not isinstance(content, list):
        raise errors.invalid_type(where, "one of a string or an array", describe(content))
    pieces = []
    for i, part in enumerate(content):
        if not isinstance(part, Mapping):
            raise errors.invalid_type(f"{where}[{i}]", "an object", describe(part))
        if "type" not in part:
            raise errors.missing_parameter(f"{where}[{i}].type")
        text = part.get("text", part.get("refusal", ""))
        pieces.append(text if isinstance(text, str) else "")
    return "".join(pieces)


def prompt_messages(instructions: str | None, items: Sequence[ConversationItem]) -> list[tokens.PromptMessage]:
    """The messages the model reads, for the prompt count: ``instructions`` as a system message,
    then each item; a tool call counts as an assistant message, its result as a tool message."""
    messages = [tokens.PromptMessage("system", instructions)] if instructions else []
    for kind, text in items:
        messages.append(tokens.PromptMessage(_role(kind), text))
    return messages


def _role(kind: str) -> str:
    """The role an item of this kind (a message's role or an item type) has in the prompt count."""
    return kind if kind in MESSAGE_ROLES else ("tool" if kind in TOOL_RESULT_KINDS else "assistant")


def chat_message(message: Any) -> tokens.PromptMessage:
    """One Chat Completions message (as sent, unchecked) as ``usage.prompt_tokens`` counts it: its role,
    :func:`chat_text` and its ``name``. The window check reads the request with it before the body is
    checked; the reply's usage reads the checked messages through :func:`chat_text` too."""
    if type(message) is not dict:  # a parsed JSON body's objects are dicts (exact type checks: every message)
        return tokens.PromptMessage("", "")
    content, calls = message.get("content"), message.get("tool_calls")
    if calls:
        pairs = []
        for call in calls if isinstance(calls, list) else ():
            function = call.get("function") if isinstance(call, dict) else None
            if isinstance(function, dict):
                pairs.append((_string(function.get("name")), _string(function.get("arguments"))))
        text = chat_text(content, pairs)
    else:
        text = content if type(content) is str else text_of(content)
    role, name = message.get("role"), message.get("name")
    return tokens.PromptMessage(role if type(role) is str else "", text, name if type(name) is str and name else None)


def chat_text(content: Any, tool_calls: Sequence[tuple[str, str]]) -> str:
    """What a Chat message adds to the prompt besides its role and name: its content's text
    (:func:`text_of`: parts' text; images, audio and files add nothing), then each tool call it carries
    as its function's name followed by its arguments."""
    text = text_of(content)
    for name, arguments in tool_calls:
        text += f"{name}{arguments}"
    return text


def responses_prompt(instructions: Any, raw_input: Any) -> list[tokens.PromptMessage] | None:
    """A Responses request's prompt (as sent) as ``usage.input_tokens`` counts it (:func:`read_input`,
    :func:`prompt_messages`); None when ``input`` is malformed (the request is refused for it later)."""
    if raw_input is not None and not isinstance(raw_input, (str, list)):
        return None
    try:
        items = read_input(raw_input)
    except errors.MockAPIError:
        return None
    return prompt_messages(instructions if isinstance(instructions, str) else None, items)


def input_messages(instructions: str | None, raw: Sequence[Any], at: Sequence[int]) -> list[tokens.PromptMessage]:
    """:func:`prompt_messages` of the items of an ``input`` list ``raw`` at the indices ``at``, each read
    as :func:`read_input` reads it (the first malformed one raises its error), and the ``instructions``
    first when ``at`` starts at the input's first item: the prompt of a long input read a piece at a time."""
    messages = [tokens.PromptMessage("system", instructions)] if instructions and at and at[0] == 0 else []
    for i in at:
        kind, text = _read_item(raw[i], f"input[{i}]")
        messages.append(tokens.PromptMessage(_role(kind), text))
    return messages


def text_of(content: Any) -> str:
    """The text of an unchecked ``content``, for estimates: a string as it is, or what each part of a
    list adds to the prompt (:func:`block_text`). :func:`content_text` checks it instead."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(block_text(part) for part in content if isinstance(part, Mapping))
    return ""


def system_text(blocks: Any) -> str:
    """An Anthropic system prompt given as text blocks: their texts, one per line, as its usage counts it."""
    if not isinstance(blocks, list):
        return ""
    return "\n".join(block_text(block) for block in blocks if isinstance(block, Mapping))


def block_text(part: Mapping[str, Any]) -> str:
    """What one content part or block adds to the prompt's count; the same for the estimate made before
    planning and for the reply's usage, which reads the checked blocks with it.

    - ``text`` (and OpenAI's text parts): its ``text``;
    - Anthropic's ``tool_use``: the tool's name and its ``input`` as compact JSON;
    - ``thinking``: its ``thinking`` text (``redacted_thinking`` is encrypted: nothing readable, 0 tokens);
    - ``tool_result`` and ``search_result``: the text of their own ``content`` blocks (a search result's
      title too); a ``document``: its plain-text source's ``data`` or its content blocks' text;
    - images, PDF documents and server tool blocks: nothing (their tokens are not estimated).
    """
    kind = part.get("type")
    if kind == "tool_result":
        return text_of(part.get("content"))
    if kind == "tool_use":
        name, arguments = part.get("name"), part.get("input")
        if not isinstance(name, str) or not isinstance(arguments, Mapping):
            return ""
        return f"{name}{dumps(arguments)}"
    if kind == "thinking":
        return _string(part.get("thinking"))
    if kind == "search_result":
        return _string(part.get("title")) + text_of(part.get("content"))
    if kind == "document":
        source = part.get("source")
        if not isinstance(source, Mapping):
            return ""
        if source.get("type") == "text":
            return _string(source.get("data"))
        return text_of(source.get("content")) if source.get("type") == "content" else ""
    return str(part.get("text", ""))


def _string(value: Any) -> str:
    return value if isinstance(value, str) else ""


def answered(items: Sequence[ConversationItem]) -> bool:
    """Whether a tool result follows the last user message."""
    for kind, _ in _after_last_user(items):  # a loop rather than any(): no generator, on every request's path
        if kind in TOOL_RESULT_KINDS:
            break
    else:
        return False
    return True


def tool_results(items: Sequence[ConversationItem]) -> list[str]:
    """The texts of the tool results that follow the last user message, which the answer reports."""
    return [text for kind, text in _after_last_user(items) if kind in TOOL_RESULT_KINDS]


def _after_last_user(items: Sequence[ConversationItem]) -> Sequence[ConversationItem]:
    """The items after the last user message that says something (all of them if there is none), looked
    for from the end. A user message of images or files alone does not count: frameworks send a tool's
    returned image or document so, right after its result, and the live model reads it as that result."""
    for index in range(len(items) - 1, -1, -1):
        kind, text = items[index]
        if kind == "user" and text and not text.isspace():  # what text.strip() finds non-empty, without a copy
            return items[index + 1 :]
    return items


def system_texts(items: Sequence[ConversationItem]) -> list[str]:
    """The texts of the system and developer messages."""
    return [text for kind, text in items if kind in ("system", "developer")]


def function_tools(tools: Sequence[Mapping[str, Any]] | None) -> list[FunctionSpec]:
    """The flat function tools of a Responses request; other tool types are accepted and never called."""
    specs = []
    for i, tool in enumerate(tools or []):
        if tool.get("type") is None:
            raise errors.missing_parameter(f"tools[{i}].type")
        if tool.get("type") == "function":
            # A missing name here is usually Chat's nested {"type": "function", "function": {...}} layout.
            specs.append(function_spec(tool, f"tools[{i}]"))
    return specs


def function_spec(definition: Mapping[str, Any], where: str) -> FunctionSpec:
    """A function definition's name and parameters, checked; ``where`` is its place in the request."""
    name = definition.get("name")
    if not isinstance(name, str) or not name:
        raise errors.missing_parameter(f"{where}.name")
    parameters = definition.get("parameters")
    if parameters is not None and not isinstance(parameters, Mapping):
        raise errors.invalid_type(f"{where}.parameters", "an object", describe(parameters))
    description = definition.get("description")
    described = description if isinstance(description, str) else ""
    from mockserver.engine.structured import FunctionSpec

    return FunctionSpec(name, parameters or {}, f"{where}.parameters", described)


def tool_definition_tokens(tools: Sequence[Any] | None) -> int:
    """Tool definitions count as input, as on the live API: the o200k tokens of their JSON (the
    live API renders them in its own format, so this is close, not exact)."""
    if not tools:
        return 0
    definitions = dumps(list(tools))
    return _tools_tokens(definitions) if len(definitions) <= _REMEMBERED_TOOLS_CHARS else tokens.count(definitions)


# A test run sends the same tools with request after request, and each request counts them more than
# once (its usage, the prompt cache's check): the counts of definitions up to this long are remembered,
# at most this many (so at most about 16 MB of JSON).
_REMEMBERED_TOOLS_CHARS = 65_536
_REMEMBERED_TOOLS = 256


@functools.lru_cache(maxsize=_REMEMBERED_TOOLS)
def _tools_tokens(definitions: str) -> int:
    return tokens.count(definitions)


def output_format(fmt: Mapping[str, Any] | None, prompt_texts: Sequence[str], *, param: str) -> dict[str, Any]:
    """The validated ``text.format`` (or ``response_format``), defaulting to plain text."""
    if fmt is None:
        return {"type": "text"}
    kind = fmt.get("type")
    if kind is None:
        raise errors.missing_parameter(f"{param}.type")
    if kind not in TEXT_FORMATS:
        raise errors.invalid_value(f"{param}.type", kind, TEXT_FORMATS)
    if kind == "json_object" and not any("json" in t.lower() for t in prompt_texts):
        raise errors.InvalidRequestError(
            f"Response input messages must contain the word 'json' in some form to use '{param}' of type "
            "'json_object'.",
            param="input",
        )
    if kind == "json_schema":
        for name in ("name", "schema"):
            if name not in fmt:
                raise errors.missing_parameter(f"{param}.{name}")
        if not isinstance(fmt["schema"], Mapping):
            raise errors.invalid_type(f"{param}.schema", "an object", describe(fmt["schema"]))
    return dict(fmt)
