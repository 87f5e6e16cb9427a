#!/usr/bin/env bash
# A longer fuzz run than CI's: schemathesis over every operation of the served OpenAPI document,
# checking no 5xx and that every reply conforms to the document (status, content type, body).
#
# Usage: scripts/fuzz.sh [EXAMPLES_PER_OPERATION]   (default 500; CI runs 12)
# 20 operations; operations with few inputs run fewer examples (hypothesis stops when it has tried
# them all). The server's count of requests by status goes to benchmarks/results/fuzz.json.
set -euo pipefail
cd "$(dirname "$0")/.."
report="${MOCKSERVER_FUZZ_REPORT:-benchmarks/results/fuzz.json}"
MOCKSERVER_FUZZ_EXAMPLES="${1:-500}" MOCKSERVER_FUZZ_REPORT="$report" \
  python -m pytest -q -p no:cacheprovider --timeout 0 tests/api/test_fuzz.py
echo "requests the server answered, by status (a 5xx fails the run above):"
cat "$report"
