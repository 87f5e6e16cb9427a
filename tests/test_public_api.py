"""The public surface is locked: changing it is a deliberate act, recorded in the CHANGELOG."""

import mockserver


def test_public_names() -> None:
    assert sorted(mockserver.__all__) == [
        "ConfigError",
        "Fixture",
        "MockServer",
        "Settings",
        "__version__",
        "create_app",
        "load_fixture",
    ]
    for name in mockserver.__all__:
        assert getattr(mockserver, name) is not None
