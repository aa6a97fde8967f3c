"""Per-prompt generation settings (issue 13, item 1): what a real local server receives, what run.json records,
and which requests a change of settings re-runs."""

from __future__ import annotations

import json

import pytest
from conftest import run_cli

from zuhyo.benchmarks.base import load_benchmark
from zuhyo.evaluate.config import BenchmarkSpec, EvalConfig, request_fingerprint
from zuhyo.evaluate.prompting import render_prompt
from zuhyo.evaluate.run_settings import load_run_config, parse_prompt_settings
from zuhyo.evaluate.session import run_eval
from zuhyo.evaluate.store import RunStore
from zuhyo.models.base import GenerationConfig
from zuhyo.models.generation import SettingError

BASE_KEYS = {"model", "messages"}


def _is_cot_body(body: dict) -> bool:
    text = body["messages"][-1]["content"][-1]["text"]
    return "Answer:" in text  # the CoT template asks for a last line 'Answer: $ANSWER'


def _config(tmp_path, server, **kw) -> EvalConfig:
    return EvalConfig(benchmarks=(BenchmarkSpec("sample-ja"),), models=(f"openai:fake@{server.base_url}",),
                      out=tmp_path / "run", prompts=("direct", "cot"), runs=1, limit=2, judge=None, **kw)


def test_cli_flags_send_per_prompt_extra_body_and_omit_temperature(tmp_path, fake_server):
    server = fake_server(record_bodies=True)
    run_cli("eval", "--bench", "sample-ja", "--limit", "2", "--runs", "2", "--prompt", "both", "--judge", "none",
            "--model", f"openai:fake@{server.base_url}", "--out", str(tmp_path / "run"), "--quiet",
            "--extra-body-for", "direct:reasoning_effort=none", "--extra-body-for", "cot:reasoning_effort=medium",
            "--gen-for", "all:temperature=omit", "--gen-for", "cot:max_tokens=4096")
    bodies = server.state.bodies
    assert len(bodies) == 2 * 2 * 2
    for body in bodies:
        if _is_cot_body(body):
            assert set(body) == BASE_KEYS | {"max_tokens", "reasoning_effort"}
            assert (body["max_tokens"], body["reasoning_effort"]) == (4096, "medium")
        else:
            assert set(body) == BASE_KEYS | {"max_tokens", "reasoning_effort"}
            assert (body["max_tokens"], body["reasoning_effort"]) == (8192, "none")
    assert sum(_is_cot_body(b) for b in bodies) == 4
    manifest = json.loads((tmp_path / "run" / "run.json").read_text())
    by_prompt = manifest["generation_by_prompt"][f"openai:fake@{server.base_url}"]
    assert by_prompt["cot"] == {"temperature": None, "max_tokens": 4096, "seed": None,
                                "extra_body": {"reasoning_effort": "medium"}}
    assert by_prompt["direct"]["extra_body"] == {"reasoning_effort": "none"}
    assert manifest["prompt_settings"]["*"] == {"temperature": "omit"}


def test_run_config_toml_prompt_tables(tmp_path, fake_server):
    cfg = tmp_path / "run.toml"
    cfg.write_text('[generation]\nseed = 7\n\n[prompts.direct]\nmax_tokens = 256\n\n'
                   '[prompts.cot]\ntemperature = "omit"\nextra_body = { reasoning_effort = "medium", top_p = 1 }\n',
                   encoding="utf-8")
    server = fake_server(record_bodies=True)
    # The flag wins over the file for the same key.
    run_cli("eval", "--bench", "sample-ja", "--limit", "1", "--runs", "1", "--prompt", "both", "--judge", "none",
            "--model", f"openai:fake@{server.base_url}", "--out", str(tmp_path / "run"), "--quiet",
            "--config", str(cfg), "--extra-body-for", "cot:top_p=0.5")
    cot = [b for b in server.state.bodies if _is_cot_body(b)]
    direct = [b for b in server.state.bodies if not _is_cot_body(b)]
    assert len(cot) == len(direct) == 1
    assert {k: v for k, v in cot[0].items() if k != "messages"} == {
        "model": "fake", "max_tokens": 8192, "seed": 7, "reasoning_effort": "medium", "top_p": 0.5}
    assert {k: v for k, v in direct[0].items() if k != "messages"} == {
        "model": "fake", "temperature": 0.0, "max_tokens": 256, "seed": 7}


def test_changed_settings_rerun_only_the_requests_they_affect(tmp_path, fake_server):
    server = fake_server()
    spec = f"openai:fake@{server.base_url}"
    first = run_eval(_config(tmp_path, server))
    assert first["inference"]["ok"] == 4
    # No settings: the fingerprint is the one a run before per-prompt settings wrote, so old run sets resume.
    sample = load_benchmark("sample-ja").samples[0]
    old_fp = request_fingerprint(spec, GenerationConfig(), render_prompt(sample, "cot").version, None)
    recs = RunStore(tmp_path / "run").latest_predictions()
    assert recs[("sample-ja", sample.id, spec, "cot", 0)].fingerprint == old_fp
    assert run_eval(_config(tmp_path, server))["inference"]["skipped_done"] == 4
    before = server.state.requests
    changed = _config(tmp_path, server, prompt_settings=parse_prompt_settings(
        ["cot:reasoning_effort=medium"], "--extra-body-for", extra_only=True))
    third = run_eval(changed)
    assert third["inference"]["ok"] == 2 and third["inference"]["skipped_done"] == 2
    assert server.state.requests - before == 2
    latest = RunStore(tmp_path / "run").latest_predictions()
    assert latest[("sample-ja", sample.id, spec, "cot", 0)].fingerprint != old_fp
    assert latest[("sample-ja", sample.id, spec, "direct", 0)].fingerprint == \
        recs[("sample-ja", sample.id, spec, "direct", 0)].fingerprint


@pytest.mark.parametrize(("values", "message"), [
    (["cot:temperature=hot"], "--gen-for cot: temperature='hot' is not a number"),
    (["bogus:temperature=0"], "'bogus' is no prompt style"),
    (["cot-temperature"], "expected STYLE:key=value"),
    (["cot:max_tokens=0"], "max_tokens=0 must be at least 1"),
])
def test_bad_settings_are_refused_naming_the_item(values, message):
    with pytest.raises(SettingError, match=message.replace("(", r"\(").replace(")", r"\)")):
        parse_prompt_settings(values, "--gen-for", extra_only=False)


def test_run_config_errors(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text("[prompts.cott]\ntemperature = 0\n", encoding="utf-8")
    with pytest.raises(SettingError, match=r"\[prompts.cott\] names no prompt style"):
        load_run_config(bad)
    bad.write_text("[prompts.cot]\ntemprature = 0\n", encoding="utf-8")
    with pytest.raises(SettingError, match="unknown setting 'temprature'"):
        load_run_config(bad)
    proc = run_cli("eval", "--bench", "sample-ja", "--model", "ocr", "--out", str(tmp_path / "r"),
                   "--config", str(tmp_path / "missing.toml"), check=False)
    assert proc.returncode != 0 and "missing.toml" in proc.stderr
