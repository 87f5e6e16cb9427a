"""``POST /v1/responses/input_tokens``: the input tokens a response would be billed, without making it.

The count is the one ``usage.input_tokens`` reports for the same request: the same
estimate, the same earlier turns (``previous_response_id``), the same tool definitions.
The content is checked as ``POST /v1/responses`` checks it, so a request this endpoint
accepts is one that endpoint accepts too. With ``truncation: "auto"`` and a ``model``, the count is of
what that model would read once the conversation is fitted to its window
(:mod:`mockserver.api.openai.responses.prompt_fit`); this endpoint takes no output limit, so it is the
count of a ``POST /v1/responses`` without ``max_output_tokens``.
"""

from __future__ import annotations

from typing import Any

from mockserver.api.openai.responses import lifecycle, prompt_fit
from mockserver.api.openai.schemas import InputTokenCountRequest
from mockserver.config.fixture import Account
from mockserver.engine.conversation import function_tools, output_format
from mockserver.engine.structured import check_tool_choice
from mockserver.server_state import ServerState
from mockserver.service import access
from mockserver.state.responses import StoredResponse


async def input_token_count(
    state: ServerState,
    account: Account,
    body: InputTokenCountRequest,
    previous: StoredResponse | None = None,
) -> dict[str, Any]:
    """``previous``: the stored response ``previous_response_id`` names (:func:`lifecycle.earlier_turn`)."""
    model = access.inference_model(state.fixture, account, body.model) if body.model is not None else None
    context = prompt_fit.read_context(body.input, body.previous_response_id, previous)
    functions = function_tools(body.tools)
    check_tool_choice(functions, body.tool_choice, hosted=len(body.tools or ()) > len(functions))
    texts = [body.instructions or "", *(text for _, text in context)]
    output_format(body.text.format if body.text else None, texts, param="text.format")
    if model is not None and body.truncation == "auto":
        fitted = await prompt_fit.fit(
            model, {}, context, instructions=body.instructions, tools=body.tools, truncation="auto"
        )
        count = fitted.input_tokens
    else:
        count = lifecycle.count_input_tokens(body.instructions, context, body.tools)
    return {"object": "response.input_tokens", "input_tokens": count}
