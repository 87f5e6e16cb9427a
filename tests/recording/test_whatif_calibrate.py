"""``whatif`` and ``calibrate`` on sessions recorded from a real server on loopback."""

from __future__ import annotations

import json
import time
from pathlib import Path

import openai
import pytest
import yaml

from mockserver import MockServer
from mockserver.cassettes import files
from mockserver.cassettes.format import encode
from mockserver.cli import main
from mockserver.config.fixture import load_fixture
from mockserver.recording import calibrate, whatif
from mockserver.testing.recorder import RecordingProxy
from tests.conftest import PREVIEW_KEY

MODEL = "gpt-5.6-sol"
CLIENT_S = 0.03  # the agent's own work between calls


def _record_agent_session(upstream: MockServer, cassette: Path, calls: int = 10) -> None:
    with RecordingProxy(upstream.url, cassette) as proxy, openai.OpenAI(
        base_url=proxy.base_url, api_key=PREVIEW_KEY, max_retries=0
    ) as client:  # fmt: skip
        history = [{"role": "user", "content": "Plan a trip to Lisbon, one step at a time."}]
        for step in range(calls):
            stream = client.chat.completions.create(
                model=MODEL, messages=history, stream=True, stream_options={"include_usage": True}, max_tokens=40 + step
            )
            text = "".join(c.choices[0].delta.content or "" for c in stream if c.choices)
            history += [{"role": "assistant", "content": text}, {"role": "user", "content": f"Step {step + 2}?"}]
            time.sleep(CLIENT_S)  # a tool runs


@pytest.fixture(scope="module")
def session(tmp_path_factory: pytest.TempPathFactory) -> Path:
    cassette = tmp_path_factory.mktemp("agent") / "agent.jsonl"
    with MockServer(time_scale=0.05, seed=5) as upstream:  # real pacing, twenty times faster
        _record_agent_session(upstream, cassette)
    return cassette


def test_whatif_computes_each_tier_from_its_profile(session: Path, capsys: pytest.CaptureFixture[str]) -> None:
    fixture = load_fixture()
    calls = whatif.session(files.load(session).records)
    assert len(calls) == 10 and all(c.client_s >= CLIENT_S * 0.9 for c in calls[1:])
    rows = {r.tier: r for r in whatif.compute(fixture, calls, ["default", "ultrafast"])}
    client = sum(c.client_s for c in calls)
    for tier in ("default", "ultrafast"):
        profile = fixture.profiles[tier]
        model = sum(
            profile.ttft_ms / 1000
            + (c.figures.input_tokens or 0) / (profile.prefill_tokens_per_second or float("inf"))
            + (c.figures.output_tokens or 0) / profile.tokens_per_second
            for c in calls
        )
        assert rows[tier].model_s == pytest.approx(model) and rows[tier].client_s == pytest.approx(client)
        assert rows[tier].end_to_end_s == pytest.approx(model + client)
    assert rows["ultrafast"].speedup_vs_standard == pytest.approx(
        rows["default"].end_to_end_s / rows["ultrafast"].end_to_end_s
    )
    # The client's own time does not speed up: end to end gains less than the raw rate (750 / 54).
    assert 1 < rows["ultrafast"].speedup_vs_standard < 750 / 54
    assert rows["default"].cost_usd > 0

    assert main(["whatif", str(session), "--tier", "default", "--tier", "ultrafast", "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert [t["tier"] for t in shown["tiers"]] == ["recorded", "default", "ultrafast"] and shown["calls"] == 10
    picture = session.parent / "whatif.png"
    assert main(["whatif", str(session), "--plot", str(picture)]) == 0
    table = capsys.readouterr().out
    assert table.startswith("10 calls") and "ultrafast" in table and "computed" in table
    assert picture.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_whatif_drive_measures_what_it_computed(session: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A generous real-clock bound (the machine is shared); benchmarks/load/replay.py measures it closely."""
    scale = 0.25
    with MockServer(replay=[str(session)], replay_timing="tier", time_scale=scale) as server:
        assert main(["whatif", str(session), "--tier", "ultrafast", "--drive", server.url, "--time-scale", str(scale),
                     "--json"]) == 0  # fmt: skip
    rows = json.loads(capsys.readouterr().out)["tiers"]
    computed, measured = rows[1], rows[2]
    assert measured["measured"] and measured["tier"] == computed["tier"] == "ultrafast"
    assert measured["end_to_end_s"] == pytest.approx(computed["end_to_end_s"], rel=0.2)
    assert measured["cost_usd"] == computed["cost_usd"] > 0  # the recorded tokens at the tier's prices


RATE, TTFT_MS = 300.0, 150.0
PACED = f"""
extends: default
profiles:
  default:
    {{tokens_per_second: {RATE}, ttft_ms: {TTFT_MS}, jitter: 0, tokens_per_chunk: 1, prefill_tokens_per_second: null}}
"""


def test_calibrate_writes_the_rates_it_was_recorded_at(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The 3% figure is measured by benchmarks/load/replay.py on its own; here, a bound for a shared machine."""
    config = tmp_path / "paced.yaml"
    config.write_text(PACED)
    cassette = tmp_path / "paced.jsonl"
    with MockServer(config=str(config), time_scale=1, seed=2) as upstream, RecordingProxy(
        upstream.url, cassette
    ) as proxy, openai.OpenAI(base_url=proxy.base_url, api_key=PREVIEW_KEY, max_retries=0) as client:  # fmt: skip
        for n in range(6):
            list(client.chat.completions.create(
                model=MODEL, messages=[{"role": "user", "content": f"Tell me about {n}."}], stream=True, max_tokens=90,
                stream_options={"include_usage": True},
            ))  # fmt: skip
    [measured] = calibrate.measure(files.load(cassette).records)
    assert measured.streams == 6 and measured.tokens_per_event == pytest.approx(1.0)
    assert measured.rate_median == pytest.approx(RATE, rel=0.1)
    assert measured.ttft_p50_ms == pytest.approx(TTFT_MS, rel=0.2)

    out = tmp_path / "calibrated.yaml"
    assert main(["calibrate", str(cassette), "--out", str(out)]) == 0
    text = out.read_text()
    assert text.startswith("# Calibrated by `mockserver calibrate` from paced.jsonl (recorded ")
    written = yaml.safe_load(text)
    assert written["extends"] == "default" and list(written["profiles"]) == ["default"]
    assert written["profiles"]["default"]["tokens_per_second"] == pytest.approx(RATE, rel=0.1)
    assert "6 streams" in written["profiles"]["default"]["source"]
    assert (
        load_fixture(out).profiles["default"].tokens_per_second == written["profiles"]["default"]["tokens_per_second"]
    )


def test_too_few_streams_are_reported_not_written(
    session: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    records = files.load(session).records[:3]
    short = tmp_path / "short.jsonl"
    short.write_bytes(b"".join(encode(r) for r in records))
    assert main(["calibrate", str(short)]) == 2
    err = capsys.readouterr().err
    assert "fewer than 5 streams: not written" in err and "nothing written" in err
