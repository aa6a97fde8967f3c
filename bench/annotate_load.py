"""Load test of the annotation app: 21 and 100 simulated annotators author and blind-verify at once.

Two levels, both on SQLite (WAL, the default) and on PostgreSQL (a throwaway Debian cluster, as the tests start):

- ``http`` — the real app (:func:`zuhyo.annotate.app.create_app` under uvicorn, in its own process) and one
  ``httpx`` client per annotator, each its own cookie session: log in, then GET /author → POST /author, GET
  /verify → POST /verify, with CSRF tokens and submit keys read from the pages as a browser would;
- ``workflow`` — the same loop calling the workflow functions directly (no HTTP), to separate the database work
  from the web layer.

A third of the submits are sent twice with the same submit key (a retry after a lost answer). Afterwards
everything is counted in the database: every acknowledged submit stored exactly once, no figure authored twice,
no item verified twice in a round or by its author, no assignment live twice. Prints p50/p95 latency per page and
per submit, throughput, and the counts; exits 1 when any work was lost or duplicated.

    python bench/annotate_load.py [--annotators 21 100] [--level http workflow] [--db sqlite postgresql]
                                  [--think SECONDS]
"""

from __future__ import annotations

import argparse
import json
import random
import re
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
PASSWORD = "bench password 1"
FIGURES_PER_ANNOTATOR = 2
SOURCES = 6
#: Mean seconds an annotator "reads and types" before each submit (0: a burst, every request at once).
THINK_S = {"value": 0.0}


def make_workspace(root: Path, n_figures: int, url: str | None) -> dict[str, int]:
    """A workspace of ``n_figures`` figures (real PNGs in the image store) over six sources; sha → figure id."""
    import io

    from PIL import Image

    from zuhyo.construct.workspace import Workspace
    from zuhyo.construct.workspace.records import add_figure, get_or_create_document, get_or_create_source
    from zuhyo.schema import Figure

    ws = Workspace.init(root, db_url=url)
    shas: dict[str, int] = {}
    with ws.db.write() as s:
        for i in range(n_figures):
            src = get_or_create_source(s, "folder", f"/bench/S{i % SOURCES}", title=f"S{i % SOURCES}")
            doc, _ = get_or_create_document(s, src.id, f"S{i % SOURCES}/doc")
            buf = io.BytesIO()
            Image.new("RGB", (64, 48), ((i * 37) % 256, (i * 91) % 256, 128)).save(buf, "PNG")
            sha, _ = ws.images.put(buf.getvalue(), ".png")
            row = add_figure(s, doc.id, Figure(sha256=sha, locator=f"f{i}.png", caption=f"図{i}", width=64,
                                               height=48, mime="image/png"))
            shas[sha] = row.id
    ws.close()
    return shas


def add_annotators(url: str, n: int) -> list[int]:
    from zuhyo.annotate import add_user
    from zuhyo.construct.workspace.db import Database

    db = Database(url)
    try:
        return [add_user(db, f"ann{i:03d}", PASSWORD, ["annotator"]).id for i in range(n)]
    finally:
        db.dispose()


def stagger(rng: random.Random) -> None:
    """With think time, people start within one think time of each other, not all in the same millisecond."""
    if THINK_S["value"] > 0:
        time.sleep(rng.uniform(0, THINK_S["value"]))


class Recorder:
    def __init__(self) -> None:
        self.lat: dict[str, list[float]] = defaultdict(list)
        self.acked: list[tuple[str, str]] = []  # (step, key)
        self.errors: list[str] = []
        self.lock = threading.Lock()

    def timed(self, name: str, fn: Any, rng: random.Random | None = None) -> Any:
        if rng is not None and THINK_S["value"] > 0 and "submit" in name:
            time.sleep(rng.uniform(0.5, 1.5) * THINK_S["value"])
        t0 = time.perf_counter()
        out = fn()
        dt = time.perf_counter() - t0
        with self.lock:
            self.lat[name].append(dt)
        return out

    def ack(self, step: str, key: str) -> None:
        with self.lock:
            self.acked.append((step, key))


# ---------------------------------------------------------------- workflow level


def workflow_annotator(url_db: Any, uid: int, shas: dict[str, int], rec: Recorder, barrier: threading.Barrier) -> None:
    from zuhyo.annotate import next_author_task, next_verify_task, submit_authored, submit_verification

    rng = random.Random(uid)
    db = url_db
    barrier.wait()
    stagger(rng)
    try:
        for _ in range(FIGURES_PER_ANNOTATOR + 1):
            task = rec.timed("author page", lambda: next_author_task(db, uid))
            if task is not None:
                key = f"a-{uid}-{task.assignment_id}"
                fid = task.figure.figure_id
                for _ in range(2 if rng.random() < 1 / 3 else 1):
                    rec.timed("author submit", lambda t=task, f=fid, k=key: submit_authored(
                        db, uid, t.assignment_id, f"図{f}の値は?", f"{f}万人", ["Global"], k), rng)
                rec.ack("author", key)
            check = rec.timed("verify page", lambda: next_verify_task(db, uid))
            if check is not None:
                key = f"v-{uid}-{check.assignment_id}"
                answer = f"{check.figure.figure_id}万人" if rng.random() < 0.8 else "0"
                for _ in range(2 if rng.random() < 1 / 3 else 1):
                    rec.timed("verify submit", lambda c=check, a=answer, k=key: submit_verification(
                        db, uid, c.assignment_id, a, k), rng)
                rec.ack("verify", key)
    except Exception as e:  # counted
        rec.errors.append(f"annotator {uid}: {type(e).__name__}: {e}")


