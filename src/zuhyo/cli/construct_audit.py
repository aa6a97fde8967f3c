"""`zuhyo audit`: ask a panel of models each QA item with and without its image and flag the items people should
look at (text-only answerable, doubtful reference, ambiguous); `--list` shows the open flags."""

from __future__ import annotations

import os
from typing import Annotated, Any

import typer

from zuhyo.cli._common import JsonOpt, emit_json, fail, print_item_errors, result_console, stage_progress
from zuhyo.cli.construct_label import ApiKeyEnvOpt, MaxPixelsOpt, RetriesOpt, RetryBaseOpt, TimeoutOpt
from zuhyo.cli.workspace import WsArg, open_workspace


def audit_cmd(
    ws: WsArg,
    model: Annotated[list[str] | None, typer.Option("--model", help="Model spec, e.g. openai:<model>@<base_url> "
                                                    "(repeatable: the panel).")] = None,
    judge: Annotated[str, typer.Option("--judge", help="Judge spec, as `eval --judge`: auto (astro items by the "
                                       "AstroChart routing, hakusho items by rules) | auto:<spec> (adds the LLM "
                                       "judges: cascade:<spec> for hakusho items) | rules | cascade:<spec> ...")
                     ] = "auto",
    status: Annotated[list[str] | None, typer.Option("--status", help="Audit items in this status (repeatable; "
                                                     "default: draft, authored, verifying, revise, reviewing, "
                                                     "accepted).")] = None,
    text_only_rule: Annotated[str, typer.Option("--text-only-rule", help="Flag text_only when any | majority | "
                                                "all of the models whose blind answer the judge decided answer "
                                                "correctly without the image.")] = "majority",
    scatter: Annotated[float, typer.Option("--scatter", min=0.0, max=1.0, help="Flag ambiguity when at least "
                                           "this share of the decided answer pairs disagree (3+ answers).")] = 0.75,
    concurrency: Annotated[int, typer.Option("--concurrency", min=1, help="Requests in flight (all models "
                                             "together).")] = 8,
    timeout: TimeoutOpt = 300.0, retries: RetriesOpt = 5,
    retry_base: RetryBaseOpt = 1.0, api_key_env: ApiKeyEnvOpt = "OPENAI_API_KEY",
    max_image_pixels: MaxPixelsOpt = None,
    max_tokens: Annotated[int, typer.Option("--max-tokens", min=1, help="Most tokens per answer (as `eval`).")
                          ] = 8192,
    list_flags_: Annotated[bool, typer.Option("--list", help="Show the flags instead of auditing (open ones; "
                                              "--all for every status).")] = False,
    all_flags: Annotated[bool, typer.Option("--all", help="With --list: resolved and dismissed flags too.")] = False,
    kind: Annotated[list[str] | None, typer.Option("--kind", help="With --list: only this kind (text_only, "
                                                   "reference_doubt, ambiguity; repeatable).")] = None,
    json_out: JsonOpt = False,
) -> None:
    """Quality audit of the QA items: each model answers each question without the image (text-only probe) and
    with it; flags text_only, reference_doubt and ambiguity with their evidence for people to resolve."""
    from zuhyo.construct.qa.audit import AUDIT_STATUSES, FLAG_KINDS
    from zuhyo.construct.qa.audit_rules import TEXT_ONLY_RULES
    from zuhyo.construct.workspace.qa_tables import QA_STATUSES

    if list_flags_:
        bad = [k for k in kind or [] if k not in FLAG_KINDS]
        if bad:
            fail(f"unknown --kind {bad[0]!r}; choose from {', '.join(FLAG_KINDS)}")
        _show_flags(ws, all_flags, tuple(kind or ()), json_out)
        return
    if not model:
        fail("give --model SPEC (repeatable) to audit, or --list to show the flags")
    if len(set(model)) != len(model):
        fail("each --model may be given once")
    if text_only_rule not in TEXT_ONLY_RULES:
        fail(f"unknown --text-only-rule {text_only_rule!r}; choose from {', '.join(TEXT_ONLY_RULES)}")
    statuses = tuple(status or AUDIT_STATUSES)
    for st in statuses:
        if st not in QA_STATUSES:
            fail(f"unknown --status {st!r}; choose from {', '.join(QA_STATUSES)}")
    with open_workspace(ws) as w:
        out = _audit(w, model, judge, statuses, text_only_rule=text_only_rule, scatter=scatter,
                     concurrency=concurrency, timeout=timeout, retries=retries, retry_base=retry_base,
                     api_key_env=api_key_env, max_image_pixels=max_image_pixels,
                     max_tokens=max_tokens, json_out=json_out)
    if json_out:
        emit_json(out)
    else:
        _print(out)
    from zuhyo.cli._common import exit_if_all_failed

    exit_if_all_failed(out["answers"], out["errors"], "model calls")


