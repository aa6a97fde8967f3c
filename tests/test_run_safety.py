"""Run safety (issue 8): one writer per run set, disk full, honest exit codes, empty inputs, store read errors.

Real `zuhyo` processes against the real local fake server; disk full on a real tmpfs where this machine lets us
mount one (root), and by an injected ENOSPC in-process everywhere.
"""

from __future__ import annotations

import errno
import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest
from conftest import run_cli

from zuhyo.evaluate.records import PredictionRecord
from zuhyo.evaluate.store import read_records

ZUHYO = [sys.executable, "-m", "zuhyo"]
N_JA = 44  # samples in the bundled sample-ja benchmark


def _eval_cmd(url: str, out: Path, *extra: str, bench: str = "sample-ja") -> list[str]:
    return ["eval", "--bench", bench, "--model", f"openai:fake@{url}", "--out", str(out), "--runs", "1",
            "--prompt", "direct", "--judge", "none", "--quiet", *extra]


def _start(args: list[str]) -> subprocess.Popen[str]:
    env = {**os.environ, "COLUMNS": "200"}
    return subprocess.Popen([*ZUHYO, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)


def _wait_for(cond, timeout: float = 30.0) -> None:  # type: ignore[no-untyped-def]
    end = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > end:
            raise AssertionError("condition not reached in time")
        time.sleep(0.05)


def _lines(path: Path) -> list[dict]:
    return [json.loads(x) for x in path.read_text().splitlines() if x.strip()]


def _keys(out: Path) -> Counter:
    return Counter((r["benchmark"], r["sample_id"], r["prompt"], r["run_index"], r["status"])
                   for r in _lines(out / "predictions.jsonl"))


def _holding(out: Path) -> bool:
    lock = out / ".zuhyo.lock"
    return lock.exists() and lock.stat().st_size > 0 and (out / "predictions.jsonl").exists()


# -- one writer per run set --------------------------------------------------------------------------------------


@pytest.mark.timeout(120)
def test_second_eval_and_score_on_a_busy_run_set_are_refused_and_nothing_is_duplicated(tmp_path, fake_server):
    server = fake_server(latency_s=0.15)
    out = tmp_path / "run"
    first = _start(_eval_cmd(server.base_url, out, "--concurrency", "2"))
    _wait_for(lambda: _holding(out))
    second = run_cli(*_eval_cmd(server.base_url, out, "--concurrency", "2"), check=False, timeout=60)
    score = run_cli("score", str(out), "--judge", "rules", check=False, timeout=60)
    assert first.poll() is None, "the first run should still be running while the others are refused"
    for proc in (second, score):
        assert proc.returncode == 1
        (line,) = [ln for ln in proc.stderr.splitlines() if ln.strip()]
        assert line.startswith(f"error: run set {out} is in use by pid {first.pid} (zuhyo eval --bench sample-ja")
        assert ", started 20" in line and "Traceback" not in proc.stderr
    _, err = first.communicate(timeout=90)
    assert first.returncode == 0, err
    keys = _keys(out)
    assert len(keys) == N_JA and max(keys.values()) == 1  # every item once, all ok
    assert server.state.requests == N_JA


@pytest.mark.timeout(120)
def test_two_benchmarks_on_one_run_set_both_stay_in_the_manifest(tmp_path, fake_server):
    server = fake_server(latency_s=0.1)
    out = tmp_path / "run"
    ja = _start(_eval_cmd(server.base_url, out, "--concurrency", "2"))
    _wait_for(lambda: _holding(out))
    astro = run_cli(*_eval_cmd(server.base_url, out, bench="sample-astro"), check=False, timeout=60)
    assert astro.returncode == 1 and "is in use by pid" in astro.stderr
    assert ja.wait(timeout=90) == 0
    assert [b["name"] for b in json.loads((out / "run.json").read_text())["benchmarks"]] == ["sample-ja"]
    run_cli(*_eval_cmd(server.base_url, out, bench="sample-astro"), timeout=120)  # now it may: sequentially
    manifest = json.loads((out / "run.json").read_text())
    assert sorted(b["name"] for b in manifest["benchmarks"]) == ["sample-astro", "sample-ja"]
    assert not list(out.glob("*.tmp")) and not list(out.glob(".*.tmp"))
    summary = json.loads(run_cli("score", str(out), "--judge", "rules", "--json", timeout=120).stdout)
    assert {e["benchmark"] for e in summary["entries"]} == {"sample-ja", "sample-astro"}
    assert all(e["n_scored"] + e["n_unscored"] > 0 for e in summary["entries"])


@pytest.mark.timeout(120)
def test_lock_of_a_killed_process_is_recovered(tmp_path, fake_server):
    server = fake_server()
    out = tmp_path / "run"
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sys, time; from pathlib import Path; "
         "from zuhyo.evaluate.runlock import RunSetLock; "
         "RunSetLock(Path(sys.argv[1]), 'zuhyo eval --holder').acquire(); "
         "print('locked', flush=True); time.sleep(120)", str(out)],
        stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
        refused = run_cli(*_eval_cmd(server.base_url, out, "--limit", "2"), check=False, timeout=60)
        assert refused.returncode == 1
        assert f"in use by pid {holder.pid} (zuhyo eval --holder), started " in refused.stderr
    finally:
        holder.send_signal(signal.SIGKILL)
        holder.wait()
    # The kernel dropped the dead holder's flock; its pid is still written in the file, and does not matter.
    assert str(holder.pid) in (out / ".zuhyo.lock").read_text()
    run_cli(*_eval_cmd(server.base_url, out, "--limit", "2"), timeout=60)
    assert len(_keys(out)) == 2


