"""Give tiktoken its vocabularies offline, from the copies mockserver ships.

Clients that count tokens before they send (LangChain's ``OpenAIEmbeddings``, LlamaIndex, the
cookbook's recipes) call ``tiktoken.get_encoding(...)``, which downloads the vocabulary on first
use and keeps it in a cache directory. Without network that call fails. :func:`seed_tiktoken_cache`
writes the vocabularies into that cache from the ones inside mockserver
(:mod:`mockserver.engine.vocabularies`), after checking that each one's SHA-256 is the one tiktoken
pins for the file it would download, so tiktoken takes them as its own::

    from mockserver.testing.tiktoken_cache import seed_tiktoken_cache

    seed_tiktoken_cache()  # before the first tiktoken.get_encoding(...)

The directory is the one tiktoken reads: ``TIKTOKEN_CACHE_DIR``, else ``DATA_GYM_CACHE_DIR``,
else ``data-gym-cache`` in the temporary directory; or the one given, which is then put in
``TIKTOKEN_CACHE_DIR`` for this process and the processes it starts.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path

from mockserver.engine import vocabularies

# The files tiktoken downloads, with the SHA-256 it pins for each (tiktoken_ext/openai_public.py).
TIKTOKEN_FILES = {name: (v.url, v.sha256) for name, v in vocabularies.VOCABULARIES.items()}


class VocabularyMismatch(RuntimeError):
    """A vocabulary mockserver ships is not the file tiktoken expects (its SHA-256 differs)."""


def tiktoken_cache_dir() -> Path:
    """The directory tiktoken reads its cache from, as it works it out."""
    for variable in ("TIKTOKEN_CACHE_DIR", "DATA_GYM_CACHE_DIR"):
        if os.environ.get(variable):
            return Path(os.environ[variable])
    return Path(tempfile.gettempdir()) / "data-gym-cache"


def vocabulary(name: str) -> bytes:
    """The ``name`` vocabulary as tiktoken downloads it, from mockserver's copy, its SHA-256 checked."""
    url, expected = TIKTOKEN_FILES[name]
    data = vocabularies.tiktoken_file(name)
    found = hashlib.sha256(data).hexdigest()
    if found != expected:
        raise VocabularyMismatch(f"mockserver's {name} has SHA-256 {found}; tiktoken expects {expected} for {url}")
    return data


def seed_tiktoken_cache(directory: str | os.PathLike[str] | None = None) -> Path:
    """Write cl100k_base and o200k_base where tiktoken looks for them; return the directory.

    A file already there is left alone. With ``directory``, ``TIKTOKEN_CACHE_DIR`` is set to it.
    """
    target = Path(directory) if directory is not None else tiktoken_cache_dir()
    target.mkdir(parents=True, exist_ok=True)
    for name, (url, _) in TIKTOKEN_FILES.items():
        path = target / hashlib.sha1(url.encode()).hexdigest()  # tiktoken's cache key: the URL's SHA-1
        if not path.exists():
            partial = path.with_name(f"{path.name}.{os.getpid()}.tmp")
            partial.write_bytes(vocabulary(name))
            partial.replace(path)  # whole or absent, even with several processes at once
    if directory is not None:
        os.environ["TIKTOKEN_CACHE_DIR"] = str(target)
    return target
