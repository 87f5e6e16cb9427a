"""``POST /v1/embeddings``: deterministic vectors for text-embedding-3 models.

:mod:`.schemas` declares the body, :mod:`.inputs` reads ``input`` in its four forms within the
live API's limits and wording, :mod:`.plan` makes the vectors (scripted or from
:mod:`mockserver.engine.embeddings`) and the reply document, :mod:`.routes` is HTTP only.
"""
