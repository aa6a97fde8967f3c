"""`zuhyo init`, `zuhyo status`, `zuhyo figures`, `zuhyo decide`: the construction workspace."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from zuhyo.cli._common import JsonOpt, console, emit_json, require_modules, result_console

if TYPE_CHECKING:
    from zuhyo.construct.workspace import Workspace

WsArg = Annotated[Path, typer.Argument(help="Workspace folder (made by `zuhyo init`).")]
def require_build_extra() -> None:
    """Fail with the install hint when SQLAlchemy or Alembic (the ``[build]`` extra) is missing."""
    require_modules("the construction workspace", "sqlalchemy", "alembic")  # alembic is imported only to migrate


def open_workspace(path: Path) -> Workspace:
    """Open a workspace for a command (upgrading an older one, and saying so)."""
    require_build_extra()
    from zuhyo.construct.workspace import Workspace

    ws = Workspace.open(path)
    if ws.migrated_from is not None:
        console.print(f"upgraded workspace database from migration {ws.migrated_from} to {ws.revision()}",
                      highlight=False)
    return ws


def init_cmd(
    ws: Annotated[Path, typer.Argument(help="Folder to make a workspace (created if missing).")],
    db: Annotated[str | None, typer.Option(
        "--db", help="Database URL (default: SQLite file zuhyo.db in the workspace); e.g. "
                     "postgresql+psycopg://user@host/name.")] = None,
    images: Annotated[Path | None, typer.Option("--images", help="Image store folder (default: WS/images); "
                                                                 "a shared folder for a team.")] = None,
    json_out: JsonOpt = False,
) -> None:
    """Create a construction workspace: zuhyo.toml, the database at the newest migration, an image store."""
    require_build_extra()
    from zuhyo.construct.workspace import Workspace

    with Workspace.init(ws, db_url=db, images=images.resolve() if images else None) as w:
        summary = {"workspace": str(w.root), "database": w.db.backend, "revision": w.revision(),
                   "images": str(w.images.root)}
    if json_out:
        emit_json(summary)
    else:
        result_console.print(f"workspace {ws}: {summary['database']} database at migration {summary['revision']}, "
                             f"images in {summary['images']}", highlight=False)


def status_cmd(ws: WsArg, json_out: JsonOpt = False) -> None:
    """Counts at every construction step, errors and the last run of each stage, QA items by status and origin."""
    with open_workspace(ws) as w:
        from zuhyo.construct.workspace.queries import status
        from zuhyo.construct.workspace.stage_counts import stage_counts

        result = status(w)
        result["steps"] = [step.to_json() for step in stage_counts(w, result)]
        if result["qa_items"]:
            from zuhyo.annotate.adjudicate import stuck_items
            from zuhyo.annotate.workflow import WorkflowConfig

            result["stuck"] = stuck_items(w.db, WorkflowConfig.from_workspace(w.config))
    if json_out:
        emit_json(result)
        return
    _print_status(result)


def run_label(last: dict[str, Any] | None) -> str:
    """How ``zuhyo status`` shows a stage's last run: status, time, who; an interrupted one says how to go on."""
    if not last:
        return ""
    shown = "interrupted (re-run to resume)" if last["status"] == "interrupted" else last["status"]
    return f"{shown} {last['started_at']} by {last['started_by']}"


