"""Shared CLI plumbing: stderr console for people, one JSON object on stdout for machines."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Any, NoReturn

import typer
from rich.console import Console

# Redirected stderr (CI logs, pipes) gets a wide console so result tables are not squeezed to 80 columns.
console = Console(stderr=True, width=None if sys.stderr.isatty() else 160)

JsonOpt = Annotated[bool, typer.Option("--json", help="Print one JSON object summarising the result on stdout.")]
StrictOpt = Annotated[bool, typer.Option("--strict", help="Fail on the first bad row instead of collecting errors.")]
PathOpt = Annotated[Path | None, typer.Option("--path", help="Local file or folder of the benchmark.")]
HfOpt = Annotated[str | None, typer.Option("--hf", help="HF dataset id (read with `datasets`; offline from cache).")]
RevisionOpt = Annotated[str | None, typer.Option("--revision", help="HF dataset revision (commit or tag).")]
SplitOpt = Annotated[str | None, typer.Option("--split", help="Dataset split.")]
CacheDirOpt = Annotated[Path | None, typer.Option("--cache-dir", help="`datasets` cache folder.")]
OptionOpt = Annotated[list[str] | None, typer.Option("--option", help="Adapter option key=value (repeatable).")]


def emit_json(obj: Any) -> None:
    """Write ``obj`` as one JSON object on stdout."""
    sys.stdout.write(json.dumps(obj, ensure_ascii=False, default=str) + "\n")
    sys.stdout.flush()


def fail(message: str, code: int = 1) -> NoReturn:
    console.print(f"[bold red]error:[/] {message}", highlight=False)
    raise typer.Exit(code)


def parse_options(items: list[str] | None) -> dict[str, str]:
    out: dict[str, str] = {}
    for item in items or []:
        if "=" not in item:
            fail(f"--option expects key=value, got {item!r}")
        k, v = item.split("=", 1)
        out[k.strip()] = v.strip()
    return out


def make_source(path: Path | None, hf: str | None, revision: str | None, split: str | None,
                cache_dir: Path | None, options: list[str] | None):  # type: ignore[no-untyped-def]
    from zuhyo.benchmarks.base import BenchmarkSource

    return BenchmarkSource(path=path, hf_id=hf, revision=revision, split=split, cache_dir=cache_dir,
                           options=parse_options(options))
