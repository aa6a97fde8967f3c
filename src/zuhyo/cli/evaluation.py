"""`zuhyo eval`, `zuhyo score`, `zuhyo export-inspect`."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any

import typer

from zuhyo.cli._common import (
    AllowOutsideOpt,
    CacheDirOpt,
    HfOpt,
    ImagesRootOpt,
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
    results,
)


class RichProgress:
    """Progress bars on stderr with rate and ETA (the library's ProgressReporter).

    ``advance`` only adds to the count; the rate is computed by :func:`rate_column` when rich refreshes the bar
    (10 times a second), never per item: reading rich's ``Task.speed`` on every advance walked its sample window
    each time and cost half of the CLI's CPU at ~1,000 items/s (issue 7, item 7; ``bench/eval_throughput.py``).
    """

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

        columns = (TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(), rate_column(),
                   TimeElapsedColumn(), TextColumn("eta"), TimeRemainingColumn())
        with Progress(*columns, console=console, transient=False) as progress:
            tid = progress.add_task(description, total=total)

            def advance(n: int) -> None:
                progress.advance(tid, n)

            yield advance


def rate_column() -> Any:
    """A rich column showing items per second, computed at refresh time from the task's recent samples."""
    from rich.progress import ProgressColumn, Task
    from rich.text import Text

    class RateColumn(ProgressColumn):
        max_refresh = 0.5  # rich caches the rendering between refreshes

        def render(self, task: Task) -> Text:
            speed = task.finished_speed or task.speed
            return Text("" if not speed else f"{speed:.1f}/s", style="cyan")

    return RateColumn()


class PlainProgress:
    """Progress for a log file, CI or nohup (stderr not a terminal): one plain line per task every ``interval_s``
    seconds and at the end — ``inference: 120/400 (30.0 %), 4.1/s, 2 errors, 12s elapsed`` — instead of a live bar
    that would print nothing readable until the end."""

    def __init__(self, enabled: bool = True, interval_s: float = 5.0, clock: Callable[[], float] | None = None,
                 write: Callable[[str], None] | None = None) -> None:
        import time

        self.enabled = enabled
        self.interval_s = interval_s
        self._clock = clock or time.monotonic
        self._write = write or (lambda line: console.print(line, highlight=False, markup=False, soft_wrap=True))

    @contextmanager
    def task(self, description: str, total: int) -> Iterator[Callable[[int], None]]:
        if not self.enabled or total == 0:
            yield lambda n: None
            return
        ticker = _PlainTicker(description, total, self._clock, self._write, self.interval_s)
        try:
            yield ticker
        finally:
            ticker.line()


class _PlainTicker:
    """``advance(n)`` / ``add_errors(n)`` of one PlainProgress task; prints when ``interval_s`` has passed."""

    def __init__(self, description: str, total: int, clock: Callable[[], float], write: Callable[[str], None],
                 interval_s: float) -> None:
        self.description, self.total, self.clock, self.write = description, total, clock, write
        self.interval_s = interval_s
        self.done = self.errors = 0
        self.start = self.last = clock()

    def __call__(self, n: int) -> None:
        self.done += n
        if self.clock() - self.last >= self.interval_s:
            self.line()

    def add_errors(self, n: int) -> None:
        self.errors += n

    def line(self) -> None:
        now = self.clock()
        self.last = now
        elapsed = now - self.start
        rate = f"{self.done / elapsed:.1f}/s" if elapsed > 0 else "—/s"
        self.write(f"{self.description}: {self.done}/{self.total} ({100 * self.done / self.total:.1f} %), {rate}, "
                   f"{self.errors} errors, {elapsed:.0f}s elapsed")


def progress_reporter(enabled: bool = True) -> RichProgress | PlainProgress:
    """Live bars when stderr is a terminal; plain lines every few seconds otherwise (logs, CI, nohup)."""
    return RichProgress(enabled) if console.is_terminal else PlainProgress(enabled)


JudgeRepeatOpt = Annotated[str, typer.Option(
    "--judge-repeat", help="shared (identical replies share one verdict across runs; cheaper) | per-run (each "
                           "run's replies judged anew, as HakushoBench §5.1).")]
AnswerCleaningOpt = Annotated[str, typer.Option(
    "--answer-cleaning", help="How the scored answer is read from a reply: faithful (what each benchmark's "
                              "official scorer sees) | lenient (also strip Markdown, $, quotes, more answer "
                              "markers).")]


def _resolve_api_key(env_name: str) -> str | None:
    return os.environ.get(env_name) or None


def print_summary_table(summary: dict[str, Any], json_out: bool = False) -> None:
    """The results table on stdout (on stderr when stdout carries ``--json``); error examples on stderr."""
    from rich.table import Table

    to = results(json_out)
    table = Table(title="zuhyo results", title_justify="left")
    for col in ("model", "benchmark", "prompt", "judge", "mean ± std", "coverage", "runs", "scored", "unscored",
                "errors"):
        table.add_column(col, justify="right" if col in ("coverage", "scored", "unscored", "errors") else "left")
    for e in summary.get("entries", []):
        mean, std = e.get("mean"), e.get("std")
        ms = "—" if mean is None else (f"{100 * mean:.1f}" + (f" ± {100 * std:.1f}" if std is not None else ""))
        runs = " / ".join("—" if r["accuracy"] is None else f"{100 * r['accuracy']:.1f}" for r in e["runs"])
        model = e["model"] + (" [dim](baseline)[/]" if e.get("baseline") else "")
        table.add_row(model, e["benchmark"], e["prompt"], str(e.get("judge")), ms, coverage_text(e), runs,
                      str(e["n_scored"]), str(e["n_unscored"]), str(e["n_errors"]))
    to.print(table)
    inf = summary.get("inference") or {}
    if inf:
        to.print(f"requests: {inf.get('total', 0)} total, {inf.get('skipped_done', 0)} already done, "
                 f"{inf.get('ok', 0)} ok, {inf.get('errors', 0)} errors, {inf.get('retries', 0)} retries "
                 f"in {inf.get('wall_s', 0):.1f}s")
        for ex in inf.get("error_examples", [])[:5]:
            console.print(f"  [yellow]{ex}[/]", highlight=False)
    sc = summary.get("scoring") or {}
    if sc:
        to.print(f"judging ({sc.get('judge')}, {sc.get('judge_repeat', 'shared')}): {sc.get('judged', 0)} judged, "
                 f"{sc.get('reused', 0)} reused, "
                 f"{sc.get('cache_hits', 0)} cache hits, {sc.get('judge_errors', 0)} judge errors; "
                 f"decided by {sc.get('decided_by', {})}")
    print_diagnostics(summary, to)
    warn_low_coverage(summary)


def print_diagnostics(summary: dict[str, Any], to: Any) -> None:
    """One line per model × prompt whose replies hit the token limit, lack a final answer or loop, and one per
    entry judged per run with the judge's own variance."""
    for d in summary.get("diagnostics") or []:
        flags = [f"{d[f'n_{k}']}/{d['n_replies']} {label}" for k, label in
                 (("truncated", "hit the token limit"), ("no_final_answer", "no final answer"),
                  ("looping", "repetition loop")) if d.get(f"n_{k}")]
        if flags:
            to.print(f"diagnostics {d['model']} / {d['prompt']}: {', '.join(flags)}", highlight=False,
                     markup=False, soft_wrap=True)
    for e in summary.get("entries") or []:
        var = e.get("judge_variance")
        if var and var["n_items"]:
            to.print(f"judge variance {e['model']} / {e['benchmark']} / {e['prompt']}: {var['n_inconsistent']} of "
                     f"{var['n_items']} items with unchanged replies got differing verdicts across runs",
                     highlight=False, markup=False, soft_wrap=True)


def coverage_text(entry: dict[str, Any]) -> str:
    """``scored/total (pct)`` of a summary entry, ``—`` when it was not judged."""
    if entry.get("coverage") is None:
        return "—"
    return f"{entry['n_scored']}/{entry['n_total']} ({100 * entry['coverage']:.0f}%)"


def warn_low_coverage(summary: dict[str, Any]) -> None:
    """A warning on stderr for each entry whose mean covers fewer than 90 % of its items."""
    from zuhyo.evaluate.summary import LOW_COVERAGE, low_coverage_entries

    for e in low_coverage_entries(summary):
        strict = e.get("mean_unscored_as_wrong")
        console.print(f"[yellow]warning:[/] {e['model']} / {e['benchmark']} / {e['prompt']} / {e['judge']}: the mean "
                      f"covers {coverage_text(e)} of the items (< {LOW_COVERAGE:.0%}); "
                      f"{e['n_unscored']} unscored, {e['n_errors']} errors, {e['n_missing']} missing"
                      + ("" if strict is None else f"; counting them wrong gives {100 * strict:.1f}"),
                      highlight=False)


def report_problems(summary: dict[str, Any]) -> int:
    """Say on stderr what went wrong (unreadable store lines, failed requests); the exit code: 1 when every
    request of this invocation failed (no server at the URL, wrong endpoint), else 0 (failures counted)."""
    from rich.markup import escape

    def say(line: str) -> None:
        console.print(line, highlight=False, soft_wrap=True)

    read_errors = summary.get("store_read_errors") or {}
    if read_errors.get("count"):
        say(f"[yellow]warning:[/] {read_errors['count']} unreadable lines in the run store were skipped; "
            f"first: {escape(read_errors['examples'][0])}")
    inf = summary.get("inference") or {}
    errors, ok = int(inf.get("errors", 0)), int(inf.get("ok", 0))
    first = escape((inf.get("error_examples") or ["?"])[0])
    if errors and not ok:
        say(f"[bold red]error:[/] all {errors} requests failed; first: {first}")
        return 1
    if errors:
        say(f"[yellow]warning:[/] {errors} of {errors + ok} requests failed (kept as errors, never scored; re-run "
            f"the same command to retry them)")
    return 0


def _note_default_endpoints(models: list[str]) -> None:
    """An ``openai:<model>`` spec without ``@<base_url>`` goes to OpenAI's public endpoint: say so up front."""
    for spec in models:
        kind, _, rest = spec.partition(":")
        if kind == "openai" and "@" not in rest:
            from zuhyo.models.openai_compat import DEFAULT_BASE_URL

            console.print(f"note: --model {spec} names no @<base_url>; its requests go to {DEFAULT_BASE_URL}",
                          highlight=False, markup=False, soft_wrap=True)


def register(app: typer.Typer) -> None:
    @app.command("eval")
    def eval_cmd(
        bench: Annotated[list[str], typer.Option("--bench", help="Benchmark name (repeatable; see `zuhyo list`).")],
        model: Annotated[list[str], typer.Option("--model", help="Model spec: openai:<model>@<base_url> | "
                                                 "hf:<local path> | ocr | preset:<name>[@<base_url>] (see "
                                                 "`zuhyo list`; repeatable).")],
        out: Annotated[Path, typer.Option("--out", help="Run-set directory (created; re-running resumes).")],
        path: PathOpt = None, hf: HfOpt = None, revision: RevisionOpt = None, split: SplitOpt = None,
        cache_dir: CacheDirOpt = None, option: OptionOpt = None,
        allow_outside_paths: AllowOutsideOpt = False, images_root: ImagesRootOpt = None,
        prompt: Annotated[str, typer.Option("--prompt", help="direct | cot | both | cot+ocr | comma list.")] = "both",
        runs: Annotated[int, typer.Option("--runs", min=1, help="Repetitions per item (papers: 3).")] = 3,
        concurrency: Annotated[int, typer.Option("--concurrency", min=1, help="Requests in flight.")] = 16,
        judge: Annotated[str, typer.Option("--judge", help="auto[:<spec>] (each benchmark's own scoring) | rules | "
                                           "llm:<spec> | cascade:<spec> | metric:<name> | none.")] = "auto",
        answer_cleaning: AnswerCleaningOpt = "faithful",
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
        gen_for: Annotated[list[str] | None, typer.Option("--gen-for", help="STYLE:key=value — a setting for one "
                                                          "prompt style (or all): temperature, max_tokens, seed "
                                                          "(value omit: left out of the request) or an extra-body "
                                                          "key (repeatable).")] = None,
        extra_body_for: Annotated[list[str] | None, typer.Option("--extra-body-for", help="STYLE:key=value — an "
                                                                 "extra-body key for one prompt style (or all), "
                                                                 "e.g. cot:reasoning_effort=medium (repeatable)."
                                                                 )] = None,
        run_config: Annotated[Path | None, typer.Option("--config", help="Run config TOML: [generation] and "
                                                        "[prompts.<style>] tables of settings (the flags above "
                                                        "win).")] = None,
        judge_repeat: JudgeRepeatOpt = "shared",
        strict: StrictOpt = False, json_out: JsonOpt = False,
        quiet: Annotated[bool, typer.Option("--quiet", help="No progress bars.")] = False,
    ) -> None:
        """Evaluate models on benchmarks: infer (resumable), judge, and write DIR/summary.json."""
        import json as _json

        from zuhyo.evaluate.config import BenchmarkSpec, EvalConfig, RetryPolicy
        from zuhyo.evaluate.prompting import PROMPT_STYLES
        from zuhyo.evaluate.run_settings import check_judge_repeat, combine, load_run_config, parse_prompt_settings
        from zuhyo.evaluate.session import run_eval
        from zuhyo.models.base import GenerationConfig

        styles = ("direct", "cot") if prompt == "both" else tuple(p.strip() for p in prompt.split(","))
        for s in styles:
            if s not in PROMPT_STYLES:
                fail(f"unknown --prompt {s!r}; choose from direct, cot, both, cot+ocr")
        if (path or hf) and len(bench) > 1:
            fail("--path/--hf apply to one benchmark; give one --bench with them")
        source = make_source(path, hf, revision, split, cache_dir, option,
                             allow_outside_paths=allow_outside_paths, images_root=images_root)
        extra: dict[str, Any] = {}
        for kv in extra_body or []:
            k, _, v = kv.partition("=")
            try:
                extra[k] = _json.loads(v)
            except ValueError:
                extra[k] = v
        prompt_settings = combine(load_run_config(run_config) if run_config else {},
                                  parse_prompt_settings(gen_for or [], "--gen-for", extra_only=False),
                                  parse_prompt_settings(extra_body_for or [], "--extra-body-for", extra_only=True))
        config = EvalConfig(
            benchmarks=tuple(BenchmarkSpec(b, source) for b in bench), models=tuple(model), out=out,
            prompts=styles, runs=runs, concurrency=concurrency,
            judge=None if judge == "none" else judge, answer_cleaning=answer_cleaning, limit=limit,
            generation=GenerationConfig(temperature=temperature, max_tokens=max_tokens, seed=seed, extra_body=extra),
            retry=RetryPolicy(max_retries=retries, base_delay_s=retry_base), timeout_s=timeout,
            endpoints=tuple(endpoint or ()), api_key=_resolve_api_key(api_key_env),
            max_image_pixels=max_image_pixels, model_options=parse_options(model_option), images_dir=images,
            strict=strict, prompt_settings=prompt_settings, judge_repeat=check_judge_repeat(judge_repeat),
        )
        _note_default_endpoints(model)
        summary = run_eval(config, progress_reporter(enabled=not quiet))
        print_summary_table(summary, json_out)
        results(json_out).print(f"summary: {out / 'summary.json'}")
        code = report_problems(summary)
        if json_out:
            emit_json(summary)
        if code:
            raise typer.Exit(code)

    @app.command("score")
    def score_cmd(
        out: Annotated[Path, typer.Argument(help="Run-set directory written by `zuhyo eval`.")],
        judge: Annotated[str, typer.Option("--judge", help="Judge spec, as `eval --judge` (see `zuhyo list`).")
                         ] = "auto",
        concurrency: Annotated[int, typer.Option("--concurrency", min=1)] = 16,
        api_key_env: Annotated[str, typer.Option("--api-key-env")] = "OPENAI_API_KEY",
        answer_cleaning: AnswerCleaningOpt = "faithful",
        judge_repeat: Annotated[str | None, typer.Option(
            "--judge-repeat", help="shared | per-run (as `eval --judge-repeat`; default: what the run set's `eval` "
                                   "used).")] = None,
        json_out: JsonOpt = False,
        quiet: Annotated[bool, typer.Option("--quiet", help="No progress bars.")] = False,
    ) -> None:
        """Re-score stored predictions with a judge (no inference; judge calls cached)."""
        from zuhyo.evaluate.session import rescore

        summary = rescore(out, judge, concurrency=concurrency, api_key=_resolve_api_key(api_key_env),
                          reporter=progress_reporter(enabled=not quiet), answer_cleaning=answer_cleaning,
                          judge_repeat=judge_repeat)
        print_summary_table(summary, json_out)
        report_problems(summary)
        if json_out:
            emit_json(summary)

    @app.command("export-inspect")
    def export_inspect_cmd(
        out: Annotated[Path, typer.Argument(help="Run-set directory written by `zuhyo eval`.")],
        dest: Annotated[Path | None, typer.Option("--dest", help="Folder for the logs (default DIR/inspect).")] = None,
        json_out: JsonOpt = False,
    ) -> None:
        """Export one Inspect EvalLog JSON file per (model, benchmark, prompt); its samples hold every run."""
        from zuhyo.evaluate.inspect_export import export_inspect_logs
        from zuhyo.evaluate.store import MANIFEST

        if not (out / MANIFEST).is_file():  # checked before anything is created
            fail(f"{out}: not a zuhyo run set (no {MANIFEST}; expected a folder written by `zuhyo eval --out`)")
        files = export_inspect_logs(out, dest or out / "inspect")
        for f in files:
            results(json_out).print(f"wrote {f}", highlight=False)
        if json_out:
            emit_json({"files": [str(f) for f in files], "count": len(files)})
