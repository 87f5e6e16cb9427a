"""The command lines of the recording tools: ``record``, ``cassette``, ``whatif``, ``calibrate``
and ``conformance``.

:mod:`mockserver.cli` adds them to its parser and hands their arguments here. They sit just below
the CLI, so they may import everything under it (start-up, the recording tools, the cassettes).
"""
