"""The HTTP surface: one subpackage per API family, with thin handlers.

Owns routing, request parsing (:mod:`.handler_inputs`, with the server's state a handler reads; a
body's validation, a long list a piece at a time, :mod:`.validated_body`), the
per-request middleware that opens an exchange and authenticates (:mod:`.middleware`), who may use
``/_mock/`` (:mod:`.guard`), and the one path every inference request takes (:mod:`.pipeline`:
authenticate, parse, replay, admit (:mod:`.admitting`), plan, respond (:mod:`.serving`: pace, stream or
hold the body)), each API family one object that the pipeline serves (:mod:`.family`), with the
``text/event-stream`` reply the stream scheduler plays (:mod:`.sse`). Where the server reaches under
uvicorn, Starlette, FastAPI and CPython is ``asgi/``, and nowhere else: writes to uvicorn's transport,
when a request arrived, the inference routes served without FastAPI's own layers and router, the app's
methods replaced at run time, the garbage collector's pauses, coroutines stepped by hand, and what a
large body holds and how it lets go.
``openai/`` is the OpenAI surface (models, Chat Completions, Responses); ``anthropic/`` is
Anthropic's Messages API (messages, count_tokens, its model list); ``control/`` is
``/_mock/*``; :mod:`.health` and :mod:`.metrics` serve ``/health`` and ``/metrics``. The
middleware labels each request with the family it speaks, which decides the shape of its
errors and headers. An inference handler is one line, the pipeline served with its family; no
policy lives in a handler.

May import: recording, server_state, replies, operations, harness, service, engine, cassettes, config, state,
errors. The API families
(``openai``, ``anthropic``, ``control``) do not import each other.

Read first: :mod:`.pipeline`, then :mod:`.openai.chat.family`.
"""
