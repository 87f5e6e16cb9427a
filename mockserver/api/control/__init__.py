"""The control plane under ``/_mock/``: runtime configuration, the request journal,
reset, and the usage ledger. Never under ``/v1``. The dashboard (``/_mock/ui``, :mod:`.ui`) is
served here too: its files (:mod:`.pages`, ``static/``) and its live feed (:mod:`.feed`).

May import: the shared ``api`` modules and every layer below ``api``. Not ``api.openai``.

Read first: :mod:`.routes`.
"""
