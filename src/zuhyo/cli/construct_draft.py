"""`zuhyo draft`: QA pairs drafted by a model (DomainCQA Table 1 categories or HakushoBench short answers)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Literal

import typer

from zuhyo.cli._common import JsonOpt, emit_json, exit_if_all_failed, print_item_errors, result_console, stage_progress
from zuhyo.cli.construct_label import (
    ApiKeyEnvOpt,
    ConcurrencyOpt,
    ConstrainedOpt,
    MaxPixelsOpt,
    RetriesOpt,
    RetryBaseOpt,
    TimeoutOpt,
    stage_backend,
)
from zuhyo.cli.workspace import WsArg, open_workspace

if TYPE_CHECKING:
    from zuhyo.construct.qa.drafting import DraftReport


def draft_cmd(
    ws: WsArg,
    model: Annotated[str, typer.Option("--model", help="Model spec, e.g. openai:<model>@<base_url>.")],
    style: Annotated[Literal["astro", "hakusho"], typer.Option(
        "--style", help="astro: one QA per DomainCQA Table 1 category and aspect for each sampled chart, and "
                        "KB-Inference / KB-Summary for each chart abstract; hakusho: one hard short-answer "
                        "question with difficulty flags per image (HakushoBench §3.2).")],
    category: Annotated[list[str] | None, typer.Option(
        "--category", help="Astro only: draft just this category (FQA-Visual, FQA-Data, FQA-Inference, "
                           "FQA-Summary, AQA-KB-Inference, AQA-KB-Summary); repeatable.")] = None,
    all_kept: Annotated[bool, typer.Option(
        "--all-kept", help="Draft for every kept figure, not just the current sample.")] = False,
    mix: Annotated[Literal["every", "table1"], typer.Option(
        "--mix", help="Astro only: every (each kind for each chart) or table1 (DomainCQA Table 1's counts per "
                      "category and aspect, scaled to the charts at hand).")] = "every",
    seed: Annotated[int, typer.Option("--seed", help="Seed of the --mix table1 allocation of kinds to "
                                                     "charts.")] = 0,
    overlap: Annotated[bool, typer.Option(
        "--overlap", help="Astro: let a chart abstract also get FQA questions (by default the FQA and AQA "
                          "charts are disjoint, as in DomainCQA §4.1).")] = False,
    domain: Annotated[str, typer.Option("--domain", help="The domain the AQA prompts name (DomainCQA: "
                                                         "astronomy).")] = "astronomy",
    concurrency: ConcurrencyOpt = 4, timeout: TimeoutOpt = 300.0, retries: RetriesOpt = 5,
    retry_base: RetryBaseOpt = 1.0, api_key_env: ApiKeyEnvOpt = "OPENAI_API_KEY",
    max_image_pixels: MaxPixelsOpt = None, constrained: ConstrainedOpt = True,
    max_tokens: Annotated[int, typer.Option("--max-tokens", min=64, help="Reply token limit per draft.")] = 2048,
    json_out: JsonOpt = False,
) -> None:
    """Draft QA pairs with a model; drafts that leak their answer or repeat another item are kept as rejected,
    with the reason; resumable, another model's drafts go beside the earlier ones."""
    from zuhyo.construct.qa.drafting import run_drafting

    backend = stage_backend(model, timeout=timeout, retries=retries, retry_base=retry_base,
                            api_key_env=api_key_env, max_image_pixels=max_image_pixels)
    with open_workspace(ws) as w, stage_progress(quiet=json_out, label=f"draft {style}") as (on_start, on_item):
        report = run_drafting(w, backend, style, categories=category or None, all_kept=all_kept, mix=mix,
                              seed=seed, overlap=overlap, domain=domain,
                              concurrency=concurrency, constrained=constrained, max_tokens=max_tokens,
                              on_start=on_start,
                              on_item=(lambda fid, outcome: on_item(str(fid), outcome)) if on_item else None)
    out = report.model_dump(mode="json")
    if json_out:
        emit_json(out)
    else:
        _print(report)
    exit_if_all_failed(report.drafted + sum(report.rejected.values()), report.errors, "drafts asked")


def _print(report: DraftReport) -> None:
    from rich.markup import escape

    rejected = sum(report.rejected.values())
    detail = ", ".join(f"{k} {v}" for k, v in report.rejected.items() if v)
    result_console.print(f"{escape(report.model)} ({report.style}, figures from {report.source}): {report.figures} "
                         f"figures ({report.abstracts} chart abstracts), {report.drafted} drafts, {rejected} rejected"
                         + (f" ({detail})" if detail else "") + f", {report.skipped_existing} already drafted, "
                         f"{report.errors} errors ({report.reasked} re-asked, {report.retries} retries)",
                         highlight=False)
    if report.mix != "every" or report.abstracts_left_out:
        plan = "; ".join(f"{fam} " + ", ".join(f"{k} {v}" for k, v in counts.items())
                         for fam, counts in report.planned.items())
        result_console.print(f"  mix {report.mix}: {plan}; {report.abstracts_left_out} sampled charts left out of "
                             "FQA as chart abstracts", highlight=False)
    print_item_errors([f"figure {item.figure_id} {item.kind}: {item.reason[:300]}" for item in report.error_items])


def register(app: typer.Typer) -> None:
    app.command("draft")(draft_cmd)
