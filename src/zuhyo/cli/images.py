"""`zuhyo images fetch`: materialise a URL-only benchmark's images into a content-addressed store."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
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
    console,
    emit_json,
    make_source,
    print_item_errors,
    result_console,
)

if TYPE_CHECKING:
    from zuhyo.images.fetch import FetchEvent, ProgressCallback

images_app = typer.Typer(help="Download, verify and cache benchmark images.", no_args_is_help=True)


@images_app.command("fetch")
def fetch_cmd(
    name: Annotated[str, typer.Argument(help="Registered benchmark name (see `zuhyo list`).")],
    out: Annotated[Path, typer.Option("--out", help="Image store folder (created; reused to resume).")],
    path: PathOpt = None, hf: HfOpt = None, revision: RevisionOpt = None, split: SplitOpt = None,
    cache_dir: CacheDirOpt = None, option: OptionOpt = None,
    concurrency: Annotated[int, typer.Option("--concurrency", min=1, help="Requests in flight overall.")] = 16,
    per_host: Annotated[int, typer.Option("--per-host", min=1, help="Requests in flight per host.")] = 4,
    delay: Annotated[float, typer.Option("--delay", min=0.0,
                                         help="Seconds between request starts to the same host.")] = 0.2,
    retries: Annotated[int, typer.Option("--retries", min=0,
                                         help="Retries on 429/5xx/timeouts/connection errors.")] = 4,
    timeout: Annotated[float, typer.Option("--timeout", min=0.001, help="Seconds per request.")] = 30.0,
    backoff: Annotated[float, typer.Option("--backoff", min=0.0,
                                           help="Base seconds of the exponential retry backoff.")] = 0.5,
    max_mb: Annotated[float, typer.Option("--max-mb", min=0.001, help="Largest body accepted, in MiB.")] = 50.0,
    allow_private_hosts: Annotated[bool, typer.Option(
        "--allow-private-hosts", help="Follow redirects to private, loopback and link-local addresses (refused "
        "by default unless the URL itself names that host).")] = False,
    strict: Annotated[bool, typer.Option("--strict", help="Exit with status 1 when any image failed (and stop at "
                                                          "the first bad benchmark row).")] = False,
    json_out: JsonOpt = False,
) -> None:
    """Fetch every sample image that has a URL but no local file or embedded bytes; resumable."""
    from zuhyo.benchmarks.base import load_benchmark
    from zuhyo.images.fetch import fetch_images
    from zuhyo.images.store import ImageStore

    result = load_benchmark(name, make_source(path, hf, revision, split, cache_dir, option), strict=strict)
    wanted = [(s.id, s.image.url) for s in result.samples
              if s.image is not None and s.image.url is not None and s.image.data is None and s.image.path is None]
    store = ImageStore(out)
    with _progress_bar(len(wanted), quiet=json_out) as on_event:
        report = fetch_images(wanted, store, concurrency=concurrency, per_host=per_host, delay_s=delay,
                              retries=retries, timeout_s=timeout, backoff_s=backoff,
                              max_bytes=int(max_mb * 1024 * 1024), allow_private_hosts=allow_private_hosts,
                              progress=on_event)
    summary = {"benchmark": result.benchmark, "out": str(out), "samples": len(result.samples),
               "with_url": len(wanted), **report.model_dump(mode="json", exclude={"errors"}),
               "row_errors": len(result.errors), "errors": [e.model_dump() for e in report.errors]}
    if json_out:
        emit_json(summary)
    else:
        from rich.markup import escape

        result_console.print(f"[bold]{escape(result.benchmark)}[/]: {report.summary()} -> {escape(str(out))}",
                             highlight=False)
        if result.errors:
            console.print(f"  {len(result.errors)} benchmark rows could not be read (see `zuhyo bench info`)")
        print_item_errors([str(err) for err in report.errors])
    if report.failed:
        console.print(f"[bold {'red' if strict else 'yellow'}]{report.failed} of {report.items} images failed[/]"
                      + ("" if strict else "; re-run the same command to retry them"), highlight=False)
        if strict:
            raise typer.Exit(1)


@contextmanager
def _progress_bar(total: int, quiet: bool) -> Iterator[ProgressCallback | None]:
    """A rich progress bar on stderr advanced by fetch events (plain lines when stderr is not a terminal); no
    callback when quiet or nothing to fetch."""
    if quiet or total == 0:
        yield None
        return
    if not console.is_terminal:  # a log file, CI, nohup: a plain line every few seconds
        from zuhyo.cli.evaluation import PlainProgress

        with PlainProgress().task("fetching images", total) as advance:

            def on_plain_event(event: FetchEvent) -> None:
                advance(len(event.item_ids))
                if event.outcome == "failed":
                    advance.add_errors(len(event.item_ids))  # type: ignore[attr-defined]

            yield on_plain_event
        return
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    with Progress(TextColumn("fetching images"), BarColumn(), MofNCompleteColumn(),
                  TextColumn("{task.fields[failed]} failed"), TimeRemainingColumn(), console=console) as progress:
        task = progress.add_task("fetch", total=total, failed=0)
        failed = 0

        def on_event(event: FetchEvent) -> None:
            nonlocal failed
            if event.outcome == "failed":
                failed += len(event.item_ids)
            progress.update(task, advance=len(event.item_ids), failed=failed)

        yield on_event


def register(app: typer.Typer) -> None:
    app.add_typer(images_app, name="images")
