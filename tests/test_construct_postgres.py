"""The construction workspace on a real PostgreSQL server (Debian's, started by the test in a temp folder)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import run_cli, run_cli_json
from postgres_cluster import PostgresCluster, postgres  # noqa: F401 - the session fixture
from test_construct_collect_folder import make_image_folder

pytest.importorskip("sqlalchemy", reason="the [build] extra is needed")


def test_init_on_postgres_creates_tables_at_head(postgres: PostgresCluster, tmp_path: Path):  # noqa: F811
    from test_construct_workspace import assert_tables_match_models

    from zuhyo.construct.workspace import Workspace
    from zuhyo.construct.workspace.db import HEAD_REVISION

    url = postgres.create_database("zuhyo_init")
    out = run_cli_json("init", str(tmp_path / "ws"), "--db", url)
    assert (out["database"], out["revision"]) == ("postgresql", HEAD_REVISION)
    assert not (tmp_path / "ws" / "zuhyo.db").exists()
    with Workspace.open(tmp_path / "ws") as ws:
        assert_tables_match_models(ws.db)
        with ws.db.engine.connect() as conn:
            kind = conn.exec_driver_sql("SELECT data_type FROM information_schema.columns "
                                        "WHERE table_name = 'figures' AND column_name = 'provenance'").scalar()
    assert kind == "jsonb"


def test_collect_folder_on_postgres(postgres: PostgresCluster, tmp_path: Path):  # noqa: F811
    url = postgres.create_database("zuhyo_collect")
    ws = tmp_path / "ws"
    run_cli("init", str(ws), "--db", url)
    imgs = tmp_path / "imgs"
    make_image_folder(imgs, 8)
    (imgs / "part0" / "broken.png").write_bytes(b"\x89PNG\r\n\x1a\n" + b"\x00" * 20)
    (imgs / "readme.txt").write_text("hello", encoding="utf-8")
    first = run_cli_json("collect", "folder", str(ws), str(imgs))
    assert {k: first[k] for k in ("figures", "documents", "errors", "skipped_existing")} == \
        {"figures": 8, "documents": 2, "errors": 2, "skipped_existing": 0}
    second = run_cli_json("collect", "folder", str(ws), str(imgs))
    assert {k: second[k] for k in ("figures", "documents", "errors", "skipped_existing")} == \
        {"figures": 0, "documents": 0, "errors": 2, "skipped_existing": 8}
    status = run_cli_json("status", str(ws))
    assert (status["database"], status["figures"], status["errors"]) == ("postgresql", 8, 2)
    run_cli_json("decide", str(ws), "3", "drop", "--reason", "duplicate of 2")
    assert run_cli_json("status", str(ws))["status"] == {"collected": 7, "kept": 0, "dropped": 1}
    assert [f["id"] for f in run_cli_json("figures", str(ws), "--decision", "drop")["figures"]] == [3]


def test_concurrent_collectors_on_postgres_add_each_figure_once(postgres: PostgresCluster,  # noqa: F811
                                                                 tmp_path: Path):
    url = postgres.create_database("zuhyo_race")
    ws = tmp_path / "ws"
    run_cli("init", str(ws), "--db", url)
    make_image_folder(tmp_path / "imgs", 80, subdirs=4)
    cmd = [sys.executable, "-m", "zuhyo", "collect", "folder", str(ws), str(tmp_path / "imgs"), "--json"]
    procs = [subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(3)]
    reports = []
    for p in procs:
        out, err = p.communicate(timeout=300)
        assert p.returncode == 0, err[-2000:]
        reports.append(json.loads(out))
    assert sum(r["figures"] for r in reports) == 80 and sum(r["documents"] for r in reports) == 4
    assert all(r["figures"] + r["skipped_existing"] == 80 for r in reports)
    assert run_cli_json("status", str(ws))["figures"] == 80


def test_get_or_create_race_is_retried_on_postgres(postgres: PostgresCluster, tmp_path: Path):  # noqa: F811
    """Writer B finds no row, then blocks inserting it behind writer A's uncommitted insert and loses the unique
    constraint when A commits; write_retrying runs B again, which then finds A's row."""
    import threading
    import time

    from zuhyo.construct.workspace import Workspace
    from zuhyo.construct.workspace.records import get_or_create_source

    url = postgres.create_database("zuhyo_retry")
    Workspace.init(tmp_path / "ws", db_url=url).close()
    a, b = Workspace.open(tmp_path / "ws"), Workspace.open(tmp_path / "ws")
    attempts: list[int] = []
    result: list[int] = []

    def create_in_b(s):  # type: ignore[no-untyped-def]
        attempts.append(1)
        return get_or_create_source(s, "folder", "/data/raced").id

    try:
        with a.db.write() as sa:
            a_id = get_or_create_source(sa, "folder", "/data/raced").id
            worker = threading.Thread(target=lambda: result.append(b.db.write_retrying(create_in_b)))
            worker.start()
            time.sleep(1.0)  # B has looked, found nothing, and now waits on the unique index
        worker.join(timeout=60)
    finally:
        a.close()
        b.close()
    assert result == [a_id]
    assert len(attempts) == 2
