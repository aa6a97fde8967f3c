"""Hostile or clumsy datasets (issue 8, items 4, 5, 7): image paths that leave the dataset's folder, special
files as images, and a decompression bomb in the report — with real files, a real FIFO, ``/dev/zero``, the real
CLI and the real OpenAI-compatible test server."""

from __future__ import annotations

import base64
import json
import os
import re
import resource
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import run_cli, run_cli_json
from test_images_fetch import bomb_png

from zuhyo.benchmarks.base import BenchmarkSource, load_benchmark
from zuhyo.errors import DataError, ImageError
from zuhyo.report.html import thumbnail_uri
from zuhyo.schema import ImageRef, Sample

CHART = Path(__file__).resolve().parent / "fixtures" / "chartqa" / "test" / "png" / "late_night_viewers.png"
OTHER_CHART = CHART.with_name("energy_mix.png")


IDS = ("ok", "inner", "abs", "dotdot", "link")


def _question(sid: str) -> str:
    return f"Question {sid}: what is shown?"


def _row(sid: str, path: str) -> str:
    return json.dumps({"id": sid, "benchmark": "safety", "question": _question(sid), "answers": ["42"],
                       "image": {"path": path}})


def _key(answer: str) -> dict[str, str]:
    """An answer key naming every question, so the server counts which ones it was asked."""
    return {_question(sid): answer for sid in (*IDS, "fifo", "zero", "bomb")}


@pytest.fixture
def layout(tmp_path: Path) -> dict[str, Path]:
    """ds/ (the dataset: bench.jsonl, img/) and outside/secret.png, plus the rows pointing everywhere."""
    ds, outside = tmp_path / "ds", tmp_path / "outside"
    (ds / "img").mkdir(parents=True)
    outside.mkdir()
    (ds / "img" / "a.png").write_bytes(CHART.read_bytes())
    secret = outside / "secret.png"
    secret.write_bytes(OTHER_CHART.read_bytes())
    (ds / "img" / "inner.png").symlink_to(ds / "img" / "a.png")  # a link that stays inside: fine
    (ds / "img" / "link.png").symlink_to(secret)  # a link out of the folder
    rows = [_row("ok", "img/a.png"), _row("inner", "img/inner.png"), _row("abs", str(secret)),
            _row("dotdot", "../outside/secret.png"), _row("link", "img/link.png")]
    (ds / "bench.jsonl").write_text("\n".join(rows) + "\n", encoding="utf-8")
    return {"ds": ds, "bench": ds / "bench.jsonl", "outside": outside, "secret": secret}


def test_paths_are_confined_to_the_dataset_folder(layout: dict[str, Path]) -> None:
    result = load_benchmark("local", BenchmarkSource(path=layout["bench"]))
    assert sorted(s.id for s in result.samples) == ["inner", "ok"]
    errors = {e.row: e.message for e in result.errors}
    assert sorted(errors) == ["abs", "dotdot", "link"]
    assert "absolute path outside" in errors["abs"]
    assert "escapes" in errors["dotdot"]
    assert "symlink leads out" in errors["link"] and str(layout["secret"]) in errors["link"]
    assert all("--allow-outside-paths" in m for m in errors.values())
    with pytest.raises(DataError, match="abs"):
        load_benchmark("local", BenchmarkSource(path=layout["bench"]), strict=True)

    everything = load_benchmark("local", BenchmarkSource(path=layout["bench"], allow_outside_paths=True))
    assert len(everything.samples) == 5 and everything.errors == []
    rooted = load_benchmark("local", BenchmarkSource(path=layout["bench"], images_root=layout["outside"]))
    assert len(rooted.samples) == 5 and rooted.errors == []


def _eval(bench: Path, url: str, out: Path, *extra: str) -> dict:
    return run_cli_json("eval", "--bench", "local", "--path", str(bench), "--model", f"openai:fake@{url}",
                        "--out", str(out), "--prompt", "direct", "--runs", "1", "--judge", "rules", "--quiet",
                        "--retries", "0", *extra)


def test_eval_never_sends_an_outside_image(layout: dict[str, Path], fake_server, tmp_path: Path) -> None:
    server = fake_server(answers=_key("42"))
    summary = _eval(layout["bench"], server.base_url, tmp_path / "run")
    assert sorted(q.split(":")[0] for q in server.state.seen_questions) == ["Question inner", "Question ok"]
    assert summary["load_errors"]["count"] == 3
    assert all("--allow-outside-paths" in e for e in summary["load_errors"]["examples"])
    manifest = json.loads((tmp_path / "run" / "run.json").read_text())
    assert manifest["benchmarks"][0]["allow_outside_paths"] is False

    allowed = fake_server(answers=_key("42"))
    _eval(layout["bench"], allowed.base_url, tmp_path / "run2", "--allow-outside-paths")
    assert len(allowed.state.seen_questions) == 5
    manifest = json.loads((tmp_path / "run2" / "run.json").read_text())
    assert manifest["benchmarks"][0]["allow_outside_paths"] is True


