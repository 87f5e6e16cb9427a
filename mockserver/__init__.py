"""mockserver: an OpenAI-compatible fake inference server for offline tests."""

__version__ = "0.1.0"

from mockserver.app import create_app
from mockserver.config import ConfigError, Fixture, Settings, load_fixture
from mockserver.server import MockServer

__all__ = ["ConfigError", "Fixture", "MockServer", "Settings", "__version__", "create_app", "load_fixture"]
