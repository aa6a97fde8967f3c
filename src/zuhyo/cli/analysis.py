"""`zuhyo analyze stats|diversity|hard-subset`."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

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
    result_console,
)

if TYPE_CHECKING:
    from zuhyo.analysis.statistics import StatTable

analyze_app = typer.Typer(help="Dataset statistics, visual diversity and hard-subset selection.", no_args_is_help=True)

BenchArg = Annotated[str, typer.Argument(help="Registered benchmark name (see `zuhyo list`).")]


def _print_table(table: StatTable) -> None:
    from rich.table import Table

    out = Table(title=table.title, title_justify="left")
    for col in table.columns:
        out.add_column(col, justify="left" if isinstance(table.rows[0][table.columns.index(col)], str) else "right")
    for row in table.rows:
        out.add_row(*("—" if v is None else f"{100 * v:.1f} %" if c in table.share_columns else str(v)
                      for c, v in zip(table.columns, row, strict=True)))
    result_console.print(out)


@analyze_app.command("stats")
def stats_cmd(
    name: BenchArg,
    out: Annotated[Path | None, typer.Option("--out", help="Folder for the Markdown and CSV tables.")] = None,
    ccv_names: Annotated[str | None, typer.Option(
        "--ccv-names", help="Comma-separated names of the 10 CCV attributes (default: DomainCQA Table 3, "
                            "Annotation … Type).")] = None,
    path: PathOpt = None, hf: HfOpt = None, revision: RevisionOpt = None, split: SplitOpt = None,
    cache_dir: CacheDirOpt = None, option: OptionOpt = None, strict: StrictOpt = False, json_out: JsonOpt = False,
) -> None:
    """Tables of image types, difficulty flags, topics/sources and CCV proportions (HakushoBench, DomainCQA)."""
    from zuhyo.analysis.statistics import dataset_statistics, write_statistics
    from zuhyo.benchmarks.base import load_benchmark
    from zuhyo.evaluate.session import require_samples

    names = [n.strip() for n in ccv_names.split(",")] if ccv_names else None
    if names is not None and len(names) != 10:
        fail(f"--ccv-names needs 10 comma-separated names, got {len(names)}")
    result = require_samples(load_benchmark(name, make_source(path, hf, revision, split, cache_dir, option),
                                            strict=strict))
    stats = dataset_statistics(result, ccv_names=names)
    written = write_statistics(stats, out) if out is not None else []
    if json_out:
        emit_json({**stats.to_json(), "files": [str(p) for p in written],
                   "error_examples": [str(e) for e in result.errors[:20]]})
        return
    result_console.print(f"[bold]{stats.benchmark}[/]: {stats.questions} questions, {stats.images} distinct "
                         f"images, {stats.row_errors} row errors")
    for table in stats.tables:
        _print_table(table)
    for w in stats.warnings:
        console.print(f"[yellow]warning:[/] {w}", highlight=False)
    if written:
        result_console.print(f"wrote {len(written)} files to {out}")


@analyze_app.command("diversity")
def diversity_cmd(
    name: BenchArg,
    embedder: Annotated[str, typer.Option(
        "--embedder", help="phash[:<hash size>] (no torch) or hf:<local SigLIP/CLIP folder>.")] = "phash",
    exact_max_n: Annotated[int, typer.Option(
        "--exact-max-n", help="Exact over all pairs up to this many images; sampled estimate above.")] = 20_000,
    pairs: Annotated[int, typer.Option("--pairs", help="Pairs drawn for the sampled estimate.")] = 1_000_000,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the pair sampler.")] = 0,
    batch_size: Annotated[int, typer.Option("--batch-size", help="Images per forward pass (hf).")] = 16,
    device: Annotated[str, typer.Option("--device", help="torch device for hf embedders.")] = "cpu",
    images: Annotated[Path | None, typer.Option(
        "--images", help="Cache folder of `zuhyo images fetch`, for URL-only benchmarks.")] = None,
    path: PathOpt = None, hf: HfOpt = None, revision: RevisionOpt = None, split: SplitOpt = None,
    cache_dir: CacheDirOpt = None, option: OptionOpt = None, strict: StrictOpt = False, json_out: JsonOpt = False,
) -> None:
    """Visual diversity: mean pairwise cosine distance of the distinct images' embeddings (HakushoBench)."""
    from zuhyo.analysis.diversity import benchmark_diversity
    from zuhyo.analysis.embedders import EmbedderOptions, build_embedder
    from zuhyo.benchmarks.base import load_benchmark
    from zuhyo.cli.evaluation import progress_reporter

    if exact_max_n < 2 or pairs < 2:
        fail("--exact-max-n and --pairs must be at least 2")
    result = load_benchmark(name, make_source(path, hf, revision, split, cache_dir, option), strict=strict)
    emb = build_embedder(embedder, EmbedderOptions(batch_size=batch_size, device=device))
    holder: dict = {}

    def on_total(n: int) -> None:
        holder["ctx"] = progress_reporter(enabled=not json_out).task(f"embedding ({emb.spec})", n)
        holder["advance"] = holder["ctx"].__enter__()

    try:
        div = benchmark_diversity(result, emb, cache_dir=images, exact_max_n=exact_max_n, n_pairs=pairs, seed=seed,
                                  progress=lambda n: holder["advance"](n), on_total=on_total)
    finally:
        if "ctx" in holder:
            holder["ctx"].__exit__(None, None, None)
    if strict and div.skipped:
        fail(f"{len(div.skipped)} images could not be used; first: {div.skipped[0]}")
    doc = div.to_json()
    if json_out:
        emit_json(doc)
    else:
        r = div.result
        result_console.print(f"[bold]{div.benchmark}[/]: {div.images} distinct images embedded with "
                             f"{div.embedder}, {len(div.skipped)} skipped")
        if r is None:
            console.print("[yellow]fewer than 2 images: diversity undefined[/]")
        elif r.method == "exact":
            result_console.print(f"mean pairwise cosine distance (exact over {r.pairs:,} pairs): "
                                 f"{r.mean_distance:.4f} "
                                 f"(std {r.std_distance:.4f}, min {r.min_distance:.4f}, max {r.max_distance:.4f})")
        else:
            result_console.print(f"mean pairwise cosine distance (estimate from {r.sampled_pairs:,} of {r.pairs:,} "
                                 f"pairs): {r.mean_distance:.4f} ± {r.standard_error:.5f} (SE); 95 % CI "
                                 f"[{r.ci95_low:.4f}, {r.ci95_high:.4f}] (CLT); Hoeffding 95 % half-width "
                                 f"{r.hoeffding95_halfwidth:.4f}")
        for msg in div.skipped[:5]:
            console.print(f"  [yellow]{msg}[/]", highlight=False)
    if div.result is None:
        raise typer.Exit(1)


