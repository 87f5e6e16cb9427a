"""Timing presets: every preset loads, combines, lists its sources, and serves its models at its rates."""

from __future__ import annotations

import random
import subprocess
import sys
from pathlib import Path

import httpx
import openai
import pytest
import yaml

from mockserver import MockServer
from mockserver.cli import list_presets
from mockserver.config import presets
from mockserver.config.fixture import ConfigError, default_fixture_path, load_fixture
from mockserver.config.settings import Settings
from mockserver.engine.pacing import FakeClock
from mockserver.service import access
from mockserver.service.exchange import Usage
from mockserver.service.ledger import cost_usd
from tests.conftest import PREVIEW_KEY

ALL = presets.names()

# The rates the announcement and the providers state (docs/presets.md tables them).
STATED = {
    ("openai", "gpt-5.6-sol", "default"): 54,
    ("openai", "gpt-5.6-sol", "priority"): 135,
    ("openai", "gpt-5.6-sol", "ultrafast"): 750,
    ("claude-opus-4.8-fast", "claude-opus-4-8", "priority"): 150,
    ("claude-fable-5", "claude-fable-5", "default"): 68,
    ("claude-fast-mode", "claude-fast-mode", "default"): 45,
    ("gpu", "meta-llama/Llama-3.3-70B-Instruct", "default"): 45,
}


def test_every_built_in_preset_is_listed() -> None:
    assert set(ALL) >= {
        "openai",
        "claude-opus-4.8-fast",
        "claude-fable-5",
        "claude-fast-mode",
        "groq",
        "cerebras",
        "gpu",
    }


@pytest.mark.parametrize("name", ALL)
def test_each_preset_loads_alone_and_every_profile_names_its_source(name: str) -> None:
    fixture = load_fixture(presets=[name])
    assert fixture.presets == [name]
    for row in presets.rows(name):
        assert row.source, f"{name}/{row.model}/{row.tier} has no source"
        model = fixture.model(row.model)
        assert model is not None and row.tier in model.tiers


def test_every_figure_in_a_preset_file_has_a_comment_or_source() -> None:
    for path in presets.presets_dir().glob("*.yaml"):
        for line in path.read_text().splitlines():
            stripped = line.strip()
            if stripped.startswith(("tokens_per_second", "ttft_ms", "chinese_characters")):
                assert "#" in line, f"{path.name}: no source comment on {stripped!r}"


def test_stated_rates() -> None:
    fixture = load_fixture(presets=ALL)
    for (_, model_id, tier), rate in STATED.items():
        model = fixture.model(model_id)
        assert model is not None
        assert fixture.profile(model, tier).tokens_per_second == rate


def test_presets_combine_and_keep_the_fixture_keys_and_models() -> None:
    fixture = load_fixture(presets=["claude-opus-4.8-fast", "groq"])
    ids = {m.id for m in fixture.models}
    assert {"gpt-5.6-sol", "claude-opus-4-8", "llama-3.1-8b-instant"} <= ids
    assert fixture.account(PREVIEW_KEY) is not None
    assert fixture.pricing.price("claude-opus-4-8").output_per_million == 25.0


def test_a_fixture_may_name_its_presets(tmp_path: Path) -> None:
    data = yaml.safe_load(default_fixture_path().read_text())
    data["presets"] = ["cerebras"]
    path = tmp_path / "with-presets.yaml"
    path.write_text(yaml.safe_dump(data))
    fixture = load_fixture(path, presets=["gpu"])
    assert fixture.presets == ["cerebras", "gpu"]
    assert fixture.model("gpt-oss-120b") is not None


def test_an_unknown_preset_is_a_config_error_naming_the_known_ones() -> None:
    with pytest.raises(ConfigError, match="unknown preset 'nope'; known: cerebras"):
        load_fixture(presets=["nope"])


def test_settings_take_presets_from_the_environment() -> None:
    settings = Settings.from_env({"MOCKSERVER_PRESETS": "groq, claude-fable-5"})
    assert settings.presets == ("groq", "claude-fable-5")


