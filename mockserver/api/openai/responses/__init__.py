"""``/v1/responses`` and the stored responses under it.

:mod:`.lifecycle` plans a response, renders it and stores it; :mod:`.event_stream` turns the
plan into the typed SSE events; :mod:`.input_items` and :mod:`.input_tokens` serve the
read-only endpoints.

Read first: :mod:`.lifecycle`, then :mod:`.event_stream`.
"""
