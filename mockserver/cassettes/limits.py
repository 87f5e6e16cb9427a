"""The bounds of a cassette file, apart from the rest: the command line's options name them at start-up."""

DEFAULT_MAX_CASSETTE_BYTES = 256 * 1024 * 1024  # 256 MiB: hours of agent sessions, still one git LFS object
