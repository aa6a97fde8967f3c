"""The construction workspace: init at the newest migration, upgrade of an older one, SQLite write discipline."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import threading
import tomllib
from pathlib import Path

import pytest
from conftest import run_cli, run_cli_json

pytest.importorskip("sqlalchemy", reason="the [build] extra is needed")

from zuhyo.construct.workspace import Workspace  # noqa: E402
from zuhyo.construct.workspace.db import HEAD_REVISION, Database, WorkspaceError, head_revision, upgrade  # noqa: E402

ISSUE_10_TABLES = {"sources", "documents", "figures", "decisions", "item_errors", "stage_runs", "alembic_version",
                   "figure_labels",
                   # migration 0004: questions and the annotation workflow
                   "abstract_votes", "abstract_outcomes", "qa_items", "qa_model_answers", "qa_flags", "users",
                   "assignments", "submissions", "verifications", "reviews", "error_samples", "error_tags",
                   "actions",
                   # migration 0005: server-side sessions of the annotation app
                   "web_sessions"}


def assert_tables_match_models(db: Database) -> None:
    """The migrations create exactly what the ORM models declare (Alembic's autogenerate finds no difference)."""
    from alembic.autogenerate import compare_metadata
    from alembic.migration import MigrationContext

    from zuhyo.construct.workspace.tables import Base  # the module that registers every table

    with db.engine.connect() as conn:
        diff = compare_metadata(MigrationContext.configure(conn, opts={"compare_type": True}), Base.metadata)
    assert diff == [], diff


def test_init_creates_tables_at_head(tmp_path: Path):
    out = run_cli_json("init", str(tmp_path / "ws"))
    assert out["revision"] == HEAD_REVISION == head_revision() and out["database"] == "sqlite"
    config = tomllib.loads((tmp_path / "ws" / "zuhyo.toml").read_text(encoding="utf-8"))
    assert config["database"]["url"] == "sqlite:///zuhyo.db" and config["images"]["store"] == "images"
    con = sqlite3.connect(tmp_path / "ws" / "zuhyo.db")
    try:
        tables = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        assert con.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    finally:
        con.close()
    assert tables == ISSUE_10_TABLES
    assert (tmp_path / "ws" / "images").is_dir()
    with Workspace.open(tmp_path / "ws") as ws:
        assert ws.migrated_from is None
        assert_tables_match_models(ws.db)
    # init again is harmless; init with another database is refused
    assert run_cli_json("init", str(tmp_path / "ws"))["revision"] == HEAD_REVISION
    proc = run_cli("init", str(tmp_path / "ws"), "--db", "sqlite:////tmp/elsewhere.db", check=False)
    assert proc.returncode == 1 and "already a workspace with another database" in proc.stderr


def test_older_workspace_is_upgraded_on_open(tmp_path: Path):
    ws = tmp_path / "old"
    ws.mkdir()
    (ws / "zuhyo.toml").write_text('[workspace]\nformat = 1\n[database]\nurl = "sqlite:///zuhyo.db"\n',
                                   encoding="utf-8")
    db = Database(f"sqlite:///{ws / 'zuhyo.db'}")
    assert upgrade(db, "0001") == (None, "0001")
    with db.engine.begin() as conn:
        conn.exec_driver_sql("INSERT INTO sources (kind, locator, meta, created_at) "
                             "VALUES ('folder', '/data', '{}', '2026-01-01')")
        conn.exec_driver_sql("INSERT INTO documents (source_id, locator, meta, created_at) "
                             "VALUES (1, '.', '{}', '2026-01-01')")
        conn.exec_driver_sql("INSERT INTO figures (document_id, locator, sha256, context, provenance, created_at) "
                             f"VALUES (1, 'a.png', '{'ab' * 32}', '[]', '{{}}', '2026-01-01')")
    db.dispose()
    proc = run_cli("status", str(ws), "--json")
    assert f"upgraded workspace database from migration 0001 to {HEAD_REVISION}" in proc.stderr
    status = run_cli_json("status", str(ws))
    assert (status["revision"], status["figures"]) == (HEAD_REVISION, 1)
    decided = run_cli_json("decide", str(ws), "1", "drop", "--reason", "tables of 0002 exist now")
    assert decided["decision"] == "drop"
    with Workspace.open(ws) as opened:
        assert_tables_match_models(opened.db)


def test_newer_workspace_and_non_workspace_are_refused(tmp_path: Path):
    ws = tmp_path / "ws"
    Workspace.init(ws).close()
    con = sqlite3.connect(ws / "zuhyo.db")
    with con:
        con.execute("UPDATE alembic_version SET version_num = '9999'")
    con.close()
    with pytest.raises(WorkspaceError, match="migration '9999', which this zuhyo does not know"):
        Workspace.open(ws)
    proc = run_cli("status", str(ws), check=False)
    assert proc.returncode == 1 and "upgrade zuhyo" in proc.stderr and "Traceback" not in proc.stderr
    proc = run_cli("figures", str(tmp_path / "nothing"), check=False)
    assert proc.returncode == 1 and "not a zuhyo workspace" in proc.stderr


def test_help_does_not_import_sqlalchemy():
    code = ("import sys\nfrom zuhyo.cli import main\nsys.argv = ['zuhyo', '--help']\n"
            "try:\n    main()\nexcept SystemExit:\n    pass\n"
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('sqlalchemy', 'alembic')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert "collect" in out and "init" in out
    assert out.strip().splitlines()[-1] == "[]"


def test_concurrent_sqlite_writers_queue_instead_of_failing(tmp_path: Path):
    """BEGIN IMMEDIATE: writers that read before they write wait for the lock instead of 'database is locked'."""
    from test_construct_collect_folder import make_image_folder

    from zuhyo.construct.collect.folder import collect_folder

    make_image_folder(tmp_path / "imgs", 60, subdirs=3)
    Workspace.init(tmp_path / "ws").close()
    reports, failures = [], []

    def worker() -> None:
        try:
            with Workspace.open(tmp_path / "ws") as ws:
                reports.append(collect_folder(ws, tmp_path / "imgs"))
        except Exception as e:  # noqa: BLE001 - the test reports what went wrong
            failures.append(e)

    threads = [threading.Thread(target=worker) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert failures == []
    assert sum(r.figures for r in reports) == 60
    assert sum(r.documents for r in reports) == 3
    assert all(r.figures + r.skipped_existing == 60 and r.errors == 0 for r in reports)
    assert run_cli_json("status", str(tmp_path / "ws"))["figures"] == 60
