"""Temporary files live in the workspace (``WS/tmp``), are removed on SIGTERM, and a killed run's are swept at the
next start: an extracted tarball, the filter's thumbnails."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import hostile_inputs as h
import pytest
from conftest import run_cli, run_cli_json

pytest.importorskip("sqlalchemy", reason="the [build] extra is needed")


def _holder(ws: Path, env: dict[str, str]) -> tuple[subprocess.Popen[str], Path]:
    code = textwrap.dedent(f"""
        import sys
        from pathlib import Path
        from zuhyo.construct.workspace.scratch import scratch_dir
        with scratch_dir(Path({str(ws)!r}), "latex-") as d:
            (d / "big.bin").write_bytes(b"x" * 100_000)
            print(d, flush=True)
            sys.stdin.read()
    """)
    proc = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                            env=env)
    assert proc.stdout is not None
    return proc, Path(proc.stdout.readline().strip())


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    path = tmp_path / "ws"
    run_cli("init", str(path))
    return path


def test_sigterm_removes_the_scratch_folder_and_sigkill_leftovers_are_swept(ws: Path, tmp_path: Path):
    system_tmp = tmp_path / "system-tmp"
    system_tmp.mkdir()
    env = {**os.environ, "TMPDIR": str(system_tmp)}
    proc, folder = _holder(ws, env)
    assert folder.parent == ws / "tmp" and (folder / "big.bin").is_file()
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=30) == 128 + signal.SIGTERM
    assert not folder.exists()

    killed, stale = _holder(ws, env)
    running, busy = _holder(ws, env)
    killed.kill()
    killed.wait(timeout=30)
    assert stale.is_dir()  # kill -9 cannot be caught
    paper = tmp_path / "2101.00002.tar.gz"
    paper.write_bytes(h.tarball({"main.tex": b"\\documentclass{article}\\begin{document}\\begin{abstract}A."
                                             b"\\end{abstract}\\end{document}\n"}))
    out = run_cli_json("collect", "latex", str(ws), str(paper), env={"TMPDIR": str(system_tmp)})
    assert out["documents"] == 1
    assert not stale.exists()  # swept at the next start
    assert busy.is_dir()  # a running stage's folder is left alone
    assert [p.name for p in (ws / "tmp").iterdir()] == [busy.name]  # and the collect's own is gone
    assert list(system_tmp.iterdir()) == []  # nothing in the system's temporary folder
    assert running.stdin is not None
    running.stdin.close()
    running.wait(timeout=30)
    assert not busy.exists()


def test_filter_thumbnails_live_in_the_workspace(ws: Path, tmp_path: Path):
    from test_construct_collect_folder import make_image_folder

    make_image_folder(tmp_path / "imgs", 6, size=160)
    run_cli_json("collect", "folder", str(ws), str(tmp_path / "imgs"))
    system_tmp = tmp_path / "system-tmp"
    system_tmp.mkdir()
    out = run_cli_json("filter", str(ws), "--classifier", "none", env={"TMPDIR": str(system_tmp)})
    assert out["checked"] == 6
    assert list(system_tmp.iterdir()) == [] and list((ws / "tmp").iterdir()) == []