def test_bench_export_copies_nothing_from_outside(layout: dict[str, Path], tmp_path: Path) -> None:
    with layout["bench"].open("a", encoding="utf-8") as f:
        f.write(_row("passwd", "/etc/passwd") + "\n")
    out = tmp_path / "export" / "x.jsonl"
    doc = run_cli_json("bench", "export", "local", "--path", str(layout["bench"]), "--out", str(out))
    assert doc["samples"] == 2 and doc["errors"] == 4
    assert any("passwd" in e and "absolute path outside" in e for e in doc["error_examples"])
    copied = list((tmp_path / "export" / "x_images").iterdir())
    assert len(copied) == 1 and copied[0].read_bytes() == CHART.read_bytes()
    exported = [json.loads(line) for line in out.read_text().splitlines()]
    assert {r["id"] for r in exported} == {"ok", "inner"}


def test_report_thumbnails_do_not_embed_outside_files(layout: dict[str, Path], fake_server, tmp_path: Path) -> None:
    server = fake_server(answers=_key("wrong"))  # every item fails, so every item gets a thumbnail
    run = tmp_path / "run"
    _eval(layout["bench"], server.base_url, run)
    # After the run, the dataset's image becomes a link out of the folder: the report must not follow it.
    (layout["ds"] / "img" / "a.png").unlink()
    (layout["ds"] / "img" / "a.png").symlink_to(layout["secret"])
    html = _report(run, tmp_path / "report")
    assert "data:image/jpeg" not in html
    assert "symlink leads out" in html  # named among the report's load problems


def _report(run: Path, out: Path) -> str:
    run_cli_json("report", str(run), "--out", str(out), "--no-plots", "--bootstrap", "100")
    return (out / "index.html").read_text(encoding="utf-8")


# -- special files (item 5) -----------------------------------------------------------------------------------


def test_read_regular_file_refuses_special_files_and_caps_size(tmp_path: Path) -> None:
    from zuhyo.images.localfile import read_regular_file  # new in this change: imported here, not at the top

    fifo = tmp_path / "pipe.png"
    os.mkfifo(fifo)
    t0 = time.monotonic()
    with pytest.raises(ImageError, match="not a regular file \\(a FIFO\\)"):
        read_regular_file(fifo)
    assert time.monotonic() - t0 < 2
    with pytest.raises(ImageError, match="not a regular file \\(a character device\\)"):
        read_regular_file(Path("/dev/zero"))
    with pytest.raises(ImageError, match="not a regular file \\(a directory\\)"):
        read_regular_file(tmp_path)
    big = tmp_path / "big.png"
    big.write_bytes(b"\x89PNG" + b"\0" * 2000)
    with pytest.raises(ImageError, match="2,004 bytes, over the 1,000-byte limit"):
        read_regular_file(big, max_bytes=1000)
    link = tmp_path / "link.png"
    link.symlink_to(big)
    assert read_regular_file(link) == big.read_bytes()


def _limit_memory() -> None:  # runs in the child: today's code would read /dev/zero until this stops it
    resource.setrlimit(resource.RLIMIT_AS, (3 * 1024 ** 3, 3 * 1024 ** 3))


def _eval_limited(bench: Path, url: str, out: Path, *extra: str) -> tuple[dict, dict[str, dict]]:
    """`zuhyo eval` in a child with 3 GB of address space and a 60 s deadline; (summary, records by sample id)."""
    args = ["eval", "--bench", "local", "--path", str(bench), "--model", f"openai:fake@{url}", "--out", str(out),
            "--prompt", "direct", "--runs", "1", "--judge", "rules", "--quiet", "--retries", "0", "--timeout", "5",
            "--json", *extra]
    proc = subprocess.run([sys.executable, "-m", "zuhyo", *args], capture_output=True, text=True, timeout=60,
                          preexec_fn=_limit_memory)  # noqa: PLW1509 - the parent starts no threads meanwhile
    assert proc.returncode == 0, proc.stderr[-2000:]
    records = {r["sample_id"]: r for r in map(json.loads, (out / "predictions.jsonl").read_text().splitlines())}
    return json.loads(proc.stdout.strip().splitlines()[-1]), records


