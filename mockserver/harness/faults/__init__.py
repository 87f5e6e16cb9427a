"""Faults for testing error paths: chosen per request by header, fixture rule or
server-wide probability (:mod:`.injection`), and applied to a stream as a stall, a drop, a
truncation or an error event (:mod:`.midstream`). The rule syntax is fixture data, in
:mod:`mockserver.config.faults`; the error bodies are in :mod:`mockserver.errors.variants`.
"""
