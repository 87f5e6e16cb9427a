"""Every inference route is the one pipeline served with its API family, and each family words a body
it cannot read as its API does, through the one parser."""

from __future__ import annotations

import asyncio
import json

import pytest
from starlette.requests import Request

from mockserver import errors
from mockserver.api.anthropic.messages_family import MESSAGES
from mockserver.api.anthropic.schemas import MessagesRequest
from mockserver.api.family import Family
from mockserver.api.handler_inputs import parse_body
from mockserver.api.openai.chat.family import CHAT_COMPLETIONS
from mockserver.api.openai.responses.family import RESPONSES_FAMILY
from mockserver.api.openai.schemas import ChatCompletionRequest, ResponseCreateRequest
from mockserver.config.settings import Settings
from mockserver.engine import dialects
from mockserver.server.app import create_app

FAMILIES: list[tuple[Family, dialects.Dialect, type]] = [
    (CHAT_COMPLETIONS, dialects.CHAT, ChatCompletionRequest),
    (RESPONSES_FAMILY, dialects.RESPONSES, ResponseCreateRequest),
    (MESSAGES, dialects.ANTHROPIC, MessagesRequest),
]


@pytest.mark.parametrize(("family", "dialect", "model"), FAMILIES)
def test_each_family_names_its_dialect_and_model(family: Family, dialect: dialects.Dialect, model: type) -> None:
    assert family.dialect is dialect
    assert family.request_model is model


def _parsed(body: bytes, family: Family) -> errors.MockAPIError:
    app = create_app(Settings())

    async def receive() -> dict[str, object]:
        return {"type": "http.request", "body": body, "more_body": False}

    scope = {"type": "http", "app": app, "headers": [], "state": {}, "method": "POST", "path": "/"}
    request = Request(scope, receive)
    with pytest.raises(errors.MockAPIError) as refused:
        asyncio.run(parse_body(request, family.request_model, family.wording))
    return refused.value


def test_a_body_missing_a_field_is_worded_as_each_api_words_it() -> None:
    body = json.dumps({"model": "m", "messages": [{"role": "user", "content": "hi"}]}).encode()
    assert _parsed(body, MESSAGES).message == "max_tokens: Field required"
    assert _parsed(b"", CHAT_COMPLETIONS).message == "You must provide a model parameter."
    assert _parsed(b"", MESSAGES).message == "The request body must be a JSON object."
    assert _parsed(b"{nope", MESSAGES).message.endswith("not valid JSON.")
