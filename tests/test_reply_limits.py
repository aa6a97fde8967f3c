"""Bounded model replies (issue 8, item 2): a real local server sends 50 MB replies, with and without
Content-Length; the client stops reading at ``max_reply_bytes`` and records an error naming the size, and a long
reply within the limit is stored cut to ``max_response_chars`` with a marker, counted as ``truncated``."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import run_cli
from PIL import Image, ImageDraw

MB = 1_000_000
QUESTIONS = [f"What is the value of bar {c}?" for c in "ABC"]


@pytest.fixture
def bench(tmp_path: Path) -> Path:
    """Three questions on one real PNG chart."""
    img = Image.new("RGB", (320, 200), "white")
    draw = ImageDraw.Draw(img)
    for i, h in enumerate((60, 120, 90)):
        draw.rectangle((40 + 90 * i, 180 - h, 100 + 90 * i, 180), fill=("#36c", "#c63", "#3a6")[i])
    img.save(tmp_path / "chart.png")
    rows = [{"id": f"q{i}", "benchmark": "bars", "question": q, "answers": ["42"], "image": {"path": "chart.png"}}
            for i, q in enumerate(QUESTIONS)]
    path = tmp_path / "bars.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _eval(bench: Path, url: str, out: Path, *extra: str) -> tuple[dict, list[dict], int]:
    """Run `zuhyo eval` in a child that reports its own peak RSS; (summary, prediction records, peak RSS bytes)."""
    # VmHWM is this process's own peak (ru_maxrss would carry over the parent's peak across exec).
    wrapper = ("import runpy, sys\n"
               "sys.argv = ['zuhyo', *sys.argv[1:]]\n"
               "try:\n    runpy.run_module('zuhyo', run_name='__main__')\n"
               "except SystemExit as e:\n    code = e.code\nelse:\n    code = 0\n"
               "hwm = [ln for ln in open('/proc/self/status') if ln.startswith('VmHWM:')][0]\n"
               "print('PEAK_RSS_KB', hwm.split()[1], file=sys.stderr)\n"
               "sys.exit(code)\n")
    args = ["eval", "--bench", "local", "--path", str(bench), "--model", f"openai:fake@{url}", "--out", str(out),
            "--prompt", "direct", "--runs", "1", "--judge", "rules", "--quiet", "--retries", "1",
            "--retry-base", "0.01", "--json", *extra]
    proc = subprocess.run([sys.executable, "-c", wrapper, *args], capture_output=True, text=True, timeout=300)
    assert proc.returncode in (0, 1), proc.stderr[-3000:]
    peak = int(proc.stderr.rsplit("PEAK_RSS_KB", 1)[1].split()[0]) * 1024
    records = [json.loads(line) for line in (out / "predictions.jsonl").read_text().splitlines()]
    return json.loads(proc.stdout.strip().splitlines()[-1]), records, peak


@pytest.mark.parametrize("chunked", [False, True], ids=["content-length", "chunked"])
def test_a_50_mb_reply_is_an_error_naming_its_size(bench: Path, fake_server, tmp_path: Path, chunked: bool) -> None:
    server = fake_server(answers=dict.fromkeys(QUESTIONS, "42"), reply_bytes=50 * MB, reply_chunked=chunked)
    summary, records, peak = _eval(bench, server.base_url, tmp_path / "run")
    assert summary["inference"]["errors"] == 3 and summary["inference"]["ok"] == 0
    assert server.state.requests == 3  # permanent: no retry fetches the same 50 MB again
    for r in records:
        assert r["status"] == "error" and r["response"] is None
        assert "too long" in r["error"] and "max_reply_bytes=8,388,608" in r["error"]
        if chunked:
            assert "more than 8,388,608 bytes, no Content-Length" in r["error"]
        else:
            assert re.search(r"Content-Length 50,000,\d{3} bytes", r["error"])  # 50 MB of text and its JSON
    assert (tmp_path / "run" / "predictions.jsonl").stat().st_size < 20_000
    # Nothing near a 50 MB reply is held at once (today: body + decoded JSON + record, several hundred MB).
    print(f"peak RSS {peak / 2**20:.0f} MiB")
    assert peak < 400 * 1024 * 1024, f"peak RSS {peak / 2**20:.0f} MiB"


def test_long_replies_within_the_limit_are_stored_cut_with_a_marker(bench: Path, fake_server,
                                                                     tmp_path: Path) -> None:
    server = fake_server(answers=dict.fromkeys(QUESTIONS, "42"), reply_bytes=1 * MB)
    summary, records, _ = _eval(bench, server.base_url, tmp_path / "run")
    assert summary["inference"]["ok"] == 3 and summary["inference"]["outcomes"] == {"truncated": 3}
    for r in records:
        assert r["status"] == "ok" and r["outcome"] == "truncated" and r["finish_reason"] == "length"
        assert r["response"].startswith("42 xxx")
        assert r["response"].endswith("[zuhyo: reply truncated to 200,000 of 1,000,000 characters "
                                      "(max_response_chars); finish_reason was stop]")
        assert len(r["response"]) < 200_200
    # each record holds the response and the answer read from it (for Direct, the same text)
    assert (tmp_path / "run" / "predictions.jsonl").stat().st_size < 3 * 2 * 210_000


def test_limits_are_model_options(bench: Path, fake_server, tmp_path: Path) -> None:
    server = fake_server(answers=dict.fromkeys(QUESTIONS, "42"), reply_bytes=1 * MB, reply_chunked=True)
    summary, records, _ = _eval(bench, server.base_url, tmp_path / "small", "--model-option",
                                "max_reply_bytes=500000")
    assert summary["inference"]["errors"] == 3
    assert all("more than 500,000 bytes" in r["error"] for r in records)
    summary, records, _ = _eval(bench, server.base_url, tmp_path / "big", "--model-option", "max_reply_bytes=2000000",
                                "--model-option", "max_response_chars=1000")
    assert summary["inference"]["ok"] == 3
    assert all(r["response"].startswith("42 x") and "truncated to 1,000 of 1,000,000" in r["response"]
               for r in records)
    proc = run_cli("eval", "--bench", "local", "--path", str(bench), "--model", f"openai:fake@{server.base_url}",
                   "--out", str(tmp_path / "bad"), "--model-option", "max_reply_bytes=lots", check=False)
    assert proc.returncode != 0 and "openai backend option max_reply_bytes='lots' is not an integer" in proc.stderr
