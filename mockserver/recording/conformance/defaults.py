"""The conformance command's defaults, apart from the sender so the CLI can list them without loading it."""

from __future__ import annotations

DEFAULT_KEY = "sk-mock-preview"
DEFAULT_OPENAI_MODEL = "gpt-5.6-sol"
EMBEDDINGS_MODEL = "text-embedding-3-small"
DEFAULT_TIMEOUT_S = 30.0
