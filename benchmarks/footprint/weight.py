"""What mockserver weighs on a machine that uses it: start-up, memory and the installed size.

    python -m benchmarks weight [--baseline-python PY --baseline-checkout DIR] [--rounds N] [--output PATH]
    python -m benchmarks weight --venv [--baseline-python PY --baseline-checkout DIR]

Four figures, each for this checkout and, with ``--baseline-*``, another (an older checkout run with an
interpreter whose environment has that checkout's dependencies), measured in turns so both see the
same machine:

1. **A pytest session with the fixture.** pytest runs one test file in a fresh interpreter, in an empty
   directory (the plugin loads through its entry point): ``def test_one(mockserver): pass`` against
   ``def test_one(): pass``. The difference of the wall times is what the fixture costs a session, and
   the difference of the peak RSS its memory; the difference of the CPU times (user and system) is
   the same cost as a busy machine disturbs it less. A second pair makes one Chat Completions request through
   ``mockserver.client()``, against a test that builds the same ``openai`` client without the fixture
   (no request can be made without a server): that adds what the first request costs.
2. **``mockserver serve`` to its first ``/health``.** From launching the process to the first 200 on
   ``GET /health`` (polled every 5 ms), beside the same for a bare FastAPI app with one route under
   uvicorn (``servers/fastapi_floor.py``): the floor any FastAPI server pays to import and listen.
3. **Idle RSS**: the server's resident memory once ``/health`` has answered, before any API request.
4. **The installed size** (``--venv``, alone): a new venv, ``pip install -c constraints.txt CHECKOUT`` (no
   extras), its size on disk and its largest packages.

Medians of ``--rounds`` runs (default 7; the venv once). The machine is shared: the figures are meant
side by side, not as absolutes. Written to ``benchmarks/results/weight.json`` (``--venv``:
``benchmarks/results/weight_installed.json``).
"""

from __future__ import annotations

import contextlib
import http.client
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path
from typing import Any

from benchmarks.harness import RESULTS, ROOT, SERVERS, arguments, free_port, write_results

TESTS = {
    "fixture": "def test_one(mockserver):\n    pass\n",
    "no_fixture": "def test_one():\n    pass\n",
    "fixture_one_request": textwrap.dedent(
        """\
        def test_one(mockserver):
            reply = mockserver.client().chat.completions.create(
                model="gpt-5.6-sol", messages=[{"role": "user", "content": "Hello"}]
            )
            assert reply.usage.completion_tokens > 0
        """
    ),
    "no_fixture_client": textwrap.dedent(
        """\
        def test_one():
            import openai

            assert openai.OpenAI(base_url="http://127.0.0.1:9/v1", api_key="sk-none")
        """
    ),
}
PAIRS = {"fixture": ("fixture", "no_fixture"), "fixture_one_request": ("fixture_one_request", "no_fixture_client")}


def run_measured(command: list[str], env: dict[str, str], cwd: Path) -> tuple[float, float, float]:
    """Run ``command``; its wall time and CPU time (user and system) in seconds, and its peak RSS in MiB."""
    started = time.perf_counter()
    process = subprocess.Popen(command, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(process.pid, 0)
    elapsed = time.perf_counter() - started
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode != 0:
        raise RuntimeError(f"{command} failed: {process.stderr.read().decode()[-2000:] if process.stderr else ''}")
    return elapsed, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def environment(checkout: Path) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(checkout), "PYTHONDONTWRITEBYTECODE": "1"}


def pytest_session(python: str, checkout: Path, test: str, directory: Path) -> tuple[float, float, float]:
    path = directory / f"test_{test}.py"
    path.write_text(TESTS[test])
    command = [python, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-W", "ignore", str(path)]
    return run_measured(command, environment(checkout), directory)


def health(port: int) -> bool:
    with contextlib.suppress(OSError, http.client.HTTPException):
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=1)
        try:
            connection.request("GET", "/health")
            return connection.getresponse().status == 200
        finally:
            connection.close()
    return False


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"no VmRSS for {pid}")


