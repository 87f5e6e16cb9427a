#!/usr/bin/env bash
# The tests that drive the official SDKs, and the frameworks built on them, run against the newest
# releases: the README's install without constraints.txt (pip takes the newest of everything, as a
# new user's machine does), and the newest Node SDKs in a scratch copy of tests/node. .ci/run runs
# this after the pinned suite, so a release that breaks the tests, or the server's replies to it,
# shows in CI before users meet it.
#
# The tests: every file named for an SDK or a framework (SDK_TESTS below), and the direct writes on
# uvicorn's transport, which follow what its send writes. Add a new one there.
set -euo pipefail
cd "$(dirname "$0")/.."

SDK_TESTS=(
  tests/api/test_direct_write.py
  tests/harness/test_faults_sdk.py
  tests/e2e/test_agent_frameworks.py
  tests/e2e/test_anthropic_sdk.py
  tests/e2e/test_embeddings_frameworks.py
  tests/e2e/test_embeddings_sdk.py
  tests/e2e/test_forced_tool_loops.py
  tests/e2e/test_node_sdk.py
  tests/e2e/test_prompted_sdks.py
  tests/e2e/test_record_replay_node.py
  tests/e2e/test_sdk_*.py
  tests/testing/test_pytest_plugin.py
)

python3 -m venv .venv-latest
. .venv-latest/bin/activate
python -m pip install --quiet --upgrade pip
python -m pip install --quiet ".[test]"   # the README's install, unpinned

node_dir="$(mktemp -d)"
trap 'rm -rf "$node_dir"' EXIT
cp tests/node/package.json tests/node/*.mjs "$node_dir"/
npm install --prefix "$node_dir" --silent --no-audit --no-fund openai@latest @anthropic-ai/sdk@latest

echo "newest releases under test:"
python -m pip list --format=freeze 2>/dev/null |
  grep -iE '^(openai|anthropic|httpx2?|langchain|langchain-openai|openai-agents|pydantic-ai-slim|llama-index-embeddings-openai)==' |
  sed 's/^/  /' || true
node -e 'for (const p of ["openai", "@anthropic-ai/sdk"]) console.log(`  ${p}@${require(process.argv[1] + "/node_modules/" + p + "/package.json").version}`)' "$node_dir"

MOCKSERVER_TEST_NODE_DIR="$node_dir" python -m pytest -p no:cacheprovider "${SDK_TESTS[@]}"
