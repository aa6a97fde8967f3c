"""`zuhyo filter ...`: drop unusable figures from a workspace, each drop with a reason a person can overturn.

Command shape (for the modules that add subcommands to this group)::

    zuhyo filter WS [options]          # runs the stage; the same as `zuhyo filter run WS [options]`
    zuhyo filter run WS [options]      # the stage: file checks, minimum resolution, near duplicates, chart check
    zuhyo filter train WS --labels ... # added by zuhyo.cli.construct_filter_train

``filter_app`` is a typer group whose first argument, when it is not a subcommand name, is taken as the workspace
of ``run`` (see :class:`_DefaultRunGroup`). Another module adds a subcommand with a plain function and one line in
:func:`register` below, e.g. ``filter_app.command("train")(train_cmd)``; it must not name a subcommand like a
workspace folder one would pass to ``run``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from typer.core import TyperGroup

from zuhyo.cli._common import JsonOpt, emit_json, phased_progress, result_console
from zuhyo.cli.workspace import WsArg, open_workspace


class _DefaultRunGroup(TyperGroup):
    """A group whose default subcommand is ``run``: ``zuhyo filter WS`` == ``zuhyo filter run WS``."""

    def resolve_command(self, ctx: Any, args: list[str]) -> Any:
        if args and args[0] not in self.commands and not args[0].startswith("-"):
            args = ["run", *args]
        return super().resolve_command(ctx, args)


filter_app = typer.Typer(cls=_DefaultRunGroup, no_args_is_help=True,
                         help="Filter a workspace's figures: `zuhyo filter WS` runs the stage (= `filter run WS`).")


@filter_app.command("run")
def run_cmd(
    ws: WsArg,
    min_side: Annotated[int, typer.Option("--min-side", min=1, help="Drop images whose shorter side is under this "
                                                                    "many pixels (low resolution).")] = 150,
    min_pixels: Annotated[int, typer.Option("--min-pixels", min=1, help="Drop images with fewer pixels than this "
                                                                        "(width x height).")] = 60_000,
    min_score: Annotated[float, typer.Option("--min-score", min=0.0, max=1.0, help="Thumbnail verification score (1 - "
                                             "the share of the chart's ink that differs after alignment) for two "
                                             "images to be near duplicates; a pair that reaches it is compared "
                                             "again at full resolution, where a compact region of difference "
                                             "(a changed bar, cell or number) fails it.")] = 0.80,
    classifier: Annotated[str, typer.Option("--classifier", help="Chart/table check: auto (the workspace's trained "
                                            "features model, else its fine-tuned resnet18, else skipped), "
                                            "features, resnet18 (alias torchvision), llm:SPEC, or none.")] = "auto",
    executor: Annotated[str, typer.Option("--executor", help="Where images are hashed and classified: local "
                                          "processes, or ray / ray:ADDRESS.")] = "local",
    review_html: Annotated[Path | None, typer.Option(
        "--review-html", help="Also write a page showing each near-duplicate cluster side by side (kept figure, "
                              "dropped figures, scores, the `zuhyo decide` command to overrule a drop).")] = None,
    json_out: JsonOpt = False,
) -> None:
    """Run the filter stage: file checks, minimum resolution, near duplicates, chart check; re-runnable."""
    with (open_workspace(ws) as w,
          phased_progress(quiet=json_out, label="checking images") as (on_start, on_item, on_phase)):
        from zuhyo.construct.filter.stage import run_filter

        report = run_filter(w, min_side=min_side, min_pixels=min_pixels, min_score=min_score,
                            classifier=classifier, executor=executor, on_start=on_start, on_item=on_item,
                            on_phase=on_phase)
        review_clusters = None
        if review_html is not None:
            from zuhyo.construct.filter.review import write_review_html

            review_clusters = write_review_html(w, review_html)
    if json_out:
        emit_json({**report.model_dump(mode="json"),
                   **({"review_html": str(review_html)} if review_html is not None else {})})
        return
    from rich.markup import escape

    dropped = ", ".join(f"{n} {k.replace('_', ' ')}" for k, n in report.dropped.items())
    result_console.print(f"{report.checked} figures checked: {report.kept} kept, {sum(report.dropped.values())} "
                         f"dropped "
                         f"({dropped}), {report.clusters} near-duplicate clusters, {report.errors} errors; "
                         f"{report.recorded} new decisions", highlight=False)
    if any(report.by_person.values()):
        result_console.print(f"  decided by a person (left alone): {report.by_person['keep']} kept, "
                             f"{report.by_person['drop']} dropped", highlight=False)
    result_console.print(f"  chart check: {escape(report.chart_check)}", highlight=False, soft_wrap=True)
    result_console.print(f"  review: zuhyo figures {escape(str(ws))} --stage filter --json; overturn: zuhyo decide "
                         f"{escape(str(ws))} FIGURE keep|drop --reason ...", highlight=False, soft_wrap=True)
    if review_html is not None:
        result_console.print(f"  review page: {escape(str(review_html))} ({review_clusters} clusters)",
                             highlight=False, soft_wrap=True)


def register(app: typer.Typer) -> None:
    # Subcommands from other modules register here, e.g.:
    #   from zuhyo.cli.construct_filter_train import train_cmd
    #   filter_app.command("train")(train_cmd)
    from zuhyo.cli.construct_filter_train import train_cmd

    filter_app.command("train")(train_cmd)
    app.add_typer(filter_app, name="filter")
