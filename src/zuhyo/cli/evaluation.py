"""`zuhyo eval`, `zuhyo score`, `zuhyo export-inspect`."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any

import typer

from zuhyo.cli._common import (
    CacheDirOpt,
    HfOpt,
    JsonOpt,
    OptionOpt,
    PathOpt,
    RevisionOpt,
    SplitOpt,
    StrictOpt,
    console,
    emit_json,
    fail,
    make_source,
    parse_options,
)


class RichProgress:
    """Progress bars on stderr with rate and ETA (the library's ProgressReporter)."""

    def __init__(self, enabled: bool = True) -> None:
        self.enabled = enabled

    @contextmanager
    def task(self, description: str, total: int) -> Iterator[Callable[[int], None]]:
        if not self.enabled or total == 0:
            yield lambda n: None
            return
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )

        columns = (TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
                   TextColumn("[cyan]{task.fields[rate]}"),
                   TimeElapsedColumn(), TextColumn("eta"), TimeRemainingColumn())
        with Progress(*columns, console=console, transient=False) as progress:
            tid = progress.add_task(description, total=total, rate="")

            def advance(n: int) -> None:
                progress.advance(tid, n)
                task = progress.tasks[tid]
                if task.speed:
                    progress.update(tid, rate=f"{task.speed:.1f}/s")

            yield advance


def _resolve_api_key(env_name: str) -> str | None:
    return os.environ.get(env_name) or None


def print_summary_table(summary: dict[str, Any]) -> None:
    from rich.table import Table

    table = Table(title="zuhyo results", title_justify="left")
    for col in ("model", "benchmark", "prompt", "judge", "mean ± std", "runs", "scored", "unscored", "errors"):
        table.add_column(col, justify="right" if col in ("scored", "unscored", "errors") else "left")
    for e in summary.get("entries", []):
        mean, std = e.get("mean"), e.get("std")
        ms = "—" if mean is None else (f"{100 * mean:.1f}" + (f" ± {100 * std:.1f}" if std is not None else ""))
        runs = " / ".join("—" if r["accuracy"] is None else f"{100 * r['accuracy']:.1f}" for r in e["runs"])
        model = e["model"] + (" [dim](baseline)[/]" if e.get("baseline") else "")
        table.add_row(model, e["benchmark"], e["prompt"], str(e.get("judge")), ms, runs, str(e["n_scored"]),
                      str(e["n_unscored"]), str(e["n_errors"]))
    console.print(table)
    inf = summary.get("inference") or {}
    if inf:
        console.print(f"requests: {inf.get('total', 0)} total, {inf.get('skipped_done', 0)} already done, "
                      f"{inf.get('ok', 0)} ok, {inf.get('errors', 0)} errors, {inf.get('retries', 0)} retries "
                      f"in {inf.get('wall_s', 0):.1f}s")
        for ex in inf.get("error_examples", [])[:5]:
            console.print(f"  [yellow]{ex}[/]", highlight=False)
    sc = summary.get("scoring") or {}
    if sc:
        console.print(f"judging ({sc.get('judge')}): {sc.get('judged', 0)} judged, {sc.get('reused', 0)} reused, "
                      f"{sc.get('cache_hits', 0)} cache hits, {sc.get('judge_errors', 0)} judge errors; "
                      f"decided by {sc.get('decided_by', {})}")