def _print(out: dict[str, Any]) -> None:
    flags = out["flags"]
    result_console.print(f"{out['items']} QA items audited by {len(out['models'])} model(s) (judge {out['judge']}): "
                         f"{out['asked']} asked, {out['answers']} answers, {out['errors']} errors, "
                         f"{out['skipped_existing']} answers already there, {out['undecided']} undecided, "
                         f"{out['judge_errors']} judge errors, {out['retries']} retries", highlight=False)
    result_console.print(f"new flags: {flags['text_only']} text_only, {flags['reference_doubt']} reference_doubt, "
                         f"{flags['ambiguity']} ambiguity ({out['flags_existing']} already flagged"
                         + (f"; {out['incomplete']} item checks wait for failed calls" if out["incomplete"]
                            else "") + ")",
                         highlight=False)
    print_item_errors([f"qa item {e['qa_item_id']} ({e['purpose']}, {e['model']}): {e['reason'][:300]}"
                       for e in out["error_items"]])


def _audit(w: Any, models: list[str], judge_spec: str, statuses: tuple[str, ...], *, text_only_rule: str,
           scatter: float, concurrency: int, timeout: float, retries: int, retry_base: float, api_key_env: str,
           max_image_pixels: int | None, max_tokens: int, json_out: bool) -> dict[str, Any]:
    from zuhyo.cli.construct_label import stage_backend
    from zuhyo.construct.qa.audit import AuditOptions, run_audit
    from zuhyo.evaluate.judges import JudgeOptions, build_judge
    from zuhyo.models.base import ModelBackend

    backends: list[ModelBackend] = [
        stage_backend(spec, timeout=timeout, retries=retries, retry_base=retry_base, api_key_env=api_key_env,
                      max_image_pixels=max_image_pixels) for spec in models]
    judge = build_judge(judge_spec, JudgeOptions(api_key=os.environ.get(api_key_env) or None, timeout_s=timeout))
    options = AuditOptions(text_only_rule=text_only_rule, scatter=scatter, statuses=statuses,
                           concurrency=concurrency, max_tokens=max_tokens)
    with stage_progress(quiet=json_out, label="auditing") as (on_start, on_item):
        report = run_audit(w, backends, judge, options, on_start=on_start, on_item=on_item)
    return report.model_dump(mode="json")


def _show_flags(ws: Any, all_flags: bool, kinds: tuple[str, ...], json_out: bool) -> None:
    from zuhyo.construct.qa.audit import list_flags

    with open_workspace(ws) as w:
        flags = list_flags(w, status=None if all_flags else "open", kinds=kinds)
    if json_out:
        emit_json({"flags": flags})
        return
    from rich.markup import escape
    from rich.table import Table

    from zuhyo.cli._common import result_console

    table = Table(title=f"{len(flags)} {'' if all_flags else 'open '}audit flags", title_justify="left")
    for col in ("flag", "item", "kind", "status", "detail", "question", "reference"):
        table.add_column(col, overflow="fold")
    for f in flags:
        table.add_row(str(f["id"]), str(f["qa_item_id"]), f["kind"], f["status"], escape(f["detail"]),
                      escape(f["question"][:120]), escape(f["reference"][:60]))
    result_console.print(table)


def register(app: typer.Typer) -> None:
    app.command("audit")(audit_cmd)
