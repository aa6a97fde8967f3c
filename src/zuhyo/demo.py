"""`zuhyo demo`: the whole evaluate-then-report loop offline, on the bundled benchmarks and the OCR baseline.

No API key and no download: `sample-ja` (Japanese white-paper-style charts) is judged with the `rules` judge,
`sample-astro` (astronomy charts) with the `astrochart` suite (numeric retrieval per DomainCQA Algorithm 3, exact
derivation, ROUGE-L/BLEU-4; open items stay unscored without an LLM judge). The `ocr` baseline is a floor, not a
model: reports label it as such.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from zuhyo.evaluate.config import BenchmarkSpec, EvalConfig
from zuhyo.evaluate.session import ProgressReporter, run_eval

DEMO_PLAN: tuple[tuple[str, str], ...] = (("sample-ja", "rules"), ("sample-astro", "astrochart"))
"""(benchmark, judge) pairs the demo evaluates."""


def run_demo(out: Path, *, model: str = "ocr", runs: int = 3, prompts: tuple[str, ...] = ("direct", "cot"),
             limit: int | None = None, report: bool = True,
             reporter: ProgressReporter | None = None) -> dict[str, Any]:
    """Evaluate ``model`` on the bundled benchmarks into ``out/runs/<bench>`` and write ``out/report``."""
    run_dirs: list[Path] = []
    summaries: dict[str, Any] = {}
    for bench, judge in DEMO_PLAN:
        run_dir = out / "runs" / bench
        config = EvalConfig(benchmarks=(BenchmarkSpec(bench),), models=(model,), out=run_dir, prompts=prompts,
                            runs=runs, concurrency=4, judge=judge, limit=limit)
        summaries[bench] = run_eval(config, reporter)
        run_dirs.append(run_dir)
    result: dict[str, Any] = {"out": str(out), "runs": [str(d) for d in run_dirs],
                              "entries": [e for s in summaries.values() for e in s["entries"]],
                              "errors": sum(s["inference"]["errors"] for s in summaries.values())}
    if report:
        from zuhyo.report import build_report

        report_dir = out / "report"
        result["report"] = build_report(run_dirs, report_dir)
        result["report_index"] = str(report_dir / "index.html")
    return result
