"""The baseline servers the load scenarios measure mockserver against.

Each is run as a script of its own (``python benchmarks/servers/NAME.py PORT``), in a process pinned
to its own core; none is a scenario.
"""
