"""Room for a large embeddings request in the process's memory budget, while its client waits.

A request whose reply carries many numbers takes its weight from :data:`embeddings_budget.LARGE
<mockserver.service.embeddings_budget.LARGE>` before its vectors are made, and gives it back once its
reply has gone out. While the budget is full it waits (up to ``WAIT_S`` seconds; the live 503
after that). A client that leaves during that wait stops the request there: nothing is taken from
the budget and no vector is made for it (the journal shows it as 499, like any client that left).
"""

from __future__ import annotations

import asyncio

from starlette.requests import ClientDisconnect, Request

from mockserver.api.openai.embeddings.plan import reply_values
from mockserver.api.openai.embeddings.schemas import EmbeddingRequest
from mockserver.api.serving import client_left
from mockserver.service import embeddings_budget
from mockserver.service.access import Admission
from mockserver.service.exchange import Exchange


async def make_room(request: Request, exchange: Exchange, admission: Admission, body: EmbeddingRequest) -> None:
    """Take the request's weight from the budget until its reply has gone out; the live 503 if it
    does not fit in time, :class:`ClientDisconnect` if the client leaves while it waits."""
    budget = embeddings_budget.LARGE
    weight = budget.weight(reply_values(admission, body))
    if not weight:
        return
    if not budget.try_take(weight) and not await _take_unless_gone(request, budget, weight):
        raise embeddings_budget.overloaded()
    exchange.releases.append(lambda: budget.release(weight))


async def _take_unless_gone(request: Request, budget: embeddings_budget.LargeWork, weight: int) -> bool:
    """:meth:`~mockserver.service.embeddings_budget.LargeWork.take`, given up as soon as the client leaves."""
    taking = asyncio.ensure_future(budget.take(weight))
    gone = asyncio.ensure_future(client_left(request))
    try:
        await asyncio.wait({taking, gone}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for task in (taking, gone):
            task.cancel()
        await asyncio.gather(taking, gone, return_exceptions=True)
        took = taking.done() and not taking.cancelled() and taking.exception() is None and taking.result()
        left = gone.done() and not gone.cancelled()
        if took and (left or _cancelled()):
            budget.release(weight)  # taken as the client left, or the request was cancelled: given back
    if left:
        raise ClientDisconnect()  # journalled as 499 by the middleware
    return took


def _cancelled() -> bool:
    task = asyncio.current_task()
    return task is not None and task.cancelling() > 0