# -- disk full ---------------------------------------------------------------------------------------------------


@pytest.fixture
def tiny_tmpfs(tmp_path):
    """A real 256 KiB tmpfs (root only); skipped where mounting is not allowed (the injected test still runs)."""
    mnt = tmp_path / "tmpfs"
    mnt.mkdir()
    proc = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", str(mnt)], capture_output=True)
    if proc.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {proc.stderr.decode().strip()}")
    yield mnt
    subprocess.run(["umount", "-l", str(mnt)], check=False)


@pytest.mark.timeout(180)
def test_disk_full_on_a_real_tmpfs_stops_the_run_cleanly_and_resume_completes(tiny_tmpfs, fake_server):
    server = fake_server(default_answer="x" * 3000)  # ~3.3 KB per record: 264 records need ~870 KB
    out = tiny_tmpfs / "run"
    args = ["eval", "--bench", "sample-ja", "--model", f"openai:fake@{server.base_url}", "--out", str(out),
            "--runs", "3", "--prompt", "both", "--judge", "none", "--quiet", "--concurrency", "8"]
    t0 = time.monotonic()
    full = run_cli(*args, check=False, timeout=60)  # the old code hung here (producer waiting on dead workers)
    assert time.monotonic() - t0 < 30
    assert full.returncode == 1
    assert full.stderr.strip().splitlines()[-1] == f"error: no space left on device writing {out}/predictions.jsonl"
    assert "Traceback" not in full.stderr and "never retrieved" not in full.stderr
    data = (out / "predictions.jsonl").read_bytes()
    assert data.endswith(b"\n")  # cut back to its last complete record
    written = [PredictionRecord.model_validate_json(x) for x in data.splitlines()]
    assert 0 < len(written) < 264
    # Space freed: the same command completes, and each request appears once.
    subprocess.run(["mount", "-o", "remount,size=8m", str(tiny_tmpfs)], check=True)
    served = server.state.requests
    run_cli(*args, timeout=120)
    keys = _keys(out)
    assert len(keys) == 264 and max(keys.values()) == 1
    assert server.state.requests - served == 264 - len(written)  # nothing written was asked for again
    # `zuhyo score` on a full disk: the same one-line error, no traceback.
    with (tiny_tmpfs / "filler").open("wb", buffering=0) as f:
        with pytest.raises(OSError) as filled:
            while True:
                f.write(b"\0" * 65536)
        assert filled.value.errno == errno.ENOSPC
    score = run_cli("score", str(out), "--judge", "rules", check=False, timeout=60)
    assert score.returncode == 1 and "Traceback" not in score.stderr
    last = score.stderr.strip().splitlines()[-1]
    assert last.startswith("error: no space left on device writing ") and str(out) in last


@pytest.mark.timeout(60)
def test_injected_enospc_stops_the_run_promptly_and_resume_completes(tmp_path, fake_server, monkeypatch):
    from zuhyo.errors import ZuhyoError
    from zuhyo.evaluate.config import BenchmarkSpec, EvalConfig
    from zuhyo.evaluate.session import run_eval

    server = fake_server(latency_s=0.01)
    out = tmp_path / "run"
    config = EvalConfig(benchmarks=(BenchmarkSpec("sample-ja"),), models=(f"openai:fake@{server.base_url}",),
                        out=out, prompts=("direct", "cot"), runs=3, concurrency=8, judge=None)
    real_write = os.write
    calls = Counter()

    def full_disk_after_5_writes(fd: int, data: bytes) -> int:
        if os.readlink(f"/proc/self/fd/{fd}").endswith("predictions.jsonl"):
            calls["n"] += 1
            if calls["n"] > 5:
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real_write(fd, data)

    monkeypatch.setattr(os, "write", full_disk_after_5_writes)
    t0 = time.monotonic()
    with pytest.raises(ZuhyoError) as info:
        run_eval(config)
    assert time.monotonic() - t0 < 20
    assert str(info.value) == f"no space left on device writing {out}/predictions.jsonl"
    monkeypatch.setattr(os, "write", real_write)
    before = [r for _, r, err in read_records(out / "predictions.jsonl", PredictionRecord) if r and not err]
    assert 0 < len(before) < N_JA * 6
    summary = run_eval(config)
    assert summary["inference"]["skipped_done"] == len(before)
    assert summary["inference"]["ok"] == N_JA * 6 - len(before)
    keys = _keys(out)
    assert len(keys) == N_JA * 6 and max(keys.values()) == 1


