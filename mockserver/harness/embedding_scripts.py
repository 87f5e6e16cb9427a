"""Scripted embeddings: a ``scripts:`` rule that fixes the vector of the inputs it matches.

::

    scripts:
      - name: capital
        match: {path: /v1/embeddings, message: "(?i)capital of france"}
        reply: {embedding: [0.6, 0.8, 0.0]}

Each input of an embeddings request is tried against the rules in order, as a chat request's
latest user message is: ``message`` is searched in the input's text (a token array's decoded
text), and ``model``, ``tier``, ``key`` and ``path`` match as for chat (``turn`` is 1). The first
rule that matches and replies with an ``embedding`` gives that input its vector; one that replies
with an ``error`` fails the whole request with it. Rules that reply with text or tool calls, and
sequences, are for chat requests and are passed over here.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from mockserver.config.script_rules import ScriptRule
from mockserver.harness import scripted
from mockserver.harness.scripted import Facts

if TYPE_CHECKING:
    from mockserver.service.access import Admission


def scripted_vector(
    rules: Sequence[ScriptRule], admission: Admission, path: str, text: str, time_scale: float
) -> tuple[int, list[float]] | None:
    """The first applicable rule's index and vector for one input's ``text``, or None to generate one.

    Raises the scripted error when the first applicable rule replies with one.
    """
    facts = Facts(
        model=admission.model.id,
        tier=admission.tier.tier,
        key=admission.account.key,
        path=path,
        message=text,
        turn=1,
        answered=False,
    )
    for index, rule in enumerate(rules):
        reply = rule.reply
        if reply.sequence is not None or (reply.embedding is None and reply.error is None):
            continue
        if not scripted.matches(rule.match, facts):
            continue
        if reply.error is not None:
            raise scripted.error_for(reply.error, admission, time_scale)
        assert reply.embedding is not None
        return index, reply.embedding
    return None