# ---------------------------------------------------------------- HTTP level

_HIDDEN = re.compile(r'name="(csrf_token|submit_key|assignment_id)" value="([^"]*)"')
_IMAGE = re.compile(r"/images/([0-9a-f]{64})")


def _fields(html: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for name, value in _HIDDEN.findall(html):
        out.setdefault(name, value)
    return out


def http_annotator(base: str, name: str, uid: int, shas: dict[str, int], rec: Recorder,
                   barrier: threading.Barrier) -> None:
    import httpx

    rng = random.Random(uid)
    with httpx.Client(base_url=base, timeout=120, follow_redirects=False) as client:
        try:
            token = _fields(client.get("/login").text)["csrf_token"]
            r = client.post("/login", data={"name": name, "password": PASSWORD, "csrf_token": token})
            if r.status_code != 303:
                raise RuntimeError(f"login answered {r.status_code}")
        except Exception as e:
            rec.errors.append(f"{name}: login: {e}")
            barrier.wait()
            return
        barrier.wait()
        stagger(rng)
        try:
            for _ in range(FIGURES_PER_ANNOTATOR + 1):
                page = rec.timed("author page", lambda: client.get("/author"))
                f = _fields(page.text)
                if page.status_code == 200 and "assignment_id" in f:
                    sha = _IMAGE.search(page.text)
                    fid = shas[sha.group(1)] if sha else 0
                    form = {**f, "question": f"図{fid}の値は?", "answer": f"{fid}万人", "difficulty": "Global"}
                    for _ in range(2 if rng.random() < 1 / 3 else 1):
                        r = rec.timed("author submit", lambda d=form: client.post("/author", data=d), rng)
                        if r.status_code != 303:
                            raise RuntimeError(f"POST /author answered {r.status_code}")
                    rec.ack("author", f["submit_key"])
                page = rec.timed("verify page", lambda: client.get("/verify"))
                f = _fields(page.text)
                if page.status_code == 200 and "assignment_id" in f:
                    sha = _IMAGE.search(page.text)
                    fid = shas[sha.group(1)] if sha else 0
                    answer = f"{fid}万人" if rng.random() < 0.8 else "0"
                    form = {**f, "answer": answer}
                    for _ in range(2 if rng.random() < 1 / 3 else 1):
                        r = rec.timed("verify submit", lambda d=form: client.post("/verify", data=d), rng)
                        if r.status_code != 303:
                            raise RuntimeError(f"POST /verify answered {r.status_code}")
                    rec.ack("verify", f["submit_key"])
        except Exception as e:
            rec.errors.append(f"{name}: {type(e).__name__}: {e}")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_server(ws: Path, port: int) -> subprocess.Popen[bytes]:
    code = ("import uvicorn; from zuhyo.annotate.app import create_app; "
            f"uvicorn.run(create_app({str(ws)!r}), host='127.0.0.1', port={port}, log_level='warning')")
    proc = subprocess.Popen([sys.executable, "-c", code])
    import httpx

    for _ in range(300):
        try:
            if httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=1).status_code == 200:
                return proc
        except httpx.HTTPError:
            time.sleep(0.1)
    proc.kill()
    raise RuntimeError("the app did not start")


# ---------------------------------------------------------------- counting


def count(url: str, rec: Recorder, n_figures: int) -> dict[str, Any]:
    from sqlalchemy import select

    from zuhyo.construct.workspace.db import Database
    from zuhyo.construct.workspace.qa_tables import AssignmentRow, QAItemRow, SubmissionRow, VerificationRow

    db = Database(url)
    try:
        with db.read() as s:
            stored = Counter(k for k, in s.execute(select(SubmissionRow.key)))
            items = list(s.execute(select(QAItemRow.id, QAItemRow.figure_id, QAItemRow.author_id)))
            verifs = list(s.execute(select(VerificationRow.qa_item_id, VerificationRow.round,
                                           VerificationRow.user_id)))
            live = Counter(s.execute(select(AssignmentRow.step, AssignmentRow.target_key, AssignmentRow.round,
                                            AssignmentRow.slot).where(AssignmentRow.status.in_(("open",
                                                                                               "submitted")))))
    finally:
        db.dispose()
    acked = Counter(k for _, k in rec.acked)
    author_of = {i: a for i, _, a in items}
    problems = {
        "acked_not_stored": sum(1 for k in acked if k not in stored),
        "acked_twice": sum(1 for n in acked.values() if n > 1),
        "stored_not_acked": sum(1 for k in stored if k not in acked),
        "figures_authored_twice": sum(1 for n in Counter(f for _, f, _ in items).values() if n > 1),
        "items_vs_author_acks": len(items) - sum(1 for step, _ in rec.acked if step == "author"),
        "verified_twice_in_a_round": sum(1 for n in Counter((q, r) for q, r, _ in verifs).values() if n > 1),
        "verified_by_author": sum(1 for q, _, u in verifs if author_of.get(q) == u),
        "assignments_live_twice": sum(1 for n in live.values() if n > 1),
        "client_errors": len(rec.errors),
    }
    return {"figures": n_figures, "authored": len(items), "verifications": len(verifs), "problems": problems}


def pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))] * 1000


def run_one(level: str, backend: str, n: int, pg: Any) -> dict[str, Any]:
    tmp = Path(tempfile.mkdtemp(prefix="zuhyo-load-"))
    url = pg.create_database(f"load_{level}_{n}_{int(time.time() * 1000) % 10**8}") if backend == "postgresql" \
        else None
    n_figures = n * FIGURES_PER_ANNOTATOR
    shas = make_workspace(tmp / "ws", n_figures, url)
    db_url = url or f"sqlite:///{tmp / 'ws' / 'zuhyo.db'}"
    uids = add_annotators(db_url, n)
    import zuhyo.construct.select.sample_stage
    import zuhyo.construct.workspace.queries
    import zuhyo.evaluate.judges.rules  # noqa: F401 - imported once before the clock starts, as a warm server has

    rec = Recorder()
    barrier = threading.Barrier(n + 1)
    server = None
    if level == "http":
        port = _free_port()
        server = start_server(tmp / "ws", port)
        threads = [threading.Thread(target=http_annotator, args=(f"http://127.0.0.1:{port}", f"ann{i:03d}", uid,
                                                                 shas, rec, barrier)) for i, uid in enumerate(uids)]
    else:
        from zuhyo.construct.workspace.db import Database

        shared = Database(db_url)  # one engine, as one server process has
        threads = [threading.Thread(target=workflow_annotator, args=(shared, uid, shas, rec, barrier))
                   for uid in uids]
    for t in threads:
        t.start()
    barrier.wait()
    t0 = time.perf_counter()
    for t in threads:
        t.join()
    wall = time.perf_counter() - t0
    if server is not None:
        server.terminate()
        server.wait(timeout=30)
    counts = count(db_url, rec, n_figures)
    requests = sum(len(v) for v in rec.lat.values())
    return {"level": level, "db": backend, "annotators": n, "think_s": THINK_S["value"], "wall_s": round(wall, 2),
            "requests_per_s": round(requests / wall, 1),
            "submits_per_s": round(len(rec.acked) / wall, 1),
            "latency_ms": {k: {"n": len(v), "p50": round(pct(v, 0.5), 1), "p95": round(pct(v, 0.95), 1),
                               "mean": round(statistics.mean(v) * 1000, 1)} for k, v in sorted(rec.lat.items())},
            **counts, "errors": rec.errors[:5]}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--annotators", type=int, nargs="+", default=[21, 100])
    parser.add_argument("--level", nargs="+", choices=("http", "workflow"), default=["http", "workflow"])
    parser.add_argument("--db", nargs="+", choices=("sqlite", "postgresql"), default=["sqlite", "postgresql"])
    parser.add_argument("--think", type=float, default=0.0, help="Mean seconds before each submit (uniform "
                                                                  "0.5-1.5x); 0: a burst.")
    parser.add_argument("--json", action="store_true", help="One JSON object per configuration on stdout.")
    args = parser.parse_args()
    THINK_S["value"] = args.think
    pg = None
    if "postgresql" in args.db:
        sys.path.insert(0, str(ROOT / "tests"))
        from postgres_cluster import PostgresCluster, find_bindir

        bindir = find_bindir()
        if bindir is None:
            print("PostgreSQL binaries not found; skipping postgresql", file=sys.stderr)
            args.db = [d for d in args.db if d != "postgresql"]
        else:
            pg = PostgresCluster(bindir, Path(tempfile.mkdtemp(prefix="zuhyo-pg-")))
            pg.start()
    failed = False
    try:
        for level in args.level:
            for backend in args.db:
                for n in args.annotators:
                    out = run_one(level, backend, n, pg)
                    failed |= any(out["problems"].values())
                    if args.json:
                        print(json.dumps(out, ensure_ascii=False), flush=True)
                        continue
                    lat = "; ".join(f"{k} p50 {v['p50']} / p95 {v['p95']} ms (n={v['n']})"
                                    for k, v in out["latency_ms"].items())
                    bad = {k: v for k, v in out["problems"].items() if v}
                    print(f"{level:8} {backend:10} {n:>3} annotators, think {args.think} s: {out['wall_s']} s, "
                          f"{out['requests_per_s']} req/s, {out['submits_per_s']} acked submits/s; {lat}; "
                          f"authored {out['authored']}/"
                          f"{out['figures']}, verifications {out['verifications']}; "
                          f"{'problems ' + str(bad) if bad else 'nothing lost or duplicated'}", flush=True)
                    for e in out["errors"]:
                        print(f"    {e}", flush=True)
    finally:
        if pg is not None:
            pg.stop()
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
