"""Pack the ``.tiktoken`` vocabularies into mockserver/engine/vocabularies/ (see that package's docstring).

    python scripts/pack_vocabularies.py path/to/o200k_base.tiktoken path/to/cl100k_base.tiktoken

Each file is the one tiktoken downloads (gzipped or not), named after its encoding; its SHA-256 must be
the one tiktoken pins, and the packed file must read back to the same ranks.
"""

from __future__ import annotations

import gzip
import hashlib
import sys
from pathlib import Path

from mockserver.engine import vocabularies

TARGET = Path(vocabularies.__file__).parent


def main(paths: list[str]) -> None:
    for path in map(Path, paths):
        name = path.name.split(".")[0]
        data = path.read_bytes()
        data = gzip.decompress(data) if path.suffix == ".gz" else data
        expected = vocabularies.VOCABULARIES[name].sha256
        if hashlib.sha256(data).hexdigest() != expected:
            raise SystemExit(f"{path}: not the {name} file tiktoken pins (SHA-256 {expected})")
        ranks = vocabularies.parse_tiktoken_file(data)
        (TARGET / f"{name}.ranks.gz").write_bytes(vocabularies.pack(ranks))
        if vocabularies.tiktoken_file(name) != data:
            raise SystemExit(f"{name}: the packed vocabulary does not read back to the same file")
        print(f"{name}: {len(ranks)} tokens -> {TARGET / f'{name}.ranks.gz'}")


if __name__ == "__main__":
    main(sys.argv[1:])
