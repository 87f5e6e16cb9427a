#!/usr/bin/env bash
# The static checks the development guide promises, failing on the first finding: ruff's linter,
# ruff's formatter (check only) and mypy --strict on the package. CI runs this (.ci/run);
# lint-imports runs inside the suite (tests/test_layers.py).
#
# Usage: scripts/lint.sh [REPO]    (REPO defaults to the repository holding this script)
set -euo pipefail
cd "${1:-$(dirname "$0")/..}"
ruff check .
ruff format --check .
mypy --strict mockserver
