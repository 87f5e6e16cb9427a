"""The names every setting shares: the environment prefix and the default port.

Kept apart from :mod:`mockserver.config.settings` and free of imports, so ``mockserver health``
(a container's HEALTHCHECK, run every few seconds) can find the port without loading the fixture
schema.
"""

from __future__ import annotations

ENV_PREFIX = "MOCKSERVER_"
DEFAULT_PORT = 8000