def register(app: typer.Typer) -> None:
    @app.command("eval")
    def eval_cmd(
        bench: Annotated[list[str], typer.Option("--bench", help="Benchmark name (repeatable; see `zuhyo list`).")],
        model: Annotated[list[str], typer.Option("--model", help="Model spec: openai:<model>@<base_url> | "
                                                 "hf:<local path> | ocr (repeatable).")],
        out: Annotated[Path, typer.Option("--out", help="Run-set directory (created; re-running resumes).")],
        path: PathOpt = None, hf: HfOpt = None, revision: RevisionOpt = None, split: SplitOpt = None,
        cache_dir: CacheDirOpt = None, option: OptionOpt = None,
        prompt: Annotated[str, typer.Option("--prompt", help="direct | cot | both | cot+ocr | comma list.")] = "both",
        runs: Annotated[int, typer.Option("--runs", min=1, help="Repetitions per item (papers: 3).")] = 3,
        concurrency: Annotated[int, typer.Option("--concurrency", min=1, help="Requests in flight.")] = 16,
        judge: Annotated[str, typer.Option("--judge", help="auto[:<spec>] (each benchmark's own scoring) | rules | "
                                           "llm:<spec> | cascade:<spec> | metric:<name> | none.")] = "auto",
        limit: Annotated[int | None, typer.Option("--limit", min=1, help="First N samples of each benchmark.")] = None,
        temperature: Annotated[float, typer.Option("--temperature")] = 0.0,
        max_tokens: Annotated[int, typer.Option("--max-tokens")] = 8192,
        seed: Annotated[int | None, typer.Option("--seed")] = None,
        endpoint: Annotated[list[str] | None, typer.Option("--endpoint", help="Extra base URL for the first "
                                                           "--model, an openai: model (repeatable; "
                                                           "load-balanced).")] = None,
        api_key_env: Annotated[str, typer.Option("--api-key-env", help="Env var holding the API key.")
                               ] = "OPENAI_API_KEY",
        timeout: Annotated[float, typer.Option("--timeout", help="Per-request timeout, seconds.")] = 300.0,
        retries: Annotated[int, typer.Option("--retries", min=0, help="Retries per request on 429/5xx/timeouts.")] = 5,
        retry_base: Annotated[float, typer.Option("--retry-base", help="First backoff delay, seconds.")] = 1.0,
        max_image_pixels: Annotated[int | None, typer.Option("--max-image-pixels",
                                                             help="Downscale images above this many pixels.")] = None,
        images: Annotated[Path | None, typer.Option("--images", help="Image cache of `zuhyo images fetch` "
                                                    "(URL-only benchmarks).")] = None,
        model_option: Annotated[list[str] | None, typer.Option("--model-option", help="Backend option key=value, "
                                                               "e.g. batch_size=8 or device=cuda for hf: "
                                                               "(repeatable).")] = None,
        extra_body: Annotated[list[str] | None, typer.Option("--extra-body", help="key=value passed to the "
                                                             "provider (JSON values allowed).")] = None,
        strict: StrictOpt = False, json_out: JsonOpt = False,
        quiet: Annotated[bool, typer.Option("--quiet", help="No progress bars.")] = False,
    ) -> None:
        """Evaluate models on benchmarks: infer (resumable), judge, and write DIR/summary.json."""
        import json as _json

        from zuhyo.evaluate.config import BenchmarkSpec, EvalConfig, RetryPolicy
        from zuhyo.evaluate.prompting import PROMPT_STYLES
        from zuhyo.evaluate.session import run_eval
        from zuhyo.models.base import GenerationConfig

        styles = ("direct", "cot") if prompt == "both" else tuple(p.strip() for p in prompt.split(","))
        for s in styles:
            if s not in PROMPT_STYLES:
                fail(f"unknown --prompt {s!r}; choose from direct, cot, both, cot+ocr")
        if (path or hf) and len(bench) > 1:
            fail("--path/--hf apply to one benchmark; give one --bench with them")
        source = make_source(path, hf, revision, split, cache_dir, option)
        extra: dict[str, Any] = {}
        for kv in extra_body or []:
            k, _, v = kv.partition("=")
            try:
                extra[k] = _json.loads(v)
            except ValueError:
                extra[k] = v
        config = EvalConfig(
            benchmarks=tuple(BenchmarkSpec(b, source) for b in bench), models=tuple(model), out=out,
            prompts=styles, runs=runs, concurrency=concurrency,
            judge=None if judge == "none" else judge, limit=limit,
            generation=GenerationConfig(temperature=temperature, max_tokens=max_tokens, seed=seed, extra_body=extra),
            retry=RetryPolicy(max_retries=retries, base_delay_s=retry_base), timeout_s=timeout,
            endpoints=tuple(endpoint or ()), api_key=_resolve_api_key(api_key_env),
            max_image_pixels=max_image_pixels, model_options=parse_options(model_option), images_dir=images,
            strict=strict,
        )
        summary = run_eval(config, RichProgress(enabled=not quiet))
        print_summary_table(summary)
        console.print(f"summary: {out / 'summary.json'}")
        if json_out:
            emit_json(summary)

    @app.command("score")
    def score_cmd(
        out: Annotated[Path, typer.Argument(help="Run-set directory written by `zuhyo eval`.")],
        judge: Annotated[str, typer.Option("--judge", help="Judge spec (see `zuhyo list`).")] = "rules",
        concurrency: Annotated[int, typer.Option("--concurrency", min=1)] = 16,
        api_key_env: Annotated[str, typer.Option("--api-key-env")] = "OPENAI_API_KEY",
        json_out: JsonOpt = False,
        quiet: Annotated[bool, typer.Option("--quiet", help="No progress bars.")] = False,
    ) -> None:
        """Re-score stored predictions with a judge (no inference; judge calls cached)."""
        from zuhyo.evaluate.session import rescore

        summary = rescore(out, judge, concurrency=concurrency, api_key=_resolve_api_key(api_key_env),
                          reporter=RichProgress(enabled=not quiet))
        print_summary_table(summary)
        if json_out:
            emit_json(summary)

    @app.command("export-inspect")
    def export_inspect_cmd(
        out: Annotated[Path, typer.Argument(help="Run-set directory written by `zuhyo eval`.")],
        dest: Annotated[Path | None, typer.Option("--dest", help="Folder for the logs (default DIR/inspect).")] = None,
        json_out: JsonOpt = False,
    ) -> None:
        """Export each (model, benchmark, prompt, run) as an Inspect EvalLog JSON file."""
        from zuhyo.evaluate.inspect_export import export_inspect_logs

        files = export_inspect_logs(out, dest or out / "inspect")
        for f in files:
            console.print(f"wrote {f}")
        if json_out:
            emit_json({"files": [str(f) for f in files], "count": len(files)})
