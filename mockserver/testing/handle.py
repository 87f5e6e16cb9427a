"""One test's view of a running server: :class:`MockServerHandle`, the ``mockserver`` fixture.

Its clients carry the test's ``x-mock-test-id``, so it sees its own journal, and
``configure``/``reset`` undo themselves when the test ends. Nothing here imports
``openai`` until a client is asked for.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from mockserver.harness.journal import TEST_ID_HEADER
from mockserver.testing.calls import Calls
from mockserver.testing.server import DEFAULT_KEY, MockServer

if TYPE_CHECKING:
    import openai

    from mockserver.testing.recorder import RecordingProxy


class MockServerHandle:
    """One test's handle on a running :class:`~mockserver.testing.server.MockServer` (the ``mockserver`` fixture).

    Its clients send ``x-mock-test-id``, so :attr:`requests` shows this test's requests
    (plus any sent without a test id while the test ran, e.g. by code under test that
    builds its own ``OpenAI()`` from ``OPENAI_BASE_URL``).
    """

    def __init__(self, server: MockServer, test_id: str) -> None:
        self.server = server
        self.test_id = test_id
        self._baseline = server.state.snapshot()
        self._since = server.newest_call()
        self.recording: RecordingProxy | None = None  # the proxy recording this test (record modes)
        self._clients: list[openai.OpenAI] = []  # closed when the test ends, so no socket outlives it

    @property
    def url(self) -> str:
        return self.recording.url if self.recording is not None else self.server.url

    @property
    def base_url(self) -> str:
        """What to give the SDK as ``base_url`` (or ``OPENAI_BASE_URL``): the recording proxy while recording."""
        return self.recording.base_url if self.recording is not None else self.server.base_url

    @property
    def headers(self) -> dict[str, str]:
        """Headers that put a request made by another client into this test's journal."""
        return {TEST_ID_HEADER: self.test_id}

    def client(self, key: str = DEFAULT_KEY, *, strict: bool = False, **kwargs: Any) -> openai.OpenAI:
        """An ``openai.OpenAI`` for ``key``. ``strict`` turns on ``_strict_response_validation``.
        It is closed when the test ends."""
        if self.recording is not None:
            kwargs.setdefault("base_url", self.recording.base_url)
        client = self.server.client(key, strict=strict, test_id=self.test_id, **kwargs)
        self._clients.append(client)
        return client

    def async_client(self, key: str = DEFAULT_KEY, *, strict: bool = False, **kwargs: Any) -> openai.AsyncOpenAI:
        return self.server.async_client(key, strict=strict, test_id=self.test_id, **kwargs)

    def configure(self, patch: Mapping[str, Any] | None = None, /, **changes: Any) -> None:
        """Change the configuration for this test; undone when the test ends. See :func:`config_patch`."""
        self.server.configure(patch, **changes)

    @property
    def requests(self) -> Calls:
        """This test's journal, oldest first, once every reply already read has been recorded. Empty
        while the test records a cassette: its requests go through the recorder to the upstream."""
        return self.server.calls(test_id=self.test_id, include_unscoped=True, since=self._since)

    def reset(self) -> None:
        """Back to the configuration the test started with; forget its journal and fault counters."""
        state = self.server.state
        state.restore(self._baseline)
        self.server.run(state.reset_scope(self.test_id))
        self._since = self.server.newest_call()

    def close(self) -> None:
        """The test has ended: close the clients it was given, then :meth:`reset`."""
        while self._clients:
            self._clients.pop().close()
        self.reset()
