"""`zuhyo init`, `zuhyo status`, `zuhyo figures`, `zuhyo decide`: the construction workspace."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from zuhyo.cli._common import JsonOpt, console, emit_json, fail

if TYPE_CHECKING:
    from zuhyo.construct.workspace import Workspace

WsArg = Annotated[Path, typer.Argument(help="Workspace folder (made by `zuhyo init`).")]
_BUILD_EXTRA = "the construction workspace needs SQLAlchemy and Alembic: pip install 'zuhyo[build]'"


def require_build_extra() -> None:
    """Fail with the install hint when SQLAlchemy or Alembic (the ``[build]`` extra) is missing."""
    from importlib.util import find_spec

    for name in ("sqlalchemy", "alembic"):
        if find_spec(name) is None:  # found without importing: alembic is only imported to migrate
            fail(f"{_BUILD_EXTRA} ({name} is missing)")


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
        console.print(f"workspace {ws}: {summary['database']} database at migration {summary['revision']}, "
                      f"images in {summary['images']}", highlight=False)


def status_cmd(ws: WsArg, json_out: JsonOpt = False) -> None:
    """Counts per stage and decision, errors per stage, and the last run of each stage."""
    with open_workspace(ws) as w:
        from zuhyo.construct.workspace.queries import status

        result = status(w)
        if result["qa_items"]:
            from zuhyo.annotate.adjudicate import stuck_items
            from zuhyo.annotate.workflow import WorkflowConfig

            result["stuck"] = stuck_items(w.db, WorkflowConfig.from_workspace(w.config))
    if json_out:
        emit_json(result)
        return
    from rich.table import Table

    console.print(f"{result['workspace']} ({result['database']}, migration {result['revision']}): "
                  f"{result['sources']} sources, {result['documents']} documents, {result['figures']} figures "
                  f"({', '.join(f'{n} {k}' for k, n in result['status'].items())})", highlight=False)
    table = Table("stage", "counts", "errors", "last run")
    for stage, counts in result["stages"].items():
        shown = ", ".join(f"{k} {v}" for k, v in counts.items()
                          if k not in ("errors", "runs", "last_run", "by_kind"))
        last = counts.get("last_run")
        table.add_row(stage, shown, str(counts["errors"]),
                      f"{last['status']} {last['started_at']} by {last['started_by']}" if last else "")
    console.print(table)
    if result["qa_items"]:
        console.print("QA items: " + ", ".join(f"{n} {k}" for k, n in result["qa_items"].items()), highlight=False)
    stuck = result.get("stuck") or []
    if stuck:
        console.print(f"{len(stuck)} QA item(s) wait for a person who does not exist, e.g. "
                      + "; ".join(f"#{s['qa_item_id']} ({s['status']}): {s['reason']}" for s in stuck[:3])
                      + " — add people, or rule on them at /adjudicate in `zuhyo serve`", highlight=False)


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

    table = Table("id", "sha256", "number", "caption", "where", "status")
    for f in figures:
        table.add_row(str(f["id"]), f["sha256"][:12], escape(f["figure_number"] or ""),
                      escape(_short(f["caption"])), escape(f["page_url"] or f["paper_id"] or f["locator"]),
                      f["status"] + "".join(f" {k}:{v}" for k, v in f["decisions"].items()))
    console.print(table)
    console.print(f"{len(figures)} figures", highlight=False)


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
        console.print(f"figure {recorded.figure_id}: {recorded.stage} -> {recorded.decision} "
                      f"({recorded.decided_by})", highlight=False)


def _short(text: Any, width: int = 60) -> str:
    s = " ".join(str(text or "").split())
    return s if len(s) <= width else s[: width - 1] + "…"


def register(app: typer.Typer) -> None:
    app.command("init")(init_cmd)
    app.command("status")(status_cmd)
    app.command("figures")(figures_cmd)
    app.command("decide")(decide_cmd)
