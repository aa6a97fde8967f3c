"""Model presets (issue 13, item 2): the papers' models as data files, `--model preset:NAME[@URL]`, the settings
per prompt a real local server receives, and the errors for an unknown preset or an unset key variable."""

from __future__ import annotations

import json

import pytest
from conftest import run_cli, run_cli_json

from zuhyo.models.presets import PresetError, get_preset, load_presets, resolve_model

HAKUSHO_MODELS = {"qwen3-vl-4b", "qwen3-vl-8b", "internvl3.5-4b", "internvl3.5-8b", "sarashina2.2-vision-3b",
                  "llm-jp-4-vl-9b-beta", "gpt-4o", "gpt-5.1", "gemini-3-pro"}
"""HakushoBench §5.1 names nine models (the issue says eight)."""


def _is_cot(body: dict) -> bool:
    return "Answer:" in body["messages"][-1]["content"][-1]["text"]


def test_bundled_presets_cover_both_papers_with_the_stated_settings():
    presets = load_presets()
    assert HAKUSHO_MODELS <= set(presets)
    assert {"gemini-2.5-pro", "qwen2.5-vl-72b", "gemma-3-27b", "llama-4-maverick-17b"} <= set(presets)
    for p in presets.values():
        assert p.endpoint in ("openai", "gemini", "vllm") and p.model and p.papers
        assert bool(p.serve) == (p.endpoint == "vllm")
        assert bool(p.api_key_env) == (p.endpoint != "vllm")
    gpt = presets["gpt-5.1"]
    assert gpt.model == "gpt-5.1-2025-11-13" and gpt.settings["*"].fields["temperature"] is None
    assert gpt.settings["direct"].extra_body == {"reasoning_effort": "none"}
    assert gpt.settings["cot"].extra_body == {"reasoning_effort": "medium"}
    gemini = presets["gemini-3-pro"]
    assert gemini.settings["*"].fields == {"temperature": 0.0, "max_tokens": 8192}
    assert gemini.settings["*"].extra_body == {"reasoning_effort": "medium"}
    assert gemini.base_url.endswith("/v1beta/openai") and gemini.api_key_env == "GEMINI_API_KEY"
    for name in HAKUSHO_MODELS - {"gpt-5.1", "gemini-3-pro"}:
        assert presets[name].settings["*"].fields == {"temperature": 0.0, "max_tokens": 8192}, name


def test_gpt51_preset_sends_the_papers_settings_per_prompt(tmp_path, fake_server):
    server = fake_server(record_bodies=True)
    summary = run_cli_json("eval", "--bench", "sample-ja", "--limit", "2", "--runs", "1", "--prompt", "both",
                           "--judge", "none", "--model", f"preset:gpt-5.1@{server.base_url}",
                           "--out", str(tmp_path / "run"), "--quiet", env={"OPENAI_API_KEY": "sk-test"})
    assert summary["inference"]["ok"] == 4
    bodies = server.state.bodies
    assert len(bodies) == 4
    for body in bodies:
        rest = {k: v for k, v in body.items() if k != "messages"}
        effort = "medium" if _is_cot(body) else "none"
        # No temperature (GPT-5.1 takes none) and no max_tokens (its API wants max_completion_tokens).
        assert rest == {"model": "gpt-5.1-2025-11-13", "max_completion_tokens": 8192, "reasoning_effort": effort}
    spec = f"openai:gpt-5.1-2025-11-13@{server.base_url}"
    assert {e["model"] for e in summary["entries"]} == {spec}
    manifest = json.loads((tmp_path / "run" / "run.json").read_text())
    assert manifest["generation_by_prompt"][spec]["direct"]["temperature"] is None
    assert "sk-test" not in (tmp_path / "run" / "run.json").read_text()


def test_open_model_preset_with_the_run_overriding_one_setting(tmp_path, fake_server):
    server = fake_server(record_bodies=True)
    run_cli("eval", "--bench", "sample-ja", "--limit", "1", "--runs", "1", "--prompt", "cot", "--judge", "none",
            "--model", f"preset:qwen3-vl-8b@{server.base_url}", "--out", str(tmp_path / "run"), "--quiet",
            "--gen-for", "cot:max_tokens=1024")
    (body,) = server.state.bodies
    assert {k: v for k, v in body.items() if k != "messages"} == {
        "model": "Qwen/Qwen3-VL-8B-Instruct", "temperature": 0.0, "max_tokens": 1024}


def test_unknown_preset_names_the_known_ones(tmp_path):
    with pytest.raises(PresetError, match="unknown model preset 'gpt-9'; known presets: .*gpt-5.1"):
        get_preset("gpt-9")
    proc = run_cli("eval", "--bench", "sample-ja", "--model", "preset:gpt-9", "--out", str(tmp_path / "r"),
                   check=False)
    assert proc.returncode != 0
    assert "unknown model preset 'gpt-9'" in proc.stderr and "qwen3-vl-8b" in proc.stderr
    assert not (tmp_path / "r").exists()


def test_unset_api_key_variable_is_an_error_naming_it(tmp_path):
    with pytest.raises(PresetError, match=r"'gemini-3-pro' needs its API key in \$GEMINI_API_KEY"):
        resolve_model("preset:gemini-3-pro", {})
    assert resolve_model("preset:gemini-3-pro", {"GEMINI_API_KEY": "k"}).api_key == "k"
    assert resolve_model("preset:qwen3-vl-4b", {}).api_key is None  # a local vLLM server needs none
    proc = run_cli("eval", "--bench", "sample-ja", "--model", "preset:gpt-5.1", "--out", str(tmp_path / "r"),
                   check=False, env={"OPENAI_API_KEY": ""})
    assert proc.returncode != 0 and "$OPENAI_API_KEY, which is not set" in proc.stderr


def test_zuhyo_list_shows_the_presets():
    doc = run_cli_json("list")
    names = {e["name"]: e["description"] for e in doc["model_presets"]}
    assert {f"preset:{n}" for n in HAKUSHO_MODELS} <= set(names)
    assert "reasoning_effort=medium" in names["preset:gpt-5.1"] and "temperature=omit" in names["preset:gpt-5.1"]


def test_preset_as_judge_sends_no_temperature(tmp_path, fake_server):
    """HakushoBench §5.1's judge is GPT-5.1, which takes no temperature: llm:preset:gpt-5.1 omits it."""
    model = fake_server()
    judge = fake_server(record_bodies=True, default_answer="reasoning: same\ncorrect: yes")
    judge_spec = f"llm:preset:gpt-5.1@{judge.base_url}"
    summary = run_cli_json("eval", "--bench", "sample-ja", "--limit", "2", "--runs", "1", "--prompt", "direct",
                           "--judge", judge_spec, "--model", f"openai:fake@{model.base_url}",
                           "--out", str(tmp_path / "run"), "--quiet", env={"OPENAI_API_KEY": "sk-test"})
    assert [e["judge"] for e in summary["entries"]] == [judge_spec]
    assert summary["entries"][0]["mean"] == 1.0
    assert len(judge.state.bodies) == 2
    for body in judge.state.bodies:
        assert {k: v for k, v in body.items() if k != "messages"} == {
            "model": "gpt-5.1-2025-11-13", "max_completion_tokens": 8192}
