"""Figures for docs/reproduce.md: what one evaluation request and one judge call weigh, measured on the bundled
benchmarks (sample-ja, sample-astro) against the local OpenAI-compatible test server.

Runs both bundled benchmarks × Direct and CoT × 3 runs with a per-run LLM judge (HakushoBench §5.1's protocol) and
prints: requests made, request-body bytes (the image dominates), prompt characters, image sizes, the judge calls
and their body bytes, and zuhyo's own wall time (the server answers at once, so this is the client's overhead).

    python bench/reproduce_figures.py [--out /tmp/reproduce-figures]
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path

from zuhyo.benchmarks.base import load_benchmark
from zuhyo.evaluate.config import BenchmarkSpec, EvalConfig
from zuhyo.evaluate.session import run_eval
from zuhyo.testing.fake_openai import FakeOpenAIServer, ServerState

BENCHES = ("sample-ja", "sample-astro")


def _text_chars(body: dict) -> int:
    return sum(len(p.get("text", "")) for m in body["messages"] for p in (
        m["content"] if isinstance(m["content"], list) else [{"text": m["content"]}]))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args()
    out = args.out or Path(tempfile.mkdtemp(prefix="zuhyo-figures-"))
    samples = [s for b in BENCHES for s in load_benchmark(b).samples]
    key = {s.question: s.answers[0] for s in samples}
    with FakeOpenAIServer(ServerState(answers=key, record_bodies=True)) as model, \
            FakeOpenAIServer(ServerState(default_answer="reasoning: ok\ncorrect: yes", record_bodies=True)) as judge:
        t0 = time.perf_counter()
        run_eval(EvalConfig(benchmarks=tuple(BenchmarkSpec(b) for b in BENCHES),
                            models=(f"openai:fake@{model.base_url}",), out=out / "run", prompts=("direct", "cot"),
                            runs=3, judge=f"llm:openai:judge@{judge.base_url}", judge_repeat="per-run"))
        wall = time.perf_counter() - t0
        bodies = [len(json.dumps(b)) for b in model.state.bodies]
        judge_bodies = [len(json.dumps(b)) for b in judge.state.bodies]
        figures = {
            "items": len(samples), "requests": model.state.requests, "judge_calls": judge.state.requests,
            "request_body_bytes_mean": round(statistics.fmean(bodies)),
            "request_body_bytes_median": round(statistics.median(bodies)),
            "request_text_chars_mean": round(statistics.fmean(_text_chars(b) for b in model.state.bodies)),
            "judge_body_bytes_mean": round(statistics.fmean(judge_bodies)),
            "judge_text_chars_mean": round(statistics.fmean(_text_chars(b) for b in judge.state.bodies)),
            "upload_mb": round(model.state.bytes_in / 1e6, 2), "wall_s": round(wall, 2),
            "client_ms_per_request": round(1000 * wall / (model.state.requests + judge.state.requests), 2),
        }
    print(json.dumps(figures, indent=2))


if __name__ == "__main__":
    main()