def test_eval_with_fifo_and_dev_zero_images_records_per_item_errors(layout: dict[str, Path], fake_server,
                                                                      tmp_path: Path) -> None:
    os.mkfifo(layout["ds"] / "img" / "pipe.png")
    rows = [_row("ok", "img/a.png"), _row("fifo", "img/pipe.png"), _row("zero", "/dev/zero")]
    layout["bench"].write_text("\n".join(rows) + "\n", encoding="utf-8")
    info = run_cli_json("bench", "info", "local", "--path", str(layout["bench"]))
    assert info["images_missing"] == 1 and "not a regular file: " in info["missing_image_examples"][0]
    server = fake_server(answers=_key("42"))
    # A FIFO inside the folder passes the path check and is refused when read (today: the run hangs on it).
    summary, records = _eval_limited(layout["bench"], server.base_url, tmp_path / "run")
    assert summary["inference"]["ok"] == 1 and summary["inference"]["errors"] == 1
    assert summary["load_errors"]["count"] == 1  # /dev/zero: an absolute path outside the folder
    assert records["ok"]["status"] == "ok" and "zero" not in records
    assert records["fifo"]["status"] == "error" and records["fifo"]["outcome"] == "image"
    assert "not a regular file (a FIFO)" in records["fifo"]["error"]
    # Allowed outside the folder, /dev/zero is read as a device: refused, not read until memory runs out.
    summary, records = _eval_limited(layout["bench"], server.base_url, tmp_path / "run2", "--allow-outside-paths")
    assert summary["inference"]["ok"] == 1 and summary["inference"]["errors"] == 2
    assert records["zero"]["status"] == "error" and records["zero"]["outcome"] == "image"
    assert "not a regular file (a character device)" in records["zero"]["error"]


# -- report on a decompression bomb (item 7) ------------------------------------------------------------------


def _placeholder_text(uri: str) -> str:
    assert uri.startswith("data:image/svg+xml;base64,")
    return base64.b64decode(uri.split(",", 1)[1]).decode("utf-8")


def test_thumbnail_placeholders_say_why(tmp_path: Path) -> None:
    sample = Sample(id="b", benchmark="x", question="q", answers=["a"], image=ImageRef(data=bomb_png()))
    svg = _placeholder_text(thumbnail_uri(sample, None) or "")
    assert "image not shown" in svg and "DecompressionBombError" in svg
    garbage = Sample(id="g", benchmark="x", question="q", answers=["a"], image=ImageRef(path="g.png"))
    (tmp_path / "g.png").write_bytes(b"<html>not an image</html>")
    assert "UnidentifiedImageError" in _placeholder_text(thumbnail_uri(garbage, tmp_path) or "")
    os.mkfifo(tmp_path / "f.png")
    fifo = Sample(id="f", benchmark="x", question="q", answers=["a"], image=ImageRef(path="f.png"))
    assert "a FIFO" in _placeholder_text(thumbnail_uri(fifo, tmp_path) or "")
    ok = Sample(id="o", benchmark="x", question="q", answers=["a"], image=ImageRef(path=str(CHART)))
    assert (thumbnail_uri(ok, None) or "").startswith("data:image/jpeg;base64,")
    assert thumbnail_uri(Sample(id="u", benchmark="x", question="q", answers=["a"],
                                image=ImageRef(url="https://example.org/x.png")), None) is None


def test_report_on_a_bomb_image_shows_a_placeholder(layout: dict[str, Path], fake_server, tmp_path: Path) -> None:
    (layout["ds"] / "img" / "bomb.png").write_bytes(bomb_png())
    layout["bench"].write_text(_row("ok", "img/a.png") + "\n" + _row("bomb", "img/bomb.png") + "\n",
                               encoding="utf-8")
    server = fake_server(answers=_key("wrong"))
    run = tmp_path / "run"
    summary = _eval(layout["bench"], server.base_url, run)
    assert summary["inference"]["errors"] == 1  # the bomb is refused before decoding, as an image error
    html = _report(run, tmp_path / "report")
    uris = re.findall(r'"(data:image/[^"]+)"', html)  # thumbnails: in the page's failed-items JSON, once each
    placeholders = [_placeholder_text(u) for u in uris if u.startswith("data:image/svg")]
    assert len([u for u in uris if u.startswith("data:image/jpeg")]) == 1
    assert len(placeholders) == 1 and "DecompressionBombError" in placeholders[0]
    assert run_cli("report", str(run), "--out", str(tmp_path / "r2"), "--no-plots").returncode == 0
