"""Schemathesis over the served OpenAPI document: every operation, a bounded budget.

Checks that no request gets a 5xx and that every reply conforms to what the document says:
a documented status, the documented content type, the documented body schema. The budget
(``FUZZ_EXAMPLES`` per operation, about a minute in all) keeps CI short; ``scripts/fuzz.sh``
runs the same over many more examples, and the schemathesis CLI against a real process.

The server fuzzed can do no harm to the run: ``time_scale`` is capped near zero (a fuzzed
``PATCH /_mock/config`` cannot slow later replies), each reply is capped at a few seconds, and
the configuration is reset after every patch (a fuzzed fault rule would make later replies
fail on purpose).
"""

from __future__ import annotations

import json
import os
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis import checks

from mockserver import MockServer
from mockserver.server.app import create_app

FUZZ_EXAMPLES = int(os.environ.get("MOCKSERVER_FUZZ_EXAMPLES", "12"))
AUTH = {"Authorization": "Bearer sk-mock-preview"}
CHECKS = [
    checks.not_a_server_error,
    checks.status_code_conformance,
    checks.content_type_conformance,
    checks.response_schema_conformance,
]


@pytest.fixture(scope="module")
def fuzzed() -> Iterator[MockServer]:
    statuses: Counter[int] = Counter()
    with MockServer(time_scale=0, max_time_scale=0.001, max_reply_seconds=5, seed=13) as running:
        running.state.hooks.on_complete.append(lambda exchange: statuses.update([exchange.status or 0]))
        yield running
    report = os.environ.get("MOCKSERVER_FUZZ_REPORT")
    if report:  # scripts/fuzz.sh: how many requests the server answered, by status
        summary = {"requests": sum(statuses.values()), "by_status": dict(sorted(statuses.items()))}
        Path(report).write_text(json.dumps(summary, indent=2) + "\n")


# The document every server serves; built here (no server needed) so the operations are known at collection.
schema = schemathesis.openapi.from_dict(create_app().openapi())


@schema.parametrize()
@settings(max_examples=FUZZ_EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck), database=None)
def test_every_operation_answers_as_documented(case: schemathesis.Case, fuzzed: MockServer) -> None:
    try:
        response = case.call(base_url=fuzzed.url, headers=AUTH, timeout=30)
        case.validate_response(response, checks=CHECKS)
    finally:
        if case.operation.path.startswith("/_mock/") and case.method.upper() in ("PATCH", "POST"):
            fuzzed.reset()