def _print_status(result: dict[str, Any]) -> None:
    from rich.markup import escape
    from rich.table import Table

    result_console.print(f"{escape(result['workspace'])} ({result['database']}, migration {result['revision']}): "
                         f"{result['sources']} sources, {result['documents']} documents, {result['figures']} figures "
                         f"({', '.join(f'{n} {k}' for k, n in result['status'].items())})", highlight=False)
    stages = result["stages"]
    table = Table("step", "command", "count", "detail", "errors", "last run")
    shown: set[str] = set()
    for step in result["steps"]:
        entries = [stages[name] for name in step["stages"] if name in stages]
        shown.update(step["stages"])
        errors = sum(e.get("errors", 0) for e in entries)
        superseded = sum(e.get("superseded_errors", 0) for e in entries)
        runs = [e["last_run"] for e in entries if e.get("last_run")]
        last = max(runs, key=lambda r: r["id"]) if runs else None
        table.add_row(step["step"], step["command"], str(step["count"]), escape(_detail(step["detail"])),
                      str(errors) + (f" ({superseded} superseded)" if superseded else ""), run_label(last))
    for name, entry in stages.items():  # stages outside the steps (export, people's review decisions ...)
        if name in shown:
            continue
        counts = {k: v for k, v in entry.items() if k not in ("errors", "superseded_errors", "runs", "last_run",
                                                              "by_kind")}
        table.add_row(name, "", "", escape(_detail(counts or (entry.get("last_run") or {}).get("counts") or {})),
                      str(entry.get("errors", 0)), run_label(entry.get("last_run")))
    result_console.print(table)
    for origin, by_status in result["qa_items_by_origin"].items():
        result_console.print(f"QA items ({origin}): " + ", ".join(f"{n} {k}" for k, n in by_status.items()),
                             highlight=False)
    stuck = result.get("stuck") or []
    if stuck:
        result_console.print(f"{len(stuck)} QA item(s) wait for a person who does not exist, e.g. "
                             + "; ".join(f"#{s['qa_item_id']} ({s['status']}): {s['reason']}" for s in stuck[:3])
                             + " — add people, or rule on them at /adjudicate in `zuhyo serve`", highlight=False)


def _detail(detail: dict[str, Any]) -> str:
    parts = []
    for key, value in detail.items():
        if isinstance(value, dict):
            value = ", ".join(f"{k} {v}" for k, v in value.items()) or "none"
            parts.append(f"{key}: {value}")
        else:
            parts.append(f"{key} {value:.3f}" if isinstance(value, float) else f"{key} {value}")
    return "; ".join(parts)


def figures_cmd(
    ws: WsArg,
    stage: Annotated[str | None, typer.Option("--stage", help="Only figures with a decision in this stage "
                                                              "(e.g. filter, review).")] = None,
    decision: Annotated[str | None, typer.Option(
        "--decision", help="Only figures whose current decision (in --stage, or any stage) is this: keep, drop.")
    ] = None,
    json_out: JsonOpt = False,
) -> None:
    """List figures: id, sha256, caption, figure number, page URL or paper id, status."""
    with open_workspace(ws) as w:
        from zuhyo.construct.workspace.queries import list_figures

        figures = list_figures(w, stage=stage, decision=decision)
    if json_out:
        emit_json({"count": len(figures), "figures": figures})
        return
    from rich.markup import escape
    from rich.table import Table

    table = Table("id", "sha256", "source", "number", "caption", "where", "status")
    for f in figures:
        table.add_row(str(f["id"]), f["sha256"][:12], str(f["source_id"]), escape(f["figure_number"] or ""),
                      escape(_short(f["caption"])), escape(f["page_url"] or f["paper_id"] or f["locator"]),
                      f["status"] + "".join(f" {k}:{v}" for k, v in f["decisions"].items()))
    result_console.print(table)
    result_console.print(f"{len(figures)} figures", highlight=False)


def decide_cmd(
    ws: WsArg,
    figure: Annotated[str, typer.Argument(help="Figure id, or at least 8 hex digits of its sha256.")],
    decision: Annotated[str, typer.Argument(help="keep or drop.")],
    reason: Annotated[str, typer.Option("--reason", help="Why (required; shown to reviewers).")],
    stage: Annotated[str | None, typer.Option("--stage", help="Stage whose decision this overturns (default: "
                                                              "the figure's latest decision's stage, else review).")
                     ] = None,
    by: Annotated[str | None, typer.Option("--by", help="Who decides (default: the current user).")] = None,
    json_out: JsonOpt = False,
) -> None:
    """Record a person's keep/drop decision on a figure (it overturns the stage's; the old one is kept)."""
    with open_workspace(ws) as w:
        from zuhyo.construct.workspace.queries import decide

        recorded = decide(w, figure, decision, reason, by=by, stage=stage)
    if json_out:
        emit_json(recorded.model_dump(mode="json"))
    else:
        result_console.print(f"figure {recorded.figure_id}: {recorded.stage} -> {recorded.decision} "
                             f"({recorded.decided_by})", highlight=False)


def _short(text: Any, width: int = 60) -> str:
    s = " ".join(str(text or "").split())
    return s if len(s) <= width else s[: width - 1] + "…"


def register(app: typer.Typer) -> None:
    app.command("init")(init_cmd)
    app.command("status")(status_cmd)
    app.command("figures")(figures_cmd)
    app.command("decide")(decide_cmd)
