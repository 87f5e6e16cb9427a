"""Every process's streams on one board in Redis, read by the process serving a dashboard."""

from __future__ import annotations

import asyncio

from mockserver.state import live_board, shared
from mockserver.state.live_board import LiveBoard
from tests.redis_server import RedisServer


def test_a_process_posts_its_streams_only_while_a_dashboard_is_open(redis_server: RedisServer) -> None:
    async def run() -> None:
        wall = [1000.0]
        where_a, where_b = shared.Shared.from_url(redis_server.url), shared.Shared.from_url(redis_server.url)
        playing, watching = LiveBoard(where_a, lambda: wall[0]), LiveBoard(where_b, lambda: wall[0])
        stop = False
        playing.start(lambda: {"rows": [{"id": "a-1"}]}, lambda: stop)
        await asyncio.sleep(live_board.PUBLISH_EVERY_S * 2)
        assert await where_a.connection.hgetall(where_a.key("live:streams")) == {}  # nobody watching: nothing posted

        here = {"rows": [{"id": "b-1"}]}
        assert await watching.exchange(here) == [here]  # a dashboard opens on b
        await asyncio.sleep(live_board.PUBLISH_EVERY_S * 2)
        posts = await watching.exchange(here)
        assert [post["rows"] for post in posts] == [[{"id": "b-1"}], [{"id": "a-1"}]]

        stop = True
        await playing.close()
        wall[0] += live_board.STALE_S + 1  # a process that stopped posting drops off the board
        assert await watching.exchange({"rows": []}) == [{"rows": []}]
        assert await where_a.connection.hgetall(where_a.key("live:streams")) == {}
        await where_a.connection.aclose()
        await where_b.connection.aclose()

    asyncio.run(run())
