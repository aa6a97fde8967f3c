"""`zuhyo export`: accepted QA items as an HF dataset (Parquet shards + save_to_disk) with a dataset card."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from conftest import run_cli, run_cli_json

pytest.importorskip("sqlalchemy", reason="the [build] extra is needed")

from gates_support import pass_gates  # noqa: E402

from zuhyo.construct.qa.items import add_qa_item  # noqa: E402
from zuhyo.construct.workspace import Workspace  # noqa: E402
from zuhyo.construct.workspace.labels import record_label  # noqa: E402
from zuhyo.construct.workspace.tables import FigureRow  # noqa: E402
from zuhyo.schema import CCV_ATTRIBUTES  # noqa: E402

#: (status, style) of the items made on figures 1..5 by make_qa_ws.
ITEMS = [("accepted", "astro"), ("accepted", "hakusho"), ("draft", "hakusho"), ("rejected", "hakusho"),
         ("discarded", "hakusho")]


def make_qa_ws(tmp_path: Path, n_figures: int = 5) -> Path:
    """A folder-collected workspace with image types, CCVs and one QA item per figure with the statuses of ITEMS."""
    from test_construct_collect_folder import make_image_folder

    make_image_folder(tmp_path / "imgs", n_figures, subdirs=0)
    ws_dir = tmp_path / "ws"
    run_cli("init", str(ws_dir))
    assert run_cli_json("collect", "folder", str(ws_dir), str(tmp_path / "imgs"))["figures"] == n_figures
    with Workspace.open(ws_dir) as ws, ws.db.write() as s:
        for fid in range(1, n_figures + 1):
            record_label(s, fid, "image_type", "Line" if fid % 2 else "Bar", source="model", model="m")
            ccv = {a.name: int(i < fid) for i, a in enumerate(CCV_ATTRIBUTES)}
            record_label(s, fid, "ccv", ccv, source="model", model="m")
        for fid, (status, style) in enumerate(ITEMS[:n_figures], 1):
            fields: dict = {"style": style}
            if style == "astro":
                fields.update(category="FQA-Data", aspect="Point", answer_kind="numeric_retrieval",
                              axis={"min": 0, "max": 10, "scale": "linear"})
            else:
                fields.update(difficulty=["Multi-hop"])
            add_qa_item(s, item_key=f"test/{fid}", figure_id=fid, origin="draft", question=f"question {fid}?",
                        answer=f"{fid}", status="draft" if status == "accepted" else status, actor="test",
                        **fields)
    with Workspace.open(ws_dir) as ws:  # accepted through the real human checks, as export requires
        pass_gates(ws, [fid for fid, (status, _) in enumerate(ITEMS[:n_figures], 1) if status == "accepted"])
    return ws_dir


def store_bytes(ws_dir: Path, figure_id: int) -> bytes:
    with Workspace.open(ws_dir) as ws, ws.db.read() as s:
        fig = s.get(FigureRow, figure_id)
        assert fig is not None
        path = ws.images.path_for(fig.sha256)
    assert path is not None
    return path.read_bytes()


def test_accepted_items_load_back_through_local_adapter_parquet_and_card_configs(tmp_path: Path):
    ws = make_qa_ws(tmp_path)
    out = tmp_path / "my-bench"
    doc = run_cli_json("export", str(ws), "--out", str(out), "--license", "cc-by-4.0", "--language", "ja",
                       "--source-license", "1=CC BY 4.0")
    assert (doc["items"], doc["images"], doc["shards"], doc["out"], doc["card"]) == (
        2, 2, ["test-00000-of-00001.parquet"], str(out), str(out / "README.md"))
    assert doc["by_status"] == {"accepted": 2} and doc["skipped"] == 0

    from zuhyo.benchmarks.base import BenchmarkSource, load_benchmark

    loaded = load_benchmark("local", BenchmarkSource(path=out), strict=True)
    assert loaded.benchmark == "my-bench" and [s.id for s in loaded.samples] == ["qa-1", "qa-2"]
    astro, hakusho = loaded.samples
    assert astro.image is not None and astro.image.data == store_bytes(ws, 1)
    assert astro.astro is not None and astro.astro.ccv == [1] + [0] * 9 and astro.astro.axis_max == 10
    assert astro.image_type is not None and astro.image_type.value == "Line"
    assert hakusho.image_type is not None and hakusho.image_type.value == "Bar"
    assert [f.value for f in hakusho.flags] == ["Multi-hop"] and hakusho.astro is None
    assert hakusho.source is not None and hakusho.source.license == "CC BY 4.0"
    assert hakusho.metadata["status"] == "accepted" and hakusho.metadata["figure_id"] == 2
    from_disk = load_benchmark("local", BenchmarkSource(path=out / "disk"), strict=True)  # save_to_disk copy
    assert [s.model_dump() for s in from_disk.samples] == [s.model_dump() for s in loaded.samples]

    import datasets

    shards = datasets.load_dataset("parquet", data_files=str(out / "*.parquet"), split="train",
                                   cache_dir=str(tmp_path / "hf-cache"))
    # the image is a datasets.Image (the Hub's viewer shows it); category, aspect, CCV, flags are columns
    assert isinstance(shards.features["image"], datasets.Image)
    raw = shards.cast_column("image", datasets.Image(decode=False))
    assert sorted(shards["id"]) == ["qa-1", "qa-2"] and raw[0]["image"]["bytes"] == store_bytes(ws, 1)
    assert (shards[0]["qa_type"], shards[0]["category"], shards[0]["ccv"], shards[0]["ccv_score"]) == \
        ("FQA", "Data", [1] + [0] * 9, 1)
    assert shards[1]["flags"] == ["Multi-hop"] and shards[1]["category"] is None
    assert shards[1]["source_license"] == "CC BY 4.0" and shards[0]["image_type"] == "Line"
    by_card = datasets.load_dataset(str(out), cache_dir=str(tmp_path / "hf-cache"))
    assert list(by_card) == ["test"] and by_card["test"].num_rows == 2

    card = (out / "README.md").read_text(encoding="utf-8")
    header = card.split("---\n")[1]
    assert 'license: "cc-by-4.0"' in header and "- visual-question-answering" in header
    assert '- "ja"' in header and 'path: "test-*.parquet"' in header and "- n<1K" in header
    assert "### Image types (HakushoBench Table 2)" in card and "### CCV attribute proportions" in card
    # one section per style present: this export holds an astro and a hakusho item
    assert "## DomainCQA style: categories and complexity (1 items)" in card
    assert "## HakushoBench style: flags, topics and sources (1 items)" in card and "### Difficulty flags" in card
    assert "![Image types (HakushoBench Table 2)](plots/image_types.png)" in card
    assert (out / "plots" / "image_types.png").stat().st_size > 1000
    assert (out / "statistics" / "statistics.json").is_file()
    assert "| accepted QA | `zuhyo serve` | 2 |" in card and "| exported | `zuhyo export` | 2 |" in card
    assert "| collected | `zuhyo collect` | 5 |" in card and "| CC BY 4.0 | 2 | 2 |" in card
    assert run_cli_json("status", str(ws))["stages"]["export"]["last_run"]["counts"]["items"] == 2


def test_drafts_only_when_asked_and_never_rejected_or_discarded(tmp_path: Path):
    ws = make_qa_ws(tmp_path)
    doc = run_cli_json("export", str(ws), "--out", str(tmp_path / "out"), "--include-drafts")
    assert doc["items"] == 3 and doc["by_status"] == {"accepted": 2, "draft": 1}
    card = (tmp_path / "out" / "README.md").read_text(encoding="utf-8")
    assert "**1 item is a draft**" in card
    from zuhyo.benchmarks.base import BenchmarkSource, load_benchmark

    ids = [s.id for s in load_benchmark("local", BenchmarkSource(path=tmp_path / "out"), strict=True).samples]
    assert ids == ["qa-1", "qa-2", "qa-3"]  # qa-4 rejected, qa-5 discarded: never exported


def test_missing_image_fails_naming_the_item_unless_skipped(tmp_path: Path):
    ws = make_qa_ws(tmp_path)
    with Workspace.open(ws) as w, w.db.read() as s:
        fig = s.get(FigureRow, 2)
        assert fig is not None
        path = w.images.path_for(fig.sha256)
    assert path is not None
    path.unlink()
    out = tmp_path / "out"
    proc = run_cli("export", str(ws), "--out", str(out), check=False)
    assert proc.returncode == 1 and not out.exists()
    assert f"qa-2 (figure 2): image {fig.sha256[:12]} is missing from the workspace's image store" in proc.stderr
    assert "1 items cannot be exported" in proc.stderr
    assert not list(tmp_path.glob(".out.partial-*"))
    failed = json.loads(run_cli("export", str(ws), "--out", str(out), "--json", check=False).stdout)
    assert failed["errors"] == 1 and failed["error_items"][0]["item"] == "qa-2"
    doc = run_cli_json("export", str(ws), "--out", str(out), "--skip-missing")
    assert doc["items"] == 1 and doc["skipped"] == 1 and doc["error_items"][0]["figure_id"] == 2
    # a corrupt copy in the store is caught too (the bytes no longer hash to the figure's SHA-256)
    path.write_bytes(b"\x89PNG\r\n\x1a\nnot the image")
    proc = run_cli("export", str(ws), "--out", str(out), check=False)
    assert proc.returncode == 1 and "in the store is corrupt" in proc.stderr


def test_an_item_that_is_not_a_valid_sample_is_named_not_exported(tmp_path: Path):
    ws = make_qa_ws(tmp_path)
    with Workspace.open(ws) as w, w.db.write() as s:
        from zuhyo.construct.workspace.qa_tables import QAItemRow

        item = s.get(QAItemRow, 1)
        assert item is not None
        item.axis = None  # a numeric-retrieval item without the axis Algorithm 3 scores it on
    proc = run_cli("export", str(ws), "--out", str(tmp_path / "out"), check=False)
    assert proc.returncode == 1
    assert "qa-1 (figure 1): not a valid sample: Value error, numeric retrieval items need axis_min and axis_max" \
        in proc.stderr


def test_url_mode_keeps_the_original_url_and_lists_items_without_one(tmp_path: Path):
    ws = make_qa_ws(tmp_path)
    out = tmp_path / "out"
    proc = run_cli("export", str(ws), "--out", str(out), "--images", "url", check=False)
    assert proc.returncode == 1 and "qa-1 (figure 1): no image URL" in proc.stderr and "qa-2 (figure 2)" in proc.stderr
    with Workspace.open(ws) as w, w.db.write() as s:
        fig = s.get(FigureRow, 1)
        assert fig is not None
        fig.provenance = {**fig.provenance, "image_url": "https://example.org/fig1.png"}
        fig.page_url = "https://example.org/page.html"
        sha = fig.sha256
    doc = run_cli_json("export", str(ws), "--out", str(out), "--images", "url", "--skip-missing")
    assert doc["items"] == 1 and doc["skipped"] == 1 and doc["images_mode"] == "url"
    import pyarrow.parquet as pq

    rows = pq.read_table(out / doc["shards"][0]).to_pylist()
    assert [(r["id"], r["image_url"], r["image_sha256"], r["image"]) for r in rows] == \
        [("qa-1", "https://example.org/fig1.png", sha, None)]
    assert json.loads(rows[0]["meta_json"])["source"]["url"] == "https://example.org/page.html"
    assert "fetch them with `zuhyo images fetch`" in (out / "README.md").read_text(encoding="utf-8")


def test_out_folder_is_replaced_only_when_it_is_an_export(tmp_path: Path):
    ws = make_qa_ws(tmp_path)
    foreign = tmp_path / "notes"
    foreign.mkdir()
    (foreign / "keep.txt").write_text("mine", encoding="utf-8")
    proc = run_cli("export", str(ws), "--out", str(foreign), check=False)
    assert proc.returncode == 1 and "not an earlier zuhyo export" in proc.stderr
    assert (foreign / "keep.txt").read_text(encoding="utf-8") == "mine"
    out = tmp_path / "out"
    first = run_cli_json("export", str(ws), "--out", str(out), "--include-drafts")
    assert first["items"] == 3
    second = run_cli_json("export", str(ws), "--out", str(out))
    assert second["items"] == 2 and json.loads((out / "zuhyo_export.json").read_text())["items"] == 2
    from zuhyo.benchmarks.base import BenchmarkSource, load_benchmark

    assert len(load_benchmark("local", BenchmarkSource(path=out), strict=True).samples) == 2


def test_nothing_accepted_is_an_error_that_mentions_drafts(tmp_path: Path):
    ws = make_qa_ws(tmp_path, n_figures=1)
    with Workspace.open(ws) as w, w.db.write() as s:
        from sqlalchemy import update

        from zuhyo.construct.workspace.qa_tables import QAItemRow

        s.execute(update(QAItemRow).values(status="draft"))
    proc = run_cli("export", str(ws), "--out", str(tmp_path / "out"), check=False)
    assert proc.returncode == 1 and "no QA item to export" in proc.stderr and "--include-drafts" in proc.stderr


def test_push_to_hub_without_a_token_is_a_clear_error(tmp_path: Path):
    ws = make_qa_ws(tmp_path)
    env = {k: v for k, v in os.environ.items() if not k.startswith("HF_")}
    env.update(HF_HOME=str(tmp_path / "hf-home"), HF_HUB_OFFLINE="0")
    import subprocess
    import sys

    proc = subprocess.run([sys.executable, "-m", "zuhyo", "export", str(ws), "--out", str(tmp_path / "out"),
                           "--push-to-hub", "me/bench"], capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 1
    assert "--push-to-hub me/bench: no Hugging Face token (set HF_TOKEN" in proc.stderr
    bad = run_cli("export", str(ws), "--out", str(tmp_path / "out2"), "--push-to-hub", "bench", check=False,
                  env={"HF_TOKEN": "x"})
    assert bad.returncode == 1 and "give a repository as OWNER/NAME" in bad.stderr


class FakeHub:
    """A real local HTTP server answering the Hub API calls an upload makes (create repo, preupload, commit),
    standing in for the Hugging Face Hub through ``HF_ENDPOINT``; it keeps what was committed."""

    def __init__(self, token: str) -> None:
        import threading
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

        self.token, self.repos, self.commits, self.validated = token, [], [], []
        hub = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def _reply(self, code: int, doc: dict) -> None:
                body = json.dumps(doc).encode()
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_POST(self) -> None:  # noqa: N802 (http.server's name)
                data = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                if self.headers.get("Authorization") != f"Bearer {hub.token}":
                    return self._reply(401, {"error": "Invalid credentials in Authorization header"})
                if self.path == "/api/validate-yaml":  # the card's YAML header must parse, with its configs
                    import yaml

                    content = json.loads(data)["content"]
                    meta = yaml.safe_load(content.split("---\n")[1]) if content.startswith("---\n") else None
                    hub.validated.append(meta)
                    if not isinstance(meta, dict) or not meta.get("configs"):
                        return self._reply(400, {"errors": [{"message": "no configs in the YAML header"}]})
                    return self._reply(200, {"errors": [], "warnings": []})
                if self.path == "/api/repos/create":
                    req = json.loads(data)
                    if req.get("organization") == "denied":
                        return self._reply(403, {"error": "You don't have the rights to create a dataset under "
                                                          "the namespace \"denied\""})
                    hub.repos.append(req)
                    return self._reply(200, {"url": f"{hub.url}/datasets/{req['organization']}/{req['name']}"})
                if "/preupload/" in self.path:
                    files = json.loads(data)["files"]
                    return self._reply(200, {"files": [{"path": f["path"], "uploadMode": "regular",
                                                        "shouldIgnore": False} for f in files]})
                if "/commit/" in self.path:
                    import base64

                    lines = [json.loads(ln) for ln in data.decode().splitlines() if ln.strip()]
                    files = {ln["value"]["path"]: base64.b64decode(ln["value"]["content"])
                             for ln in lines if ln["key"] == "file"}
                    hub.commits.append({"path": self.path, "header": lines[0]["value"], "files": files})
                    repo = self.path.removeprefix("/api/").split("/commit/")[0]
                    return self._reply(200, {"commitUrl": f"{hub.url}/{repo}/commit/{'a' * 40}",
                                             "commitOid": "a" * 40})
                return self._reply(404, {"error": f"no route {self.path}"})

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def _hub_env(tmp_path: Path, hub: FakeHub, token: str | None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("HF_")}
    env.update(HF_HOME=str(tmp_path / "hf-home"), HF_ENDPOINT=hub.url, HF_HUB_OFFLINE="0", COLUMNS="200")
    if token is not None:
        env["MY_HF_TOKEN"] = token
    return env


def test_push_to_hub_uploads_card_shards_and_plots_to_a_local_hub(tmp_path: Path):
    import subprocess
    import sys

    ws = make_qa_ws(tmp_path)
    hub = FakeHub(token="hf_test")
    try:
        out = tmp_path / "out"
        args = [sys.executable, "-m", "zuhyo", "export", str(ws), "--out", str(out), "--token-env", "MY_HF_TOKEN",
                "--push-to-hub", "me/bench", "--json"]
        proc = subprocess.run(args, capture_output=True, text=True, env=_hub_env(tmp_path, hub, "hf_test"),
                              timeout=300)
        assert proc.returncode == 0, proc.stderr[-2000:]
        doc = json.loads(proc.stdout)
        assert doc["items"] == 2 and doc["pushed_to"].endswith("/datasets/me/bench")
        assert [(r["organization"], r["name"], r["type"]) for r in hub.repos] == [("me", "bench", "dataset")]
        (commit,) = hub.commits
        assert commit["path"] == "/api/datasets/me/bench/commit/main"
        assert commit["files"]["README.md"] == (out / "README.md").read_bytes()
        assert commit["files"]["test-00000-of-00001.parquet"] == (out / "test-00000-of-00001.parquet").read_bytes()
        assert "plots/image_types.png" in commit["files"] and "statistics/statistics.json" in commit["files"]
        assert not any(p.startswith("disk/") or p == "zuhyo_export.json" for p in commit["files"])  # local only
        (meta,) = hub.validated
        assert meta["license"] == "other" and meta["task_categories"] == ["visual-question-answering"]
        assert meta["configs"] == [{"config_name": "default", "data_files": [{"split": "test",
                                                                              "path": "test-*.parquet"}]}]

        # a wrong token and a refused namespace are one-line errors naming the repository
        bad = subprocess.run([*args[:-3], "--push-to-hub", "me/bench"], capture_output=True, text=True,
                             env=_hub_env(tmp_path, hub, "wrong"), timeout=300)
        assert bad.returncode == 1 and "--push-to-hub me/bench: the Hub refused the upload" in bad.stderr
        denied = subprocess.run([*args[:-3], "--push-to-hub", "denied/bench"], capture_output=True, text=True,
                                env=_hub_env(tmp_path, hub, "hf_test"), timeout=300)
        assert denied.returncode == 1 and "--push-to-hub denied/bench: the Hub refused the upload" in denied.stderr
        assert len(hub.commits) == 1
    finally:
        hub.close()
