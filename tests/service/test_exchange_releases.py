"""What a request holds or owes until it is over (``Exchange.releases``) is given back once, each part
whatever the others do."""

from __future__ import annotations

import logging

import pytest

from mockserver.service.exchange import Exchange


def test_a_release_that_fails_is_logged_and_the_others_still_run(caplog: pytest.LogCaptureFixture) -> None:
    exchange = Exchange(request_id="req_1", method="POST", path="/v1/responses", headers={}, started_at=0)
    done: list[str] = []

    def broken() -> None:
        raise RuntimeError("a bug in what the request owed")

    exchange.releases.extend([lambda: done.append("first"), broken, lambda: done.append("last")])
    with caplog.at_level(logging.ERROR, logger="mockserver"):
        exchange.let_go()
    assert done == ["first", "last"]
    assert "could not finish what POST /v1/responses held" in caplog.text and "a bug in what" in caplog.text
    exchange.let_go()  # once: nothing runs again
    assert done == ["first", "last"]
