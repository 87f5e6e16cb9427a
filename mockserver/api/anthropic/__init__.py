"""The Anthropic API family: ``POST /v1/messages`` (streamed and not), ``POST
/v1/messages/count_tokens``, and ``GET /v1/models`` in Anthropic's shape when a request
carries Anthropic's headers.

It shares everything below the HTTP surface with the OpenAI family: admission
(:mod:`mockserver.api.serving`, accounts, tiers, capacity, rate limits), the pacing engine,
generated and scripted replies (:mod:`mockserver.replies`), faults, the journal and the
ledger. What is Anthropic's own lives here: which requests speak it (:mod:`.family`), the
request bodies (:mod:`.schemas`), reading the conversation (:mod:`.turns`), planning a message
(:mod:`.messages`), its event stream (:mod:`.event_stream`), its key and version headers
(:mod:`.auth`), the errors only it has (:mod:`.errors`; every error's body is rendered in its
shape by its dialect, :mod:`mockserver.errors.anthropic`) and its model list (:mod:`.models`).

A model is served by one API: ``api: anthropic`` in the fixture (see the ``claude-*`` presets).
``speed: "fast"`` asks for the model's ``priority`` tier (fast mode).

May import: the shared ``api`` modules (routing, serving, replies, middleware) and every layer
below ``api``. Not ``api.openai`` nor ``api.control``.

Read first: :mod:`.messages`, then :mod:`.event_stream`.
"""
