"""mockserver's benchmarks: every scenario runs by name, ``python -m benchmarks NAME``.

``python -m benchmarks`` lists them. The scenarios sit in five groups (:data:`benchmarks.__main__.GROUPS`);
beside them, ``harness.py`` (the command line, the servers under test, the results writer), the two
load clients (``load_client.py``, ``sse_client.py``) and the baseline servers (``servers/``).
"""
