"""`zuhyo abstracts`: each paper's chart abstract, chosen by several models and a majority vote (DomainCQA
Algorithm 2)."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from zuhyo.cli._common import JsonOpt, emit_json, exit_if_all_failed, print_item_errors, result_console, stage_progress
from zuhyo.cli.construct_label import (
    ApiKeyEnvOpt,
    ConstrainedOpt,
    RetriesOpt,
    RetryBaseOpt,
    TimeoutOpt,
    stage_backend,
)
from zuhyo.cli.workspace import WsArg, open_workspace

ModelsOpt = Annotated[list[str], typer.Option("--model", help="Model spec, e.g. openai:<model>@<base_url>; give it "
                                                              "2 or more times, one vote per model.")]
ConcurrencyOpt = Annotated[int, typer.Option("--concurrency", min=1, help="Requests in flight (all models "
                                                                          "together).")]


def abstracts_cmd(
    ws: WsArg,
    models: ModelsOpt,
    concurrency: ConcurrencyOpt = 8, timeout: TimeoutOpt = 300.0, retries: RetriesOpt = 5,
    retry_base: RetryBaseOpt = 1.0, api_key_env: ApiKeyEnvOpt = "OPENAI_API_KEY",
    max_tokens: Annotated[int, typer.Option("--max-tokens", min=256, help="Most tokens per reply (the reply "
                                                                          "summarises every chart).")] = 4096,
    constrained: ConstrainedOpt = True,
    json_out: JsonOpt = False,
) -> None:
    """Chart abstract of each paper (DomainCQA Algorithm 2): each model summarises the paper and its charts, rates
    their relevance and picks one; a majority vote decides, ties and no majority are recorded, never guessed;
    re-runs reuse recorded votes."""
    from zuhyo.construct.qa.abstracts import run_abstracts

    with open_workspace(ws) as w:
        backends = [stage_backend(m, timeout=timeout, retries=retries, retry_base=retry_base, api_key_env=api_key_env,
                                  max_image_pixels=None) for m in models]
        with stage_progress(quiet=json_out, label="abstracts") as (on_start, on_item):
            report = run_abstracts(w, backends, concurrency=concurrency, constrained=constrained,
                                   max_tokens=max_tokens, on_start=on_start, on_item=on_item)
    out: dict[str, Any] = report.model_dump(mode="json")
    if json_out:
        emit_json(out)
    else:
        _print(out)
    exit_if_all_failed(report.votes, report.errors, "votes asked")


def _print(out: dict[str, Any]) -> None:
    from rich.markup import escape

    result_console.print(f"{len(out['models'])} models (prompt v{out['prompt_version']}), {out['papers']} documents: "
                         f"{out['majority']} chart abstracts by majority, {out['tie']} ties, {out['no_majority']} "
                         f"without "
                         f"a majority, {out['no_votes']} without votes; {out['skipped']} skipped; {out['votes']} votes "
                         f"asked, {out['reused']} reused, {out['errors']} errors ({out['reasked']} re-asked, "
                         f"{out['retries']} retries)", highlight=False)
    for o in out["outcomes"]:
        chosen = f"figure {o['figure_id']}" if o["figure_id"] is not None else "no chart"
        votes = ", ".join(f"{escape(m)}: {'-' if v is None else v}" for m, v in o["votes"].items())
        result_console.print(f"  {escape(o['locator'])}: {o['outcome']} → {chosen} ({votes})", highlight=False,
                             soft_wrap=True)
    print_item_errors([f"document {e['document_id']}, {e['model']}: {e['reason'][:300]}" for e in out["error_items"]]
                      + [f"skipped document {s['document_id']} ({s['locator']}): {s['reason']}"
                         for s in out["skipped_items"]])


def register(app: typer.Typer) -> None:
    app.command("abstracts")(abstracts_cmd)
