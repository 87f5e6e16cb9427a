"""The o200k_base encoders a server could load: their load time, memory, counting speed and exactness.

    python -m benchmarks tokenizer_load [--rounds N] [--output PATH]

Each way runs in a fresh interpreter, ``--rounds`` times (default 5), the ways taking turns:

- ``packed``: tiktoken's encoder built from the vocabulary mockserver ships, packed
  (:mod:`mockserver.engine.vocabularies`), as :func:`mockserver.engine.tokens.load_encoding` builds it;
- ``tiktoken_file``: ``tiktoken.get_encoding("o200k_base")`` reading the ``.tiktoken`` file from its cache
  (the file it would download, seeded offline from the same vocabulary): base64 text to parse;
- ``bpe_openai``: the ``bpe-openai`` package, a Rust BPE whose wheel ships o200k_base (measured only where
  it is installed: ``pip install bpe-openai``).

For each: the seconds from nothing imported to an encoder ready to count (import included), the
resident memory it adds (VmRSS after a garbage collection, less before the import), the time to
count a 1,000-token English prompt (the median of 200 counts), and whether its counts equal
tiktoken's on a varied sample of texts (English, Chinese, code, JSON, numbers, emoji, whitespace
runs, and seeded random Unicode). The reference counts come from ``tiktoken.get_encoding`` in this
process. Written to ``benchmarks/results/tokenizer_load.json``.
"""

from __future__ import annotations

import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from benchmarks.harness import ROOT, arguments, results_path, write_results

PROSE = (
    "The lighthouse keeper climbed the spiral stairs each evening, counting the steps as his father had, "
    "and wondered whether the ships that passed ever noticed the care that went into the light. "
)


def sample(seed: int = 7) -> list[str]:
    """Texts of every kind a prompt holds; the same for every run."""
    rng = random.Random(seed)
    fixed = [
        PROSE * 3,
        "What's the capital of France? Answer in one word.",
        "请写一篇关于长城历史的详细文章，至少一千字。你好！今天北京的天气怎么样？",
        "def fib(n):\n    return n if n < 2 else fib(n - 1) + fib(n - 2)\n\n\n# explain   this code\t\t\n",
        json.dumps({"city": "Paris", "temps": [21.5, 19.25, -3], "ok": True, "note": None}, indent=2),
        "naïve café résumé, 東京 and 서울, 1234567 and 3.14159, https://example.com/a?b=c&d=%20 🤖🎉👍🏽",
        "    \n\n\n   x  \r\n\t  I'M HERE, you're there; they'll see. DON'T!!! ... ---- ====",
        "Добрый день! Καλημέρα! مرحبا بالعالم! नमस्ते दुनिया! こんにちは世界",
    ]
    points = (*range(32, 127), *range(0xA0, 0x250), *range(0x4E00, 0x4E80), *range(0x1F600, 0x1F650))
    alphabet = [chr(c) for c in points]
    randoms = ["".join(rng.choice(alphabet) for _ in range(rng.randint(1, 400))) for _ in range(200)]
    words = PROSE.split()
    shuffled = [" ".join(rng.choice(words) for _ in range(rng.randint(1, 120))) for _ in range(200)]
    return fixed + randoms + shuffled


# Run in a fresh interpreter: argv[1] the way, argv[2] a JSON file of the sample; prints JSON.
PROBE = r"""
import gc, json, statistics, sys, time

def rss():
    for line in open("/proc/self/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024

way, sample_path = sys.argv[1], sys.argv[2]
texts = json.load(open(sample_path))
gc.collect()
before, started = rss(), time.perf_counter()
if way == "packed":
    from mockserver.engine import tokens
    encoding = tokens.load_encoding("o200k_base")
elif way == "tiktoken_file":
    import tiktoken
    encoding = tiktoken.get_encoding("o200k_base")
else:
    import warnings
    warnings.simplefilter("ignore")
    import bpe_openai
    encoding = bpe_openai.get_encoding("o200k_base")
loaded = time.perf_counter() - started
gc.collect()
added = rss() - before
prompt = texts[0] * 4
times = []
for _ in range(200):
    t = time.perf_counter()
    n = len(encoding.encode_ordinary(prompt))
    times.append(time.perf_counter() - t)
counts = [len(encoding.encode_ordinary(text)) for text in texts]
print(json.dumps({"load_s": loaded, "rss_added_mib": added, "prompt_tokens": n,
                  "count_us_per_token": statistics.median(times) / n * 1e6, "counts": counts}))
"""


def available(way: str) -> bool:
    module = {"packed": "tiktoken", "tiktoken_file": "tiktoken", "bpe_openai": "bpe_openai"}[way]
    return subprocess.run([sys.executable, "-c", f"import {module}"], capture_output=True).returncode == 0


def main() -> None:
    parser = arguments("tokenizer_load", __doc__)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    import tiktoken

    from mockserver.testing.tiktoken_cache import seed_tiktoken_cache

    texts = sample()
    with tempfile.TemporaryDirectory() as scratch:
        seed_tiktoken_cache(Path(scratch) / "cache")  # sets TIKTOKEN_CACHE_DIR, for the probes too
        reference = [len(tiktoken.get_encoding("o200k_base").encode_ordinary(text)) for text in texts]
        sample_path = Path(scratch) / "sample.json"
        sample_path.write_text(json.dumps(texts))
        ways = [way for way in ("packed", "tiktoken_file", "bpe_openai") if available(way)]
        env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONDONTWRITEBYTECODE": "1"}
        runs: dict[str, list[dict[str, Any]]] = {way: [] for way in ways}
        for _ in range(args.rounds):
            for way in ways:
                done = subprocess.run(
                    [sys.executable, "-c", PROBE, way, str(sample_path)],
                    env=env,
                    capture_output=True,
                    text=True,
                    check=True,
                )
                runs[way].append(json.loads(done.stdout))
    report: dict[str, Any] = {
        "rounds": args.rounds,
        "load_average": os.getloadavg(),
        "sample_texts": len(texts),
        "sample_tokens": sum(reference),
    }
    for way, seen in runs.items():
        counts = seen[0]["counts"]
        report[way] = {
            "load_s": round(statistics.median(r["load_s"] for r in seen), 3),
            "load_s_min": round(min(r["load_s"] for r in seen), 3),
            "rss_added_mib": round(statistics.median(r["rss_added_mib"] for r in seen), 1),
            "count_us_per_token": round(statistics.median(r["count_us_per_token"] for r in seen), 3),
            "texts_counted_as_tiktoken": sum(a == b for a, b in zip(counts, reference, strict=True)),
            "exact": counts == reference,
        }
    print(write_results(results_path("tokenizer_load", args), report).read_text())


if __name__ == "__main__":
    main()
