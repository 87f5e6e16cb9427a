"""Send a recorded request to the generator, changing only the model and the key.

The OpenAI requests go to a server on the built-in fixture, as ``gpt-5.6-sol`` (embeddings as
``text-embedding-3-small``); the Messages requests to a server with a Claude model, the first that
its Anthropic-shaped ``GET /v1/models`` lists. Everything else is sent as recorded: the endpoint, the
query, the stream flag, the tools, the formats, the ``anthropic-version``.
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass

import httpx

from mockserver.recording.conformance.compare import Reply
from mockserver.recording.conformance.defaults import (
    DEFAULT_KEY,
    DEFAULT_OPENAI_MODEL,
    DEFAULT_TIMEOUT_S,
    EMBEDDINGS_MODEL,
)
from mockserver.recording.conformance.pairs import OK, Pair
from mockserver.recording.conformance.shapes import EMBEDDINGS, MESSAGES, parse_sse

ANTHROPIC_VERSION = "2023-06-01"
CONNECT_TIMEOUT_S = 5.0
ERROR_CHARS = 300


class GeneratorError(RuntimeError):
    """The generator cannot be used: unreachable, or it lists no model to send Messages requests to."""


@dataclass(frozen=True)
class Target:
    openai: str  # base URL, without /v1
    anthropic: str
    key: str = DEFAULT_KEY
    openai_model: str = DEFAULT_OPENAI_MODEL
    timeout_s: float = DEFAULT_TIMEOUT_S


class Sender:
    def __init__(self, target: Target) -> None:
        self.target = target
        self.client = httpx.Client(timeout=httpx.Timeout(target.timeout_s, connect=CONNECT_TIMEOUT_S))
        self.claude = self._claude()

    def __enter__(self) -> Sender:
        return self

    def __exit__(self, *exc: object) -> None:
        self.client.close()

    def _claude(self) -> str:
        url = self.target.anthropic.rstrip("/") + "/v1/models"
        try:
            reply = self.client.get(url, headers={"x-api-key": self.target.key, "anthropic-version": ANTHROPIC_VERSION})
            reply.raise_for_status()
            ids = [m.get("id") for m in reply.json().get("data") or []]
        except (httpx.HTTPError, ValueError, AttributeError) as exc:
            raise GeneratorError(f"cannot list the models of {url}: {exc}") from exc
        found = [i for i in ids if i and "claude" in i] or [i for i in ids if i]
        if not found:
            raise GeneratorError(f"{url} lists no model to send the Messages requests to")
        return str(found[0])

    def send(self, pair: Pair) -> Reply:
        body = copy.deepcopy(pair.request)
        if pair.endpoint == MESSAGES:
            base = self.target.anthropic
            body["model"] = self.claude
            headers = {"x-api-key": self.target.key, "anthropic-version": pair.anthropic_version or ANTHROPIC_VERSION}
            if pair.anthropic_beta:
                headers["anthropic-beta"] = pair.anthropic_beta
        else:
            base = self.target.openai
            body["model"] = EMBEDDINGS_MODEL if pair.endpoint == EMBEDDINGS else self.target.openai_model
            headers = {"authorization": f"Bearer {self.target.key}"}
        url = base.rstrip("/") + pair.endpoint + (f"?{pair.query}" if pair.query else "")
        try:
            reply = self.client.post(url, json=body, headers=headers)
        except httpx.HTTPError as exc:
            return Reply(None, f"{type(exc).__name__}: {exc}")
        content_type = reply.headers.get("content-type", "")
        if reply.status_code != OK:
            return Reply(reply.status_code, _error_message(reply), content_type=content_type)
        if pair.stream:
            parsed = parse_sse(reply.text)
            return Reply(OK, None, events=tuple(parsed.events), done=parsed.done, not_json=parsed.not_json,
                         content_type=content_type)  # fmt: skip
        try:
            return Reply(OK, None, body=reply.json(), content_type=content_type)
        except ValueError:
            return Reply("not-json", reply.text[:ERROR_CHARS], content_type=content_type)


def _error_message(reply: httpx.Response) -> str:
    try:
        document = reply.json()
    except ValueError:
        return reply.text[:ERROR_CHARS]
    error = document.get("error") if isinstance(document, dict) else None
    message = error.get("message") if isinstance(error, dict) else None
    return str(message) if message is not None else json.dumps(document)[:ERROR_CHARS]
