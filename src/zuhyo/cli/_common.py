"""Shared CLI plumbing: results on stdout (a table for people, or one JSON object with ``--json``); progress,
warnings and errors on stderr, so ``zuhyo list | grep x`` and ``zuhyo eval --json | jq`` both work."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any, NoReturn

import typer
from rich.console import Console

# Redirected streams (CI logs, pipes) get a wide console so tables are not squeezed to 80 columns.
# `console` (stderr): progress, warnings, errors. `result_console` (stdout): a command's human-readable result.
console = Console(stderr=True, width=None if sys.stderr.isatty() else 160)
result_console = Console(width=None if sys.stdout.isatty() else 160)

JsonOpt = Annotated[bool, typer.Option("--json", help="Print one JSON object summarising the result on stdout.")]
StrictOpt = Annotated[bool, typer.Option("--strict", help="Fail on the first bad row instead of collecting errors.")]
PathOpt = Annotated[Path | None, typer.Option("--path", help="Local file or folder of the benchmark.")]
HfOpt = Annotated[str | None, typer.Option("--hf", help="HF dataset id (read with `datasets`; offline from cache).")]
RevisionOpt = Annotated[str | None, typer.Option("--revision", help="HF dataset revision (commit or tag).")]
SplitOpt = Annotated[str | None, typer.Option("--split", help="Dataset split.")]
CacheDirOpt = Annotated[Path | None, typer.Option("--cache-dir", help="`datasets` cache folder.")]
OptionOpt = Annotated[list[str] | None, typer.Option("--option", help="Adapter option key=value (repeatable).")]
AllowOutsideOpt = Annotated[bool, typer.Option(
    "--allow-outside-paths", help="Let image paths leave the dataset's folder (absolute paths, ../, symlinks "
    "out); by default each such item is a row error.")]
ImagesRootOpt = Annotated[Path | None, typer.Option(
    "--images-root", help="A further folder the dataset's image paths may point into (absolute or via links).")]


def emit_json(obj: Any) -> None:
    """Write ``obj`` as one JSON object on stdout."""
    sys.stdout.write(json.dumps(obj, ensure_ascii=False, default=str) + "\n")
    sys.stdout.flush()


def results(json_out: bool) -> Console:
    """Where a command prints its human-readable result: stdout, or stderr when stdout carries ``--json``."""
    return console if json_out else result_console


def fail(message: str, code: int = 1) -> NoReturn:
    """Print ``message`` as one ``error:`` line on stderr (plain text: "[build]" stays as written) and exit."""
    from rich.markup import escape

    console.print(f"[bold red]error:[/] {escape(message)}", highlight=False, soft_wrap=True)  # one line, never wrapped
    raise typer.Exit(code)


#: The optional dependencies and the extra that installs each (top-level module name → extra).
EXTRA_OF_MODULE = {
    "sqlalchemy": "build", "alembic": "build", "pylatexenc": "build", "pymupdf": "build", "fitz": "build",
    "huggingface_hub": "build", "cv2": "build", "pyspng": "build", "threadpoolctl": "build",
    "fastapi": "web", "uvicorn": "web", "argon2": "web", "multipart": "web", "itsdangerous": "web",
    "psycopg": "web", "rapidocr": "ocr", "onnxruntime": "ocr", "torch": "hf", "transformers": "hf", "ray": "ray",
}


def install_hint(module: str, purpose: str = "") -> str | None:
    """"<purpose> needs the [extra] extra: pip install 'zuhyo[extra]' (<module> is missing)", or None for a module
    that is no optional dependency."""
    extra = EXTRA_OF_MODULE.get(module.partition(".")[0])
    if extra is None:
        return None
    return f"{purpose or 'this command'} needs the [{extra}] extra: pip install 'zuhyo[{extra}]' ({module} is missing)"


def require_modules(purpose: str, *modules: str) -> None:
    """Fail with the install hint naming the extra when one of ``modules`` is not installed (found without
    importing it)."""
    from importlib.util import find_spec

    for name in modules:
        if find_spec(name) is None:
            fail(install_hint(name, purpose) or f"{purpose} needs the Python package {name!r}, which is missing")


def parse_options(items: list[str] | None) -> dict[str, str]:
    out: dict[str, str] = {}
    for item in items or []:
        if "=" not in item:
            fail(f"--option expects key=value, got {item!r}")
        k, v = item.split("=", 1)
        out[k.strip()] = v.strip()
    return out


def make_source(path: Path | None, hf: str | None, revision: str | None, split: str | None,
                cache_dir: Path | None, options: list[str] | None, *, allow_outside_paths: bool = False,
                images_root: Path | None = None):  # type: ignore[no-untyped-def]
    from zuhyo.benchmarks.base import BenchmarkSource

    return BenchmarkSource(path=path, hf_id=hf, revision=revision, split=split, cache_dir=cache_dir,
                           options=parse_options(options), allow_outside_paths=allow_outside_paths,
                           images_root=images_root.resolve() if images_root else None)


def exit_if_all_failed(done: int, errors: int, what: str) -> None:
    """Exit 1 (after the command printed its result) when every item a stage tried failed: ``errors`` failures and
    nothing ``done``. A stage that did some of its items exits 0; re-running it retries the failed ones."""
    if errors and not done:
        console.print(f"[bold red]error:[/] all {errors} {what} failed, none succeeded (the errors are listed above "
                      "and in --json); fix the cause and re-run", highlight=False, soft_wrap=True)
        raise typer.Exit(1)


SHOWN_ERRORS = 20
"""How many failed items a command lists on the terminal (all of them are in its --json output)."""


def print_item_errors(lines: Sequence[str], shown: int = SHOWN_ERRORS) -> None:
    """List the first ``shown`` failed items on stderr, one line each, then how many more there are."""
    from rich.markup import escape

    for line in lines[:shown]:
        # Paths, URLs and server messages may contain "[...]", which rich would read as markup.
        console.print(f"  [yellow]{escape(line)}[/]", highlight=False, soft_wrap=True)
    if len(lines) > shown:
        console.print(f"  ... and {len(lines) - shown} more (all of them with --json)")


@contextmanager
def stage_progress(quiet: bool, label: str = "collecting"
              ) -> Iterator[tuple[Callable[[int], None] | None, Callable[[str, str], None] | None]]:
    """A rich progress bar on stderr (items done, errors; ``label`` in front); no callbacks when quiet."""
    with phased_progress(quiet, label) as (on_start, on_item, _):
        yield on_start, on_item


@contextmanager
def phased_progress(quiet: bool, label: str = "collecting") -> Iterator[tuple[
        Callable[[int], None] | None, Callable[[str, str], None] | None, Callable[[str, int, int], None] | None]]:
    """:func:`stage_progress`, and ``on_phase(name, done, total)`` for the work after the items (one bar per
    phase, added when it is first reported: a stage's pairs compared, say); no callbacks when quiet."""
    if quiet:
        yield None, None, None
        return
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                  TextColumn("{task.fields[note]}"), TimeRemainingColumn(), console=console) as progress:
        task = progress.add_task(label, total=None, note="0 errors")
        errors = 0
        phases: dict[str, Any] = {}

        def on_start(total: int) -> None:
            progress.update(task, total=total)

        def on_item(_file: str, outcome: str) -> None:
            nonlocal errors
            errors += outcome == "error"
            progress.update(task, advance=1, note=f"{errors} errors")

        def on_phase(name: str, done: int, total: int) -> None:
            if name not in phases:
                phases[name] = progress.add_task(name, total=total, note="")
            progress.update(phases[name], completed=done, total=total)

        yield on_start, on_item, on_phase
