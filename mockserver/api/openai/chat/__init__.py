"""``POST /v1/chat/completions``: plan a completion, render it whole or as chunks.

Read first: :mod:`.completions`; :mod:`.checks` holds the request checks the live API makes
on the message history.
"""
