"""``POST /v1/moderations``: ``omni-moderation-latest``, flagging only what the fixture's rules say.

:mod:`.schemas` declares the body (a string, an array of strings, or an array of multi-modal
parts), :mod:`.plan` turns it into results with :mod:`mockserver.engine.moderation`, and
:mod:`.routes` is HTTP only.
"""
