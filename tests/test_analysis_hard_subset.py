"""`zuhyo analyze hard-subset`: items a model got wrong, from a run set, exported as a loadable benchmark."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from conftest import run_cli, run_cli_json
from PIL import Image

from zuhyo.analysis.hard_subset import ItemTally, is_hard, select_hard_subset, write_hard_subset
from zuhyo.benchmarks.base import BenchmarkSource, load_benchmark
from zuhyo.errors import ZuhyoError
from zuhyo.evaluate.records import JudgmentRecord, PredictionRecord
from zuhyo.evaluate.store import AppendLog

MODEL = "openai:strong@http://127.0.0.1:9/v1"
OTHER = "openai:weak@http://127.0.0.1:9/v1"
PROMPTS = ("direct", "cot")

# Per sample: the verdict of each (prompt, run) of MODEL under judge "rules" — or "error" (the call failed),
# "unjudged" (ok but no judgment), "stale" (judged an older response), "judge_error".
PLAN: dict[str, list[str]] = {
    "s1": ["correct", "correct", "correct", "correct"],
    "s2": ["incorrect", "correct", "correct", "correct"],
    "s3": ["incorrect", "incorrect", "incorrect", "incorrect"],
    "s4": ["incorrect", "incorrect", "correct", "incorrect"],
    "s5": ["error", "error", "error", "error"],
    "s6": ["undecided", "undecided", "unscored", "stale"],
    "s8": ["incorrect", "unjudged", "error", "judge_error"],
}
ALL_IDS = ["s1", "s2", "s3", "s4", "s5", "s6", "s7", "s8"]  # s7 never evaluated


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _make_bench(root: Path) -> Path:
    (root / "imgs").mkdir(parents=True)
    rows = []
    for i, sid in enumerate(ALL_IDS):
        Image.new("RGB", (20, 12), (30 * i, 100, 200 - 20 * i)).save(root / "imgs" / f"{sid}.png")
        rows.append({"id": sid, "benchmark": "hb", "question": f"question {sid}?", "answers": [f"ans {sid}"],
                     "image": {"path": f"imgs/{sid}.png"}, "image_type": "Bar", "flags": ["Multi-hop"]})
    path = root / "hb.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def _make_run(tmp_path: Path, *, extra_judge: bool = False) -> Path:
    bench = _make_bench(tmp_path / "bench")
    run = tmp_path / "run"
    run.mkdir()
    (run / "run.json").write_text(json.dumps({
        "benchmarks": [{"name": "local", "path": str(bench), "hf_id": None, "revision": None, "split": None,
                        "cache_dir": None, "options": {}}],
        "models": [MODEL, OTHER], "prompts": list(PROMPTS), "runs": 2, "judge": "rules", "limit": None}))
    with AppendLog(run / "predictions.jsonl") as preds, AppendLog(run / "judgments.jsonl") as judgs:
        for sid, plan in [*PLAN.items(), ("orphan", ["incorrect"] * 4)]:
            for k, verdict in enumerate(plan):
                prompt, run_index = PROMPTS[k // 2], k % 2
                response = f"reply {sid} {k}"
                status = "error" if verdict == "error" else "ok"
                preds.append(PredictionRecord(benchmark="local", sample_id=sid, model=MODEL, prompt=prompt,
                                              run_index=run_index, status=status,
                                              response=response if status == "ok" else None,
                                              answer=response if status == "ok" else None))
                if verdict in ("error", "unjudged"):
                    continue
                label = {"stale": "incorrect", "judge_error": "unscored"}.get(verdict, verdict)
                judgs.append(JudgmentRecord(
                    benchmark="local", sample_id=sid, model=MODEL, prompt=prompt, run_index=run_index,
                    judge="rules", verdict=label, score={"correct": 1.0, "incorrect": 0.0}.get(label),
                    response_sha=_sha("an older reply" if verdict == "stale" else response),
                    judge_error=verdict == "judge_error"))
                if extra_judge:
                    judgs.append(JudgmentRecord(
                        benchmark="local", sample_id=sid, model=MODEL, prompt=prompt, run_index=run_index,
                        judge="metric:exact", verdict="correct", score=1.0, response_sha=_sha(response)))
            # The other model got everything wrong: it must not leak into MODEL's subset.
            preds.append(PredictionRecord(benchmark="local", sample_id=sid, model=OTHER, prompt="direct",
                                          run_index=0, status="ok", response="x", answer="x"))
            judgs.append(JudgmentRecord(benchmark="local", sample_id=sid, model=OTHER, prompt="direct",
                                        run_index=0, judge="rules", verdict="incorrect", score=0.0,
                                        response_sha=_sha("x")))
    return run


@pytest.mark.parametrize(("rule", "expected"), [
    ("any-wrong", ["s2", "s3", "s4", "s8"]),
    ("all-wrong", ["s3", "s8"]),
    ("majority-wrong", ["s3", "s4", "s8"]),
])
def test_rules_and_exclusions(tmp_path: Path, rule: str, expected: list[str]) -> None:
    run = _make_run(tmp_path)
    subset = select_hard_subset(run, MODEL, rule=rule)  # type: ignore[arg-type]
    assert subset.judge == "rules" and subset.prompts == ["cot", "direct"]
    assert [s.id for s in subset.samples] == expected
    c = subset.counts
    assert c["benchmark_samples"] == 8 and c["kept"] == len(expected)
    assert c["undetermined"] == 2  # s5 (all errors), s6 (undecided / unscored / stale only)
    assert c["not_evaluated"] == 1  # s7
    assert c["not_hard"] == 8 - len(expected) - 3
    assert c["excluded_predictions"] == {"error": 5, "unjudged": 1, "stale": 1, "judge_error": 1, "undecided": 2,
                                         "unscored": 1}
    assert c["orphan_predictions"] == 1


def test_prompt_filter_changes_the_tally(tmp_path: Path) -> None:
    run = _make_run(tmp_path)
    # cot only: s2 (wrong only under direct) is no longer hard; s4 has cot verdicts correct, incorrect.
    subset = select_hard_subset(run, MODEL, prompts=["cot"], rule="all-wrong")
    assert [s.id for s in subset.samples] == ["s3"]
    s3 = subset.samples[0].metadata["hard_subset"]
    assert s3["incorrect"] == 2 and s3["decided"] == 2 and s3["rule"] == "all-wrong"


def test_export_is_a_loadable_benchmark_with_images(tmp_path: Path) -> None:
    run = _make_run(tmp_path)
    out = tmp_path / "export" / "hard.jsonl"
    counts = write_hard_subset(select_hard_subset(run, MODEL), out)
    assert counts == {"samples": 4, "images_copied": 4, "images_missing": 0}
    loaded = load_benchmark("local", BenchmarkSource(path=out))
    assert not loaded.errors and [s.id for s in loaded.samples] == ["s2", "s3", "s4", "s8"]
    assert not loaded.missing_images()
    for s in loaded.samples:
        assert s.image is not None and s.image.path.startswith("hard_images/")  # copied beside the file
        original = (tmp_path / "bench" / "imgs" / f"{s.id}.png").read_bytes()
        assert s.image.resolve_path(loaded.base_dir).read_bytes() == original
        assert s.question == f"question {s.id}?" and s.answers == [f"ans {s.id}"] and s.image_type.value == "Bar"
        assert s.metadata["hard_subset"]["model"] == MODEL
    info = run_cli_json("bench", "info", "local", "--path", str(out))
    assert info["samples"] == 4 and info["images_missing"] == 0


def test_errors_name_what_is_wrong(tmp_path: Path) -> None:
    run = _make_run(tmp_path, extra_judge=True)
    with pytest.raises(ZuhyoError, match="several judges .*metric:exact.*rules.*--judge"):
        select_hard_subset(run, MODEL)
    assert [s.id for s in select_hard_subset(run, MODEL, judge="metric:exact").samples] == []
    with pytest.raises(ZuhyoError, match="model 'nope' has no predictions.*openai:strong"):
        select_hard_subset(run, "nope", judge="rules")
    with pytest.raises(ZuhyoError, match="judge 'llm:x' is not in this run set"):
        select_hard_subset(run, MODEL, judge="llm:x")
    with pytest.raises(ZuhyoError, match="prompt 'cot\\+ocr' has no predictions"):
        select_hard_subset(run, MODEL, judge="rules", prompts=["cot+ocr"])
    with pytest.raises(ZuhyoError, match="not a zuhyo run set"):
        select_hard_subset(tmp_path, MODEL)


def test_is_hard_rules() -> None:
    assert is_hard(ItemTally(), "any-wrong") is None
    t = ItemTally(correct=1, incorrect=1)
    assert (is_hard(t, "any-wrong"), is_hard(t, "all-wrong"), is_hard(t, "majority-wrong")) == (True, False, False)
    t = ItemTally(correct=1, incorrect=2)
    assert is_hard(t, "majority-wrong") is True


def test_cli_json_and_human(tmp_path: Path) -> None:
    run = _make_run(tmp_path)
    out = tmp_path / "h.jsonl"
    doc = run_cli_json("analyze", "hard-subset", str(run), "--model", MODEL, "--out", str(out),
                       "--rule", "majority-wrong")
    assert doc["kept"] == 3 and doc["export_samples"] == 3 and doc["judge"] == "rules"
    assert doc["excluded_predictions"]["error"] == 5 and doc["undetermined"] == 2
    stats = run_cli_json("analyze", "stats", "local", "--path", str(out))
    assert stats["questions"] == 3 and stats["images"] == 3
    human = run_cli("analyze", "hard-subset", str(run), "--model", MODEL, "--out", str(out))
    assert "kept 4 of 8" in human.stdout and "error 5" in human.stdout  # results: stdout
    bad = run_cli("analyze", "hard-subset", str(run), "--model", MODEL, "--out", str(out), "--rule", "some",
                  check=False)
    assert bad.returncode != 0 and "--rule must be one of" in bad.stderr


def _wrong_answer(reference: str) -> str:
    """A wrong answer the rules judge can decide: another number, the other of yes/no."""
    if reference in ("Yes", "No"):
        return "No" if reference == "Yes" else "Yes"
    float(reference)  # the samples picked below have numeric or yes/no references
    return "987654"


def test_end_to_end_with_real_eval(tmp_path: Path, shared_data: Path, fake_server) -> None:
    """`zuhyo eval` against the fake server, then the hard subset holds exactly the answers made wrong."""
    from zuhyo.evaluate.judges import JUDGES, ensure_registered

    ensure_registered()
    if "rules" not in JUDGES:
        pytest.skip("the rules judge is not available")
    samples = load_benchmark("chartqa", BenchmarkSource(path=shared_data / "chartqa")).samples[:24]
    wrong = [s for i, s in enumerate(samples) if i % 4 == 3]
    # Free-text references answered with nonsense: the rules judge cannot decide them (undecided, never "wrong").
    vague = [s for s in samples if s not in wrong and s.answer in ("North America", "Snapchat")]
    assert len(wrong) == 6 and len(vague) == 2
    key = {s.question: s.answer for s in samples}
    key.update({s.question: _wrong_answer(s.answer) for s in wrong})
    key.update({s.question: "zzzz-wrong" for s in vague})
    server = fake_server(answers=key)
    model = f"openai:fake@{server.base_url}"
    run = tmp_path / "run"
    run_cli_json("eval", "--bench", "chartqa", "--path", str(shared_data / "chartqa"), "--model", model,
                 "--out", str(run), "--quiet", "--runs", "2", "--prompt", "direct", "--judge", "rules",
                 "--limit", "24")
    out = tmp_path / "hard.jsonl"
    doc = run_cli_json("analyze", "hard-subset", str(run), "--model", model, "--out", str(out),
                       "--rule", "all-wrong")
    assert doc["benchmark_samples"] == 24 and doc["not_evaluated"] == 0 and doc["not_hard"] == 16
    exported = load_benchmark("local", BenchmarkSource(path=out))
    kept = {s.id for s in exported.samples}
    assert {s.id for s in wrong} <= kept <= {s.id for s in wrong + vague}
    assert doc["kept"] + doc["undetermined"] == 8
    assert doc["excluded_predictions"]["undecided"] == 2 * doc["undetermined"]
    assert not exported.missing_images() and len(exported.samples) == doc["kept"]