def cpu_s(pid: int) -> float:
    """The CPU time (user and system) process ``pid`` has used so far, in seconds."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def first_health(
    command: list[str], env: dict[str, str], port: int, cwd: Path, settle_s: float = 1.0
) -> tuple[float, float, float]:
    """Seconds from launching ``command`` to its first 200 on /health, the CPU seconds it used until
    then (what a busy machine disturbs less), and its RSS ``settle_s`` after. It runs in ``cwd``:
    ``python -m`` puts the working directory first on the import path."""
    started = time.perf_counter()
    process = subprocess.Popen(command, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        while not health(port):
            if process.poll() is not None or time.perf_counter() - started > 60:
                raise RuntimeError(f"{command} did not answer /health")
            time.sleep(0.005)
        elapsed, used = time.perf_counter() - started, cpu_s(process.pid)
        time.sleep(settle_s)
        return elapsed, used, rss_mib(process.pid)
    finally:
        process.terminate()
        process.wait(timeout=10)


def serve(python: str, checkout: Path) -> tuple[float, float, float]:
    port = free_port()
    command = [python, "-m", "mockserver", "serve", "--port", str(port), "--log-level", "warning"]
    return first_health(command, environment(checkout), port, checkout)


def fastapi_floor(python: str) -> tuple[float, float, float]:
    port = free_port()
    return first_health([python, str(SERVERS / "fastapi_floor.py"), str(port)], dict(os.environ), port, SERVERS)


def venv_size(python: str, checkout: Path) -> dict[str, Any]:
    """Install ``checkout`` without extras into a new venv; its size on disk and largest packages."""
    with tempfile.TemporaryDirectory(prefix="mockserver-weight-") as scratch:
        venv = Path(scratch) / "venv"
        subprocess.run([python, "-m", "venv", str(venv)], check=True)
        pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "--disable-pip-version-check"]
        # A copy of the checkout: building in place would leave a build directory behind.
        source = Path(scratch) / "src"
        shutil.copytree(checkout, source, ignore=shutil.ignore_patterns(".venv", ".git", "node_modules", "site"))
        subprocess.run([*pip, "-c", str(source / "constraints.txt"), str(source)], check=True)
        site = next((venv / "lib").glob("python3*/site-packages"))
        sizes = {entry.name: du(entry) for entry in site.iterdir()}
        largest = dict(sorted(sizes.items(), key=lambda item: -item[1])[:8])
        return {
            "venv_mb": round(du(venv) / 1e6, 1),
            "site_packages_mb": round(du(site) / 1e6, 1),
            "largest_mb": {name: round(size / 1e6, 1) for name, size in largest.items()},
        }


def du(path: Path) -> int:
    """Bytes on disk under ``path``, as ``du`` counts them (blocks, each file once)."""
    done = subprocess.run(["du", "-s", "--block-size=1", str(path)], capture_output=True, text=True, check=True)
    return int(done.stdout.split()[0])


def median(values: list[float], digits: int = 3) -> float:
    return round(statistics.median(values), digits)


def differences(seen: dict[str, list[float]], minuend: str, subtrahend: str) -> list[float]:
    """Round by round, one figure less another (each round's two runs saw the same machine)."""
    return [a - b for a, b in zip(seen[minuend], seen[subtrahend], strict=True)]


def measure(trees: dict[str, tuple[str, Path]], rounds: int) -> dict[str, dict[str, Any]]:
    runs: dict[str, dict[str, list[float]]] = {name: {} for name in trees}
    for _ in range(rounds):
        for name, (python, checkout) in trees.items():
            seen = runs[name]
            with tempfile.TemporaryDirectory(prefix="mockserver-weight-") as scratch:
                for test in TESTS:
                    seconds, cpu, peak = pytest_session(python, checkout, test, Path(scratch))
                    seen.setdefault(f"{test}_s", []).append(seconds)
                    seen.setdefault(f"{test}_cpu_s", []).append(cpu)
                    seen.setdefault(f"{test}_peak_rss_mib", []).append(peak)
            for server, start in (("serve", serve), ("fastapi_floor", lambda py, _: fastapi_floor(py))):
                seconds, cpu, idle = start(python, checkout)
                seen.setdefault(f"{server}_first_health_s", []).append(seconds)
                seen.setdefault(f"{server}_first_health_cpu_s", []).append(cpu)
                seen.setdefault(f"{server}_idle_rss_mib", []).append(idle)
    report: dict[str, dict[str, Any]] = {}
    for name, seen in runs.items():
        figures: dict[str, Any] = {key: median(values) for key, values in seen.items()}
        for pair, (with_it, without) in PAIRS.items():
            figures[f"{pair}_extra_s"] = median(differences(seen, f"{with_it}_s", f"{without}_s"))
            figures[f"{pair}_extra_cpu_s"] = median(differences(seen, f"{with_it}_cpu_s", f"{without}_cpu_s"))
            memory = differences(seen, f"{with_it}_peak_rss_mib", f"{without}_peak_rss_mib")
            figures[f"{pair}_extra_peak_rss_mib"] = median(memory, 1)
        report[name] = figures
    return report


def main() -> None:
    parser = arguments("weight", __doc__)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--baseline-python", help="the interpreter for --baseline-checkout")
    parser.add_argument("--baseline-checkout", type=Path, help="another checkout, measured beside this one")
    parser.add_argument("--venv", action="store_true", help="only the installed size: a new venv per checkout")
    args = parser.parse_args()
    output = args.output or RESULTS / ("weight_installed.json" if args.venv else "weight.json")
    trees = {"mockserver": (sys.executable, ROOT)}
    if args.baseline_checkout:
        trees["baseline"] = (args.baseline_python or sys.executable, args.baseline_checkout.resolve())
    report: dict[str, Any] = {
        "cpus": os.cpu_count(),
        "load_average": os.getloadavg(),
        "checkouts": {name: str(checkout) for name, (_, checkout) in trees.items()},
    }
    if args.venv:
        report.update({name: venv_size(python, checkout) for name, (python, checkout) in trees.items()})
    else:
        report.update({"rounds": args.rounds, **measure(trees, args.rounds)})
    report["load_average_after"] = os.getloadavg()
    print(write_results(output, report).read_text())


if __name__ == "__main__":
    main()
