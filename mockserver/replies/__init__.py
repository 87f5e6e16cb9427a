"""Replies: what a request is answered with, planned once, below the HTTP layer.

Owns the one planner (:func:`.planner.plan`: from a request's facts to the tokens, calls,
reasoning and schedule of its reply) and what one answer says (:mod:`.content`: prose, a JSON
document or tool calls, or a script rule's reply). Each API family under ``api/`` turns its
request into :class:`.planner.Facts` and the :class:`.planner.Plan` into its wire shape; no module
of ``api/`` chooses a script or builds a schedule.

May import: harness, service, engine, config, state, errors.

The second source of replies is a recording: :mod:`.recorded` paces a recorded reply's events
(as recorded, re-paced at the tier asked for, or at once) and :mod:`.recorded_shapes` gives it
either shape, streamed or whole; :mod:`mockserver.harness.replay` chooses the recording.

Read first: :mod:`.planner`, then :mod:`.content`.
"""