def test_cli_lists_presets_with_rates_and_sources() -> None:
    text = list_presets()
    assert 'claude-opus-4-8 [anthropic API, speed "fast"]: 150 tok/s' in text
    assert "gpt-5.6-sol [openai API, service_tier ultrafast]: 750 tok/s (Chinese 550 chars/s)" in text
    assert "30-60 tok/s (mode 45)" in text
    assert text.count("source: ") == sum(len(presets.rows(n)) for n in ALL)
    out = subprocess.run([sys.executable, "-m", "mockserver", "presets"], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == text.strip()


def test_gpu_spread_is_seeded_bounded_and_centred() -> None:
    fixture = load_fixture(presets=["gpu"])
    model = fixture.model("meta-llama/Llama-3.3-70B-Instruct")
    assert model is not None
    profile = fixture.profile(model, "default")
    rates = [profile.rate(random.Random(seed)) for seed in range(2000)]
    assert all(30 <= r <= 60 for r in rates)
    assert 43 < sum(rates) / len(rates) < 47  # a triangular spread with its mode at 45 averages 45
    assert max(rates) - min(rates) > 20
    assert profile.rate(random.Random(7)) == profile.rate(random.Random(7))


def test_chinese_text_on_ultrafast_runs_at_550_characters_per_second() -> None:
    fixture = load_fixture(presets=["openai"])
    model = fixture.model("gpt-5.6-sol")
    assert model is not None
    profile = fixture.profile(model, "ultrafast")
    assert profile.rate(random.Random(0), "zh") == 550
    assert profile.rate(random.Random(0), "en") == 750


def test_a_rate_header_overrides_the_spread() -> None:
    fixture = load_fixture(presets=["gpu"])
    account = fixture.account(PREVIEW_KEY)
    assert account is not None
    admission = access.resolve(
        fixture, account, {"x-mock-tokens-per-second": "500"}, "meta-llama/Llama-3.3-70B-Instruct", None
    )
    assert admission.profile.rate(random.Random(1)) == 500


def test_fast_mode_has_its_own_price_factor() -> None:
    fixture = load_fixture(presets=["claude-opus-4.8-fast"])
    usage = Usage(input_tokens=1_000_000, output_tokens=1_000_000)
    assert cost_usd(fixture, "claude-opus-4-8", "default", usage) == pytest.approx(30.0)
    assert cost_usd(fixture, "claude-opus-4-8", "priority", usage) == pytest.approx(180.0)
    assert cost_usd(fixture, "gpt-5.6-sol", "priority", usage) == pytest.approx(70.0)


def test_open_model_ids_are_served_over_the_openai_api() -> None:
    with MockServer(time_scale=0, seed=2, presets=["groq", "cerebras", "claude-fable-5"]) as server:
        client = openai.OpenAI(base_url=server.base_url, api_key=PREVIEW_KEY, _strict_response_validation=True)
        listed = {m.id for m in client.models.list()}
        assert {"openai/gpt-oss-120b", "llama-3.3-70b-versatile", "gpt-oss-120b", "llama3.1-8b"} <= listed
        assert "claude-fable-5" not in listed  # served on the Anthropic API only
        reply = client.chat.completions.create(
            model="llama-3.1-8b-instant", messages=[{"role": "user", "content": "hi"}], max_tokens=12
        )
        assert reply.model == "llama-3.1-8b-instant" and reply.usage is not None
        assert reply.usage.completion_tokens == 12
        with pytest.raises(openai.NotFoundError):
            client.chat.completions.create(model="claude-fable-5", messages=[{"role": "user", "content": "hi"}])


def test_a_preset_profile_paces_the_stream_on_the_fake_clock() -> None:
    clock = FakeClock()
    fixture = load_fixture(presets=["claude-fast-mode", "groq"])
    from mockserver.server.app import create_app

    app = create_app(Settings(), fixture=fixture, clock=clock)
    with MockServer(app=app, port=0) as server:
        body = {"model": "llama-3.3-70b-versatile", "messages": [{"role": "user", "content": "hi"}], "max_tokens": 280}
        started = clock.now()
        reply = httpx.post(
            f"{server.base_url}/chat/completions",
            json=body,
            headers={"authorization": f"Bearer {PREVIEW_KEY}", "x-mock-output-tokens": "280"},
        )
        assert reply.status_code == 200
        # TTFT 150 ms, then 280 tokens at 280 tok/s: the schedule ends 1.15 s after the request arrived.
        assert clock.now() - started == pytest.approx(1.15, abs=0.01)


def test_the_start_up_summary_names_the_presets_and_the_anthropic_api() -> None:
    from mockserver.server.startup import banner

    text = banner(Settings(), load_fixture(presets=["claude-opus-4.8-fast", "gpu"]), "http://127.0.0.1:8000")
    assert "  presets      claude-opus-4.8-fast, gpu" in text
    assert "export ANTHROPIC_BASE_URL=http://127.0.0.1:8000 " in text
    assert 'claude-opus-4-8 (Anthropic API): default 60 tokens/s, priority (speed: "fast") 150 tokens/s' in text
    assert "ANTHROPIC_BASE_URL" not in banner(Settings(), load_fixture(), "http://127.0.0.1:8000")


def test_a_preset_can_be_added_at_runtime_through_the_control_plane() -> None:
    with MockServer(time_scale=0, presets=["claude-fable-5"]) as server:
        server.configure(presets=["claude-fable-5", "groq"])
        assert server.state.fixture.presets == ["claude-fable-5", "groq"]
        assert server.state.fixture.model("llama-3.1-8b-instant") is not None
        assert server.state.fixture.model("claude-fable-5") is not None
        refused = httpx.patch(f"{server.url}/_mock/config", json={"presets": ["nope"]})
        assert refused.status_code == 400 and "unknown preset 'nope'" in refused.json()["error"]["message"]
        server.reset()
        assert server.state.fixture.model("llama-3.1-8b-instant") is None
