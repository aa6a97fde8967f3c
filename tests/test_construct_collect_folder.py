"""`zuhyo collect folder` and the workspace commands on SQLite: idempotent, resumable after kill -9, errors kept."""

from __future__ import annotations

import json
import os
import shutil
import signal
import sqlite3
import struct
import subprocess
import sys
import time
import zlib
from pathlib import Path

import pytest
from conftest import run_cli, run_cli_json

pytest.importorskip("sqlalchemy", reason="the [build] extra is needed")


def make_image_folder(folder: Path, n: int, subdirs: int = 2, size: int = 32) -> list[str]:
    """``n`` distinct small images spread over ``subdirs`` sub-folders (PNG and JPEG); their relative paths."""
    from PIL import Image

    out = []
    for i in range(n):
        sub = folder / f"part{i % subdirs}" if subdirs else folder
        sub.mkdir(parents=True, exist_ok=True)
        suffix = ".jpg" if i % 5 == 4 else ".png"
        im = Image.new("RGB", (size + i % 7, size), (i % 256, (i // 256) % 256, 200))
        im.putpixel((0, 0), (255 - i % 256, 0, 0))
        im.save(sub / f"fig{i:04d}{suffix}")
        out.append((sub / f"fig{i:04d}{suffix}").relative_to(folder).as_posix())
    return out


def png_declaring(width: int, height: int) -> bytes:
    """A structurally valid PNG whose header declares width x height (a decompression bomb, not decoded)."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", zlib.compress(b"\x00" * 16))
            + chunk(b"IEND", b""))


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    path = tmp_path / "ws"
    run_cli("init", str(path))
    return path


def test_collect_folder_twice_adds_nothing_twice(ws: Path, tmp_path: Path):
    files = make_image_folder(tmp_path / "imgs", 6)
    first = run_cli_json("collect", "folder", str(ws), str(tmp_path / "imgs"))
    assert {k: first[k] for k in ("figures", "documents", "errors", "skipped_existing")} == \
        {"figures": 6, "documents": 2, "errors": 0, "skipped_existing": 0}
    second = run_cli_json("collect", "folder", str(ws), str(tmp_path / "imgs"))
    assert {k: second[k] for k in ("figures", "documents", "errors", "skipped_existing")} == \
        {"figures": 0, "documents": 0, "errors": 0, "skipped_existing": 6}
    status = run_cli_json("status", str(ws))
    assert (status["sources"], status["documents"], status["figures"]) == (1, 2, 6)
    assert status["stages"]["collect"]["runs"] == 2
    assert status["stages"]["collect"]["last_run"]["status"] == "done"
    listed = run_cli_json("figures", str(ws))
    assert sorted(f["locator"] for f in listed["figures"]) == sorted(files)
    stored = [p for p in (ws / "images").rglob("*") if p.is_file() and p.name != "index.jsonl"]
    assert len(stored) == 6
    assert {f["sha256"] for f in listed["figures"]} == {p.parent.name + p.name.split(".")[0] for p in stored}
    # a workspace inside the collected folder is not collected into itself
    inner = run_cli_json("init", str(tmp_path / "imgs" / "ws-inside"))
    for expected in ({"figures": 6, "errors": 0, "skipped_existing": 0}, {"figures": 0, "errors": 0,
                                                                         "skipped_existing": 6}):
        got = run_cli_json("collect", "folder", inner["workspace"], str(tmp_path / "imgs"))
        assert {k: got[k] for k in expected} == expected
    shutil.rmtree(tmp_path / "imgs" / "ws-inside")
    # a new file is picked up by the next run, the others are skipped
    make_image_folder(tmp_path / "more", 7)
    (tmp_path / "more" / "part0" / "fig0006.png").rename(tmp_path / "imgs" / "new.png")
    third = run_cli_json("collect", "folder", str(ws), str(tmp_path / "imgs"))
    assert (third["figures"], third["documents"], third["skipped_existing"]) == (1, 1, 6)


def test_bad_files_are_errors_with_reasons_and_resolve_when_fixed(ws: Path, tmp_path: Path):
    imgs = tmp_path / "imgs"
    make_image_folder(imgs, 3, subdirs=0)
    good = (imgs / "fig0000.png").read_bytes()
    (imgs / "truncated.png").write_bytes(good[: len(good) // 2])
    (imgs / "notes.txt").write_text("not a chart", encoding="utf-8")
    (imgs / "bomb.png").write_bytes(png_declaring(60_000, 60_000))
    (imgs / ".hidden.png").write_bytes(b"ignored")
    report = run_cli_json("collect", "folder", str(ws), str(imgs))
    assert (report["figures"], report["errors"]) == (3, 3)
    reasons = {e["file"]: e["reason"] for e in report["error_items"]}
    assert set(reasons) == {"truncated.png", "notes.txt", "bomb.png"}
    assert "truncated" in reasons["truncated.png"] or "corrupt" in reasons["truncated.png"]
    assert "not an image" in reasons["notes.txt"]
    assert "decompression bomb" in reasons["bomb.png"]
    status = run_cli_json("status", str(ws))
    assert status["errors"] == 3 and status["stages"]["collect"]["errors"] == 3
    # a re-run retries the failures (still failing: still 3 errors, not 6)
    assert run_cli_json("collect", "folder", str(ws), str(imgs))["errors"] == 3
    assert run_cli_json("status", str(ws))["errors"] == 3
    # fixing a file resolves its error
    make_image_folder(tmp_path / "fix", 5, subdirs=0)
    (tmp_path / "fix" / "fig0004.jpg").replace(imgs / "truncated.png")
    again = run_cli_json("collect", "folder", str(ws), str(imgs))
    assert (again["figures"], again["errors"], again["skipped_existing"]) == (1, 2, 3)
    assert run_cli_json("status", str(ws))["errors"] == 2
    # human-readable output names the failing files
    text = run_cli("collect", "folder", str(ws), str(imgs)).stderr
    assert "notes.txt" in text and "bomb.png" in text


def test_captions_csv_fills_fields_reports_unknown_files_and_updates_later(ws: Path, tmp_path: Path):
    imgs = tmp_path / "imgs"
    make_image_folder(imgs, 4)
    csv_path = tmp_path / "captions.csv"
    csv_path.write_text("\ufefffile,caption,figure_number,year,page_url,licence\n"
                        "part0/fig0000.png,図表1-1 インターネット利用率の推移,図表1-1,2023,https://example.org/p1,CC-BY\n"
                        "fig0001.png,Second,,,,\n"
                        "missing.png,Nowhere,,,,\n", encoding="utf-8")
    report = run_cli_json("collect", "folder", str(ws), str(imgs), "--captions", str(csv_path))
    assert report["figures"] == 4 and report["unmatched_captions"] == ["missing.png"]
    figures = {f["locator"]: f for f in run_cli_json("figures", str(ws))["figures"]}
    first = figures["part0/fig0000.png"]
    assert (first["caption"], first["figure_number"], first["page_url"]) == \
        ("図表1-1 インターネット利用率の推移", "図表1-1", "https://example.org/p1")
    assert figures["part1/fig0001.png"]["caption"] == "Second"  # matched by file name
    assert figures["part0/fig0002.png"]["caption"] is None
    text = run_cli("collect", "folder", str(ws), str(imgs), "--captions", str(csv_path)).stderr
    assert "missing.png" in text
    csv_path.write_text("file,caption\nfig0002.png,Added later\n", encoding="utf-8")
    later = run_cli_json("collect", "folder", str(ws), str(imgs), "--captions", str(csv_path))
    assert (later["figures"], later["captions_updated"]) == (0, 1)
    figures = {f["locator"]: f for f in run_cli_json("figures", str(ws))["figures"]}
    assert figures["part0/fig0002.png"]["caption"] == "Added later"
    assert figures["part0/fig0000.png"]["caption"].startswith("図表1-1")
    bad = tmp_path / "bad.csv"
    bad.write_text("name,caption\nx.png,y\n", encoding="utf-8")
    proc = run_cli("collect", "folder", str(ws), str(imgs), "--captions", str(bad), check=False)
    assert proc.returncode == 1 and "needs a 'file' column" in proc.stderr


def test_provenance_and_year_from_csv_reach_the_figure(ws: Path, tmp_path: Path):
    from zuhyo.construct.workspace import Workspace
    from zuhyo.construct.workspace.queries import list_figures
    from zuhyo.construct.workspace.records import figure_from_row
    from zuhyo.construct.workspace.tables import FigureRow

    imgs = tmp_path / "imgs"
    make_image_folder(imgs, 1, subdirs=0)
    csv_path = tmp_path / "c.csv"
    csv_path.write_text("file,caption,year,context,licence\nfig0000.png,Cap,2023,Cited here.,CC-BY\n",
                        encoding="utf-8")
    run_cli_json("collect", "folder", str(ws), str(imgs), "--captions", str(csv_path))
    with Workspace.open(ws) as w:
        assert [f["id"] for f in list_figures(w)] == [1]
        with w.db.read() as s:
            row = s.get(FigureRow, 1)
            assert row is not None
            fig = figure_from_row(row)
    assert (fig.year, fig.context, fig.width, fig.mime) == (2023, ["Cited here."], 32, "image/png")
    assert fig.provenance["csv"] == {"licence": "CC-BY"} and fig.provenance["file"] == "fig0000.png"


def _count_figures(db: Path) -> int:
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=30)
    try:
        return int(con.execute("SELECT count(*) FROM figures").fetchone()[0])
    except sqlite3.OperationalError:
        return 0
    finally:
        con.close()


def test_kill_9_mid_collect_then_rerun_completes_exactly(ws: Path, tmp_path: Path):
    n = 400
    make_image_folder(tmp_path / "imgs", n, subdirs=4)
    proc = subprocess.Popen([sys.executable, "-m", "zuhyo", "collect", "folder", str(ws), str(tmp_path / "imgs"),
                             "--json"], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    db = ws / "zuhyo.db"
    deadline = time.monotonic() + 120
    while _count_figures(db) < 30 and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    done_before = _count_figures(db)
    assert proc.returncode == -signal.SIGKILL
    assert 0 < done_before < n, f"the kill should land mid-run ({done_before} of {n} done)"
    report = run_cli_json("collect", "folder", str(ws), str(tmp_path / "imgs"))
    assert report["errors"] == 0
    assert report["figures"] + report["skipped_existing"] == n
    assert report["skipped_existing"] >= done_before
    con = sqlite3.connect(db)
    try:
        assert con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        assert con.execute("SELECT count(*), count(DISTINCT locator), count(DISTINCT sha256) FROM figures"
                           ).fetchone() == (n, n, n)
        runs = con.execute("SELECT status FROM stage_runs ORDER BY id").fetchall()
    finally:
        con.close()
    assert [r[0] for r in runs] == ["running", "done"]  # the killed run stays visible as never finished
    from zuhyo.construct.workspace import Workspace
    from zuhyo.construct.workspace.queries import run_status
    from zuhyo.construct.workspace.tables import StageRun

    with Workspace.open(ws) as w, w.db.read() as s:
        assert [run_status(r) for r in s.query(StageRun).order_by(StageRun.id)] == ["interrupted", "done"]
    from zuhyo.images.store import ImageStore

    store = ImageStore(ws / "images")
    listed = run_cli_json("figures", str(ws))["figures"]
    assert len(listed) == n and all(store.verify(f["sha256"]) for f in listed)


def test_status_figures_decide_json(ws: Path, tmp_path: Path):
    make_image_folder(tmp_path / "imgs", 3, subdirs=0)
    run_cli_json("collect", "folder", str(ws), str(tmp_path / "imgs"))
    figures = run_cli_json("figures", str(ws))
    assert figures["count"] == 3
    assert set(figures["figures"][0]) >= {"id", "sha256", "caption", "figure_number", "page_url", "paper_id",
                                          "status"}
    assert {f["status"] for f in figures["figures"]} == {"collected"}
    sha = figures["figures"][1]["sha256"]
    dropped = run_cli_json("decide", str(ws), sha[:10], "drop", "--reason", "a photo, not a chart", "--by", "aiko")
    assert dropped["figure_id"] == 2 and dropped["stage"] == "review" and dropped["decision"] == "drop"
    assert dropped["decided_by"] == "user:aiko" and dropped["reason"] == "a photo, not a chart"
    status = run_cli_json("status", str(ws))
    assert status["status"] == {"collected": 2, "kept": 0, "dropped": 1}
    assert status["stages"]["review"] == {"drop": 1, "errors": 0}
    listed = run_cli_json("figures", str(ws), "--stage", "review")
    assert [(f["id"], f["status"]) for f in listed["figures"]] == [(2, "dropped")]
    kept = run_cli_json("decide", str(ws), "2", "keep", "--reason", "it is a chart after all")
    assert kept["decision"] == "keep" and kept["decided_by"].startswith("user:")
    assert run_cli_json("status", str(ws))["status"] == {"collected": 2, "kept": 1, "dropped": 0}
    assert run_cli_json("figures", str(ws), "--decision", "drop")["count"] == 0
    con = sqlite3.connect(ws / "zuhyo.db")
    try:  # append-only: both decisions are kept
        assert con.execute("SELECT decision FROM decisions WHERE figure_id = 2 ORDER BY id").fetchall() == \
            [("drop",), ("keep",)]
    finally:
        con.close()
    for args, message in [(("99", "drop"), "no figure with id 99"), (("1", "maybe"), "keep, drop"),
                          (("zz", "drop"), "at least 8 hex digits")]:
        proc = run_cli("decide", str(ws), *args, "--reason", "x", check=False)
        assert proc.returncode == 1 and message in proc.stderr, proc.stderr
    assert "review" in run_cli("status", str(ws)).stdout


def test_person_overturns_a_stage_decision(ws: Path, tmp_path: Path):
    from zuhyo.construct.workspace import Workspace
    from zuhyo.construct.workspace.records import record_decision
    from zuhyo.schema import Decision

    make_image_folder(tmp_path / "imgs", 2, subdirs=0)
    run_cli_json("collect", "folder", str(ws), str(tmp_path / "imgs"))
    with Workspace.open(ws) as w, w.db.write() as s:
        record_decision(s, Decision(figure_id=1, stage="filter", decision="drop", reason="below 300x200",
                                    decided_by="stage:filter", evidence={"width": 32}))
    assert run_cli_json("figures", str(ws), "--stage", "filter", "--decision", "drop")["count"] == 1
    overturned = run_cli_json("decide", str(ws), "1", "keep", "--reason", "small but readable")
    assert overturned["stage"] == "filter"
    assert run_cli_json("figures", str(ws), "--stage", "filter", "--decision", "drop")["count"] == 0
    assert [f["id"] for f in run_cli_json("figures", str(ws), "--stage", "filter", "--decision", "keep")["figures"]
            ] == [1]
    out = json.dumps(run_cli_json("status", str(ws))["stages"]["filter"])
    assert '"keep": 1' in out


def test_title_and_url_name_the_source_in_figures_and_a_bad_url_is_refused(ws: Path, tmp_path: Path):
    make_image_folder(tmp_path / "imgs", 2, subdirs=0)
    bad = run_cli("collect", "folder", str(ws), str(tmp_path / "imgs"), "--url", "file:///etc/passwd", check=False)
    assert bad.returncode != 0 and "is not an http(s) URL" in bad.stderr
    assert run_cli_json("status", str(ws))["figures"] == 0  # refused before anything was recorded
    run_cli_json("collect", "folder", str(ws), str(tmp_path / "imgs"))
    assert {f["source_title"] for f in run_cli_json("figures", str(ws))["figures"]} == {"imgs"}  # the folder's name
    # given on a re-run, the title replaces the folder's name (nothing is collected twice)
    again = run_cli_json("collect", "folder", str(ws), str(tmp_path / "imgs"), "--title", "県の統計図表 2024",
                         "--url", "https://example.org/stats")
    assert (again["figures"], again["skipped_existing"]) == (0, 2)
    assert {f["source_title"] for f in run_cli_json("figures", str(ws))["figures"]} == {"県の統計図表 2024"}


def test_source_names_prefer_series_then_given_then_the_documents_own_title():
    from zuhyo.construct.workspace.records import source_title, source_url
    from zuhyo.construct.workspace.tables import Document, Source

    paper = Document(title="Stellar rotation with celerite", page_url=None)
    latex = Source(kind="latex", title="1703.09710", meta={})
    assert source_title(latex, paper) == "Stellar rotation with celerite"
    assert source_url(latex, paper, None) == "https://arxiv.org/abs/1703.09710"
    assert source_url(Source(kind="latex", title="my-draft", meta={}), paper, None) is None  # not an arXiv id
    assert source_url(latex, paper, "https://example.org/fig.png") == "https://example.org/fig.png"
    folder = Source(kind="folder", title="imgs", meta={})
    assert source_title(folder, Document(title="part0")) == "imgs"  # a sub-folder's name is no better
    named = Source(kind="folder", title="imgs", meta={"title": "Given", "url": "https://example.org/"})
    assert (source_title(named, Document(title="part0")), source_url(named, Document(), None)) == \
        ("Given", "https://example.org/")
    series = Source(kind="html", title=None, meta={"white_paper": "令和6年版 情報通信白書", "title": "Given"})
    assert source_title(series, Document(title="page")) == "令和6年版 情報通信白書"
