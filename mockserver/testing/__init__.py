"""Entry points for tests: :class:`~mockserver.testing.server.MockServer` (a real server
in a thread), the ``mockserver`` pytest fixture (:mod:`.pytest_plugin`), one test's
handle on it (:mod:`.handle`), the journal as assertable calls (:mod:`.calls`) and the
configuration conveniences (:mod:`.patches`).

May import: every layer. Importing this package or the plugin stays cheap: the server is
imported when a test first asks for it.

Read first: :mod:`.server`, then :mod:`.pytest_plugin`.
"""
