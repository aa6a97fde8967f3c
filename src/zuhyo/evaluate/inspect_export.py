"""Export a run set as Inspect EvalLog JSON files, so runs open in Inspect's log viewer (`inspect view`).

One log per (model, benchmark, prompt, judge); zuhyo's runs map to Inspect epochs (run_index + 1). Written as
plain JSON in the EvalLog shape (no dependency on inspect-ai); a contract test reads them back with
``inspect_ai.log.read_eval_log`` when inspect-ai is installed. Errored predictions become samples with an
``error`` and no score. Undecided and unscored judgments are written as Inspect writes ``Score.unscored()``: value
NaN (serialised as the JSON constant ``NaN``, which Inspect's metrics and reducers skip) and a ``reason``
(``grader_failed`` when the judge itself failed, ``no_response`` for an empty reply, ``refusal``, else
``undecided``), with zuhyo's verdict and reason kept in ``metadata`` and ``explanation``.
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from zuhyo.evaluate.store import MANIFEST, SUMMARY, RunStore


def _iso(ts: float | None) -> str:
    return datetime.fromtimestamp(ts or 0, tz=UTC).isoformat()


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", text).strip("_")[:80]


def export_inspect_logs(out: Path, dest: Path) -> list[Path]:
    """Write the logs under ``dest``; returns their paths."""
    from zuhyo.evaluate.config import BenchmarkSpec
    from zuhyo.evaluate.session import load_benchmarks

    store = RunStore(out)
    manifest = store.read_json(MANIFEST) or {}
    summary = store.read_json(SUMMARY) or {"entries": []}
    specs = [BenchmarkSpec.from_json(b) for b in manifest.get("benchmarks", [])]
    benches, _ = load_benchmarks(specs, limit=manifest.get("limit"))
    samples = {(b.name, s.id): s for b in benches for s in b.samples}
    preds = store.latest_predictions()
    judgments = store.latest_judgments()
    by_group: dict[tuple[str, str, str], list[Any]] = defaultdict(list)
    for p in preds.values():
        by_group[(p.model, p.benchmark, p.prompt)].append(p)
    dest.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    for entry in summary.get("entries", []):
        judge = entry.get("judge")
        group = by_group.get((entry["model"], entry["benchmark"], entry["prompt"]), [])
        if not group:
            continue
        log = _eval_log(entry, judge, group, judgments, samples, manifest)
        path = dest / f"{_slug(entry['benchmark'])}_{_slug(entry['model'])}_{_slug(entry['prompt'])}_" \
                      f"{_slug(str(judge))}.json"
        path.write_text(json.dumps(log, ensure_ascii=False, indent=1), encoding="utf-8")
        written.append(path)
    return written


def _score(j: Any, p: Any) -> dict[str, Any]:
    """One judgment as an Inspect ``Score``: the judge's score in [0, 1], or Inspect's unscored form."""
    score: dict[str, Any] = {"answer": j.extracted_answer or p.answer, "explanation": j.reason,
                             "metadata": {"verdict": j.verdict, "decided_by": j.decided_by}}
    if j.verdict in ("correct", "incorrect"):
        score["value"] = j.score if j.score is not None else float(j.verdict == "correct")
        return score
    score["value"] = float("nan")
    if j.judge_error or j.decided_by == "error":
        score["reason"] = "grader_failed"
    elif p.outcome in ("refusal", "empty"):
        score["reason"] = "refusal" if p.outcome == "refusal" else "no_response"
    else:
        score["reason"] = "undecided"
    return score


def _eval_log(entry: dict, judge: str | None, preds: list[Any], judgments: dict, samples: dict,
              manifest: dict) -> dict[str, Any]:
    started = min((p.created for p in preds), default=0.0)
    finished = max((p.created for p in preds), default=0.0)
    scorer = judge or "none"
    eval_samples = []
    for p in sorted(preds, key=lambda r: (r.sample_id, r.run_index)):
        s = samples.get((p.benchmark, p.sample_id))
        j = judgments.get((*p.key, judge)) if judge else None
        item: dict[str, Any] = {
            "id": p.sample_id,
            "epoch": p.run_index + 1,
            "input": s.question if s else "",
            "target": list(s.answers) if s else [],
            "messages": [],
            "output": {"model": p.model, "choices": [], "completion": p.response or ""},
            "scores": {},
            "metadata": {"prompt": p.prompt, "outcome": p.outcome, "attempts": p.attempts},
        }
        if p.status == "ok":
            item["messages"] = [{"role": "user", "content": s.question if s else ""},
                                {"role": "assistant", "content": p.response or ""}]
            item["output"]["choices"] = [{"message": {"role": "assistant", "content": p.response or "",
                                                      "source": "generate"},
                                          "stop_reason": "stop" if p.finish_reason in (None, "stop") else "unknown"}]
        else:
            item["error"] = {"message": p.error or "error", "traceback": "", "traceback_ansi": ""}
        if j is not None:
            item["scores"][scorer] = _score(j, p)
        eval_samples.append(item)
    metrics = {}
    if entry.get("mean") is not None:
        metrics["accuracy"] = {"name": "accuracy", "value": entry["mean"]}
    if entry.get("std") is not None:
        metrics["stderr_runs"] = {"name": "std", "value": entry["std"]}
    return {
        "version": 2,
        "status": "success" if entry.get("n_errors", 0) == 0 else "error",
        "eval": {
            "task": f"zuhyo/{entry['benchmark']}",
            "task_id": _slug(f"{entry['benchmark']}-{entry['prompt']}"),
            "run_id": _slug(f"{entry['model']}-{entry['prompt']}"),
            "created": _iso(started),
            "model": entry["model"],
            "dataset": {"name": entry["benchmark"], "samples": entry.get("n_samples")},
            "config": {"epochs": len(entry.get("runs", [])) or 1},
            "task_args": {"prompt": entry["prompt"], "judge": judge},
            "metadata": {"zuhyo_generation": manifest.get("generation")},
        },
        "results": {
            "total_samples": len({p.sample_id for p in preds}),
            "completed_samples": sum(1 for p in preds if p.status == "ok"),
            "scores": [{"name": scorer, "scorer": scorer, "scored_samples": entry.get("n_scored"),
                        "unscored_samples": entry.get("n_unscored"), "metrics": metrics}],
        },
        "stats": {"started_at": _iso(started), "completed_at": _iso(finished)},
        "samples": eval_samples,
    }
