"""Replies: what a request is answered with, planned once, below the HTTP layer.

Owns the one planner (:func:`.planner.plan`: from a request's facts to the tokens, calls,
reasoning and schedule of its reply) and what one answer says (:mod:`.content`: prose, a JSON
document or tool calls, or a script rule's reply). Each API family under ``api/`` turns its
request into :class:`.planner.Facts` and the :class:`.planner.Plan` into its wire shape; no module
of ``api/`` chooses a script or builds a schedule.

May import: harness, service, engine, config, state, errors.

Read first: :mod:`.planner`, then :mod:`.content`.
"""