@analyze_app.command("hard-subset")
def hard_subset_cmd(
    run_dir: Annotated[Path, typer.Argument(help="Run set folder written by `zuhyo eval`.")],
    model: Annotated[str, typer.Option("--model", help="Model spec exactly as recorded in the run set.")],
    out: Annotated[Path, typer.Option("--out", help="Output .jsonl (images copied to <stem>_images/ beside it).")],
    judge: Annotated[str | None, typer.Option(
        "--judge", help="Judge id (needed when the run set has several).")] = None,
    prompt: Annotated[list[str] | None, typer.Option(
        "--prompt", help="Prompt style(s) to consider (repeatable; default: all of the model's).")] = None,
    rule: Annotated[str, typer.Option(
        "--rule", help="any-wrong | all-wrong | majority-wrong (over decided verdicts of all prompts × runs).")]
        = "any-wrong",
    json_out: JsonOpt = False,
) -> None:
    """Keep the items a model got wrong and export them as a new benchmark (`--bench local --path OUT`)."""
    from zuhyo.analysis.hard_subset import HARD_RULES, select_hard_subset, write_hard_subset

    if rule not in HARD_RULES:
        fail(f"--rule must be one of {', '.join(HARD_RULES)}, got {rule!r}")
    if out.suffix != ".jsonl":
        fail(f"--out must be a .jsonl file, got {out}")
    subset = select_hard_subset(run_dir, model, judge=judge, prompts=prompt, rule=rule)  # type: ignore[arg-type]
    export = write_hard_subset(subset, out)
    doc = {"run": str(run_dir), "model": subset.model, "judge": subset.judge, "prompts": subset.prompts,
           "rule": subset.rule, "out": str(out), **subset.counts, **{f"export_{k}": v for k, v in export.items()}}
    if json_out:
        emit_json(doc)
        return
    c = subset.counts
    ex = ", ".join(f"{k} {v}" for k, v in c["excluded_predictions"].items() if v) or "none"
    result_console.print(f"kept [bold]{c['kept']}[/] of {c['benchmark_samples']} items wrong by {rule} "
                         f"({subset.model}, judge {subset.judge}, prompts {', '.join(subset.prompts)})")
    result_console.print(f"  not hard {c['not_hard']}, undetermined {c['undetermined']} (no decided verdict), "
                         f"not evaluated {c['not_evaluated']}; excluded predictions: {ex}")
    result_console.print(f"wrote {export['samples']} samples to {out} ({export['images_copied']} images copied, "
                         f"{export['images_missing']} missing)")


def register(app: typer.Typer) -> None:
    app.add_typer(analyze_app, name="analyze")
