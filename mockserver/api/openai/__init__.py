"""The OpenAI API family: ``/v1/models``, ``/v1/chat/completions`` and ``/v1/responses``.

Each endpoint family has ``routes.py`` (HTTP only) beside the modules that plan and
render its replies; :mod:`.schemas` declares the request bodies for validation and the
OpenAPI document.

May import: the shared ``api`` modules (routing, serving, replies) and every layer below
``api``. Not ``api.control``.

Read first: :mod:`.chat.completions`, then :mod:`.responses.lifecycle`.
"""