# -- exit codes and empty inputs ---------------------------------------------------------------------------------


def _closed_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_every_request_failing_exits_non_zero_with_one_line(tmp_path):
    url = f"http://127.0.0.1:{_closed_port()}/v1"
    proc = run_cli(*_eval_cmd(url, tmp_path / "run", "--limit", "3", "--retries", "0"), check=False, timeout=60)
    assert proc.returncode == 1
    errors = [ln for ln in proc.stderr.splitlines() if ln.startswith("error:")]
    assert len(errors) == 1 and errors[0].startswith("error: all 3 requests failed; first: sample-ja/")
    assert json.loads((tmp_path / "run" / "summary.json").read_text())["inference"]["errors"] == 3


def test_some_failed_requests_exit_zero_and_say_how_many(tmp_path, fake_server):
    from PIL import Image

    Image.new("RGB", (40, 30), "white").save(tmp_path / "a.png")
    rows = [{"id": f"s{i}", "benchmark": "mini", "question": f"Q{i}?", "answers": ["1"],
             "image": {"path": "a.png" if i < 3 else "gone.png"}} for i in range(5)]
    (tmp_path / "mini.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    server = fake_server()
    proc = run_cli("eval", "--bench", "local", "--path", str(tmp_path / "mini.jsonl"), "--model",
                   f"openai:fake@{server.base_url}", "--out", str(tmp_path / "run"), "--runs", "1", "--prompt",
                   "direct", "--judge", "none", "--quiet", timeout=60)
    assert proc.returncode == 0
    assert "warning: 2 of 5 requests failed" in proc.stderr


def test_openai_model_without_url_names_its_endpoint_first(tmp_path):
    # An empty benchmark stops the run before any request: the note must already be out.
    (tmp_path / "empty.jsonl").write_text("")
    proc = run_cli("eval", "--bench", "local", "--path", str(tmp_path / "empty.jsonl"), "--model", "openai:gpt-x",
                   "--out", str(tmp_path / "run"), "--quiet", check=False, timeout=60)
    lines = proc.stderr.strip().splitlines()
    assert lines[0] == "note: --model openai:gpt-x names no @<base_url>; its requests go to https://api.openai.com/v1"
    assert proc.returncode == 1


@pytest.mark.parametrize("content", ["", '{"id": "a", "question": 3}\n{"nope": 1}\n'], ids=["empty", "all-invalid"])
def test_empty_or_all_invalid_benchmark_is_a_one_line_error(tmp_path, content, fake_server):
    bench = tmp_path / "b.jsonl"
    bench.write_text(content)
    server = fake_server()
    proc = run_cli("eval", "--bench", "local", "--path", str(bench), "--model", f"openai:fake@{server.base_url}",
                   "--out", str(tmp_path / "run"), "--quiet", check=False, timeout=60)
    assert proc.returncode == 1
    (line,) = [ln for ln in proc.stderr.splitlines() if ln.strip()]
    why = "the source is empty" if not content else "all 2 rows are invalid; first: b.jsonl"
    assert line.startswith(f"error: benchmark 'local' has no samples ({why}")
    assert server.state.requests == 0 and not (tmp_path / "run").exists()
    stats = run_cli("analyze", "stats", "local", "--path", str(bench), check=False, timeout=60)
    assert stats.returncode == 1 and "Traceback" not in stats.stderr
    assert stats.stderr.strip().splitlines() == [line]


def test_export_inspect_and_score_on_a_missing_folder_fail_and_create_nothing(tmp_path):
    missing = tmp_path / "nope"
    for args in (("export-inspect", str(missing)), ("score", str(missing))):
        proc = run_cli(*args, check=False, timeout=60)
        assert proc.returncode == 1, args
        (line,) = [ln for ln in proc.stderr.splitlines() if ln.strip()]
        assert line.startswith(f"error: {missing}")
        assert not missing.exists()


# -- the run store -----------------------------------------------------------------------------------------------


def test_store_read_errors_are_said_once_and_on_stderr(tmp_path, fake_server):
    server = fake_server()
    out = tmp_path / "run"
    run_cli(*_eval_cmd(server.base_url, out, "--limit", "3"), timeout=60)
    with (out / "predictions.jsonl").open("a") as f:
        f.write('{"benchmark": "sample-ja", "broken": true}\n')
    for args in (("score", str(out), "--judge", "rules"), ("score", str(out), "--judge", "rules"),
                 tuple(_eval_cmd(server.base_url, out, "--limit", "3", "--judge", "rules"))):
        proc = run_cli(*args, timeout=60)
        summary = json.loads((out / "summary.json").read_text())
        assert summary["store_read_errors"]["count"] == 1, args
        assert summary["store_read_errors"]["examples"] == [summary["store_read_errors"]["examples"][0]]
        assert summary["store_read_errors"]["examples"][0].startswith("predictions.jsonl line 4: ")
        warn = [ln for ln in proc.stderr.splitlines() if "unreadable" in ln]
        assert warn == [f"warning: 1 unreadable lines in the run store were skipped; first: "
                        f"{summary['store_read_errors']['examples'][0]}"]


def test_reading_the_store_streams_it(tmp_path):
    """A 24 MB log is read with a few hundred KB of memory (the whole-file read needed 24 MB and more)."""
    import tracemalloc

    path = tmp_path / "predictions.jsonl"
    rec = PredictionRecord(benchmark="b", sample_id="0", model="m", prompt="direct", run_index=0, status="ok",
                           response="y" * 1000)
    line = rec.model_dump_json().encode() + b"\n"
    with path.open("wb") as f:
        f.write(line * 20_000)
    assert path.stat().st_size > 20_000_000
    tracemalloc.start()
    n = sum(1 for _, r, _ in read_records(path, PredictionRecord) if r is not None)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert n == 20_000
    assert peak < 2_000_000, peak


@pytest.mark.timeout(60)
def test_any_worker_failure_stops_the_run_at_once(tmp_path):
    """A failure that is not a model error (a bug, say) stops every worker and the producer, and is raised."""
    import asyncio

    from zuhyo.evaluate.config import BenchmarkSpec, EvalConfig
    from zuhyo.evaluate.runner import InferenceRunner
    from zuhyo.evaluate.session import load_benchmarks
    from zuhyo.evaluate.store import RunStore
    from zuhyo.testing.scripted import ScriptedBackend

    backend = ScriptedBackend("1", "2", RuntimeError("bug in a backend"), *["3"] * 100)
    config = EvalConfig(benchmarks=(BenchmarkSpec("sample-ja"),), models=(backend.spec,), out=tmp_path,
                        prompts=("direct",), runs=1, concurrency=2, judge=None)
    benches, _ = load_benchmarks(config.benchmarks)
    runner = InferenceRunner(config, RunStore(tmp_path), [backend])  # type: ignore[list-item]
    with pytest.raises(RuntimeError, match="bug in a backend"):
        asyncio.run(runner.run(benches))
    # The old runner let the other worker carry on through all 44 items after one died.
    assert len(backend.requests) <= 4
    assert len(_lines(tmp_path / "predictions.jsonl")) <= 3


@pytest.mark.timeout(60)
def test_injected_enospc_while_scoring_is_a_clear_error(tmp_path, fake_server, monkeypatch):
    from zuhyo.errors import ZuhyoError
    from zuhyo.evaluate.config import BenchmarkSpec, EvalConfig
    from zuhyo.evaluate.session import rescore, run_eval

    server = fake_server()
    out = tmp_path / "run"
    run_eval(EvalConfig(benchmarks=(BenchmarkSpec("sample-ja"),), models=(f"openai:fake@{server.base_url}",),
                        out=out, prompts=("direct",), runs=1, judge=None))
    real_write = os.write

    def full_disk(fd: int, data: bytes) -> int:
        if os.readlink(f"/proc/self/fd/{fd}").endswith(("judgments.jsonl", "judge_cache.jsonl")):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real_write(fd, data)

    monkeypatch.setattr(os, "write", full_disk)
    with pytest.raises(ZuhyoError, match=r"^no space left on device writing .*/run/(judgments|judge_cache)\.jsonl$"):
        rescore(out, "rules")
    monkeypatch.setattr(os, "write", real_write)
    assert not (out / "judgments.jsonl").read_bytes()  # nothing half-written
    summary = rescore(out, "rules")  # space back: scoring completes
    assert summary["entries"][0]["n_scored"] + summary["entries"][0]["n_unscored"] == N_JA
