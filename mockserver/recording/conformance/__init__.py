"""Conformance: how closely the generator's replies match replies recorded from the live APIs.

Each recorded request (from a corpus file or VCR cassettes, :mod:`.pairs`) is sent to the generator
(:mod:`.send`), and the shapes of the two replies are compared (:mod:`.shapes`, :mod:`.compare`):
JSON paths with their types, per event type for streams; the event types and their order; tool calls
made, forced or not, and whether their arguments fit; structured outputs; refusals. :mod:`.measure`
pools the comparisons per endpoint and mode and :mod:`.report` prints them. ``mockserver
conformance`` runs it (:mod:`mockserver.commands.conformance`), and the repository's conformance test
uses the same shapes.

Read first: :mod:`.shapes`, then :mod:`.compare`.
"""
