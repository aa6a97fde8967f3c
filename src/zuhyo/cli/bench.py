"""`zuhyo bench info|export`."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

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
    make_source,
    result_console,
)

bench_app = typer.Typer(help="Inspect and export benchmarks.", no_args_is_help=True)


@bench_app.command("info")
def info_cmd(
    name: Annotated[str, typer.Argument(help="Registered benchmark name (see `zuhyo list`).")],
    path: PathOpt = None, hf: HfOpt = None, revision: RevisionOpt = None, split: SplitOpt = None,
    cache_dir: CacheDirOpt = None, option: OptionOpt = None,
    allow_outside_paths: AllowOutsideOpt = False, images_root: ImagesRootOpt = None, strict: StrictOpt = False,
    json_out: JsonOpt = False,
) -> None:
    """Load a benchmark and print its size, field coverage, image types and row errors."""
    from zuhyo.benchmarks.base import load_benchmark
    from zuhyo.benchmarks.stats import benchmark_info

    source = make_source(path, hf, revision, split, cache_dir, option, allow_outside_paths=allow_outside_paths,
                         images_root=images_root)
    result = load_benchmark(name, source, strict=strict)
    info = benchmark_info(result)
    if json_out:
        emit_json(info)
        return
    result_console.print(f"[bold]{info['benchmark']}[/]: {info['samples']} samples, {info['errors']} row errors, "
                         f"{info['images_missing']} missing images")
    for key in ("image_types", "flags", "splits", "astro_categories", "charxiv_kinds"):
        if info.get(key):
            result_console.print(f"  {key}: {info[key]}")
    result_console.print(f"  field coverage: {info['field_coverage']}")
    for e in info["error_examples"]:  # row errors are diagnostics: stderr
        console.print(f"  [yellow]{e}[/]", highlight=False)


@bench_app.command("export")
def export_cmd(
    name: Annotated[str, typer.Argument(help="Registered benchmark name.")],
    out: Annotated[Path, typer.Option(
        "--out", help="Output .jsonl (images go to <stem>_images/ beside it) or .parquet.")],
    path: PathOpt = None, hf: HfOpt = None, revision: RevisionOpt = None, split: SplitOpt = None,
    cache_dir: CacheDirOpt = None, option: OptionOpt = None,
    allow_outside_paths: AllowOutsideOpt = False, images_root: ImagesRootOpt = None, strict: StrictOpt = False,
    json_out: JsonOpt = False,
) -> None:
    """Write a benchmark's samples in zuhyo's schema (JSONL with images beside it, or Parquet with images embedded)."""
    from zuhyo.benchmarks.base import load_benchmark
    from zuhyo.benchmarks.local import export_jsonl, write_parquet

    source = make_source(path, hf, revision, split, cache_dir, option, allow_outside_paths=allow_outside_paths,
                         images_root=images_root)
    result = load_benchmark(name, source, strict=strict)
    if out.suffix == ".parquet":
        from zuhyo.images.load import embed_images

        samples, missing = embed_images(result)
        out.parent.mkdir(parents=True, exist_ok=True)
        write_parquet(samples, out)
        counts = {"samples": len(samples), "images_embedded": len(samples) - missing, "images_missing": missing}
    else:
        counts = export_jsonl(result, out)
    summary = {"benchmark": result.benchmark, "out": str(out), **counts, "errors": len(result.errors),
               "error_examples": [str(e) for e in result.errors[:20]]}
    if json_out:
        emit_json(summary)
    else:
        console.print(f"wrote {counts['samples']} samples to {out} ({len(result.errors)} row errors)")


def register(app: typer.Typer) -> None:
    app.add_typer(bench_app, name="bench")
