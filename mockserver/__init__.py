"""mockserver: an OpenAI-compatible fake inference server for offline tests."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from mockserver.version import __version__

__all__ = ["ConfigError", "Fixture", "MockServer", "Settings", "__version__", "create_app", "load_fixture"]

# The public names are imported on first use, so that importing a submodule (the pytest
# plugin, loaded in every test session of a project that installs mockserver) stays cheap.
_LAZY = {
    "create_app": "mockserver.server.app",
    "ConfigError": "mockserver.config.fixture",
    "Fixture": "mockserver.config.fixture",
    "Settings": "mockserver.config.settings",
    "load_fixture": "mockserver.config.fixture",
    "MockServer": "mockserver.testing.server",
}

if TYPE_CHECKING:
    from mockserver.config.fixture import ConfigError, Fixture, load_fixture
    from mockserver.config.settings import Settings
    from mockserver.server.app import create_app
    from mockserver.testing.server import MockServer


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'mockserver' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
