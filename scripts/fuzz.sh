#!/usr/bin/env bash
# A longer fuzz run than CI's: schemathesis over every operation of the served OpenAPI document,
# checking no 5xx and that every reply conforms to the document (status, content type, body).
#
# Usage: scripts/fuzz.sh [EXAMPLES_PER_OPERATION]   (default 500; CI runs 12)
# About 16 operations, so 500 examples each is ~8,000 requests, ~15-30 minutes on 2 cores.
set -euo pipefail
cd "$(dirname "$0")/.."
MOCKSERVER_FUZZ_EXAMPLES="${1:-500}" exec python -m pytest -q -p no:cacheprovider --timeout 0 tests/test_fuzz.py
