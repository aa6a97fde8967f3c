"""`zuhyo export` keeps a complete output folder at every instant (issue 20): the finished export is swapped in
atomically, a kill at any moment leaves the old or the new export (never none), the next run removes what a killed
one left and restores an old folder a fallback swap had moved aside, and two exports of one workspace never run
at once."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import run_cli, run_cli_json

pytest.importorskip("sqlalchemy", reason="the [build] extra is needed")

from test_construct_export import make_qa_ws  # noqa: E402

from zuhyo.construct.publish.export import MARKER  # noqa: E402
from zuhyo.construct.publish.folder_swap import exchange, recover_output, swap_in  # noqa: E402


def _version(folder: Path, label: str) -> Path:
    folder.mkdir()
    (folder / MARKER).write_text(json.dumps({"label": label}), encoding="utf-8")
    return folder


def _label(folder: Path) -> str:
    return str(json.loads((folder / MARKER).read_text(encoding="utf-8"))["label"])


def test_swap_in_replaces_an_existing_folder_in_one_step(tmp_path: Path):
    out = _version(tmp_path / "out", "old")
    new = _version(tmp_path / ".out.partial-1", "new")
    swap_in(new, out)
    assert _label(out) == "new" and sorted(p.name for p in tmp_path.iterdir()) == ["out"]
    if sys.platform.startswith("linux"):
        a, b = _version(tmp_path / "a", "a"), _version(tmp_path / "b", "b")
        assert exchange(a, b) and (_label(a), _label(b)) == ("b", "a")  # renameat2 works on this file system


def test_fallback_swap_killed_between_its_renames_is_repaired(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    import zuhyo.construct.publish.folder_swap as fs

    out = _version(tmp_path / "out", "old")
    new = _version(tmp_path / ".out.partial-2", "new")
    monkeypatch.setattr(fs, "exchange", lambda a, b: False)  # a file system that cannot exchange
    real_rename = Path.rename

    def killed_after_first(self: Path, target: Path) -> Path:
        if self == new:
            raise KeyboardInterrupt("killed between the renames")
        return real_rename(self, target)

    monkeypatch.setattr(Path, "rename", killed_after_first)
    with pytest.raises(KeyboardInterrupt):
        swap_in(new, out)
    monkeypatch.setattr(Path, "rename", real_rename)
    assert not out.exists()  # old code left exactly this: no output folder
    repairs = recover_output(out, MARKER)
    assert _label(out) == "old" and len(repairs) == 2 and "restored" in repairs[0]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]


def test_a_killed_export_always_leaves_a_complete_folder_and_the_next_run_cleans_up(tmp_path: Path):
    ws = make_qa_ws(tmp_path)
    out = tmp_path / "out"
    assert run_cli_json("export", str(ws), "--out", str(out), "--include-drafts")["items"] == 3
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    kills = 0
    for delay in (0.6, 1.2, 1.8, 2.4, 3.0, 3.6):
        proc = subprocess.Popen([sys.executable, "-m", "zuhyo", "export", str(ws), "--out", str(out)],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
        time.sleep(delay)
        if proc.poll() is None:
            proc.send_signal(signal.SIGKILL)
            kills += 1
        proc.wait()
        assert (out / MARKER).is_file() and (out / "README.md").is_file(), f"no complete export after {delay} s"
        assert json.loads((out / MARKER).read_text(encoding="utf-8"))["items"] in (2, 3)
    assert kills > 0, "every export finished before its kill: the machine is too fast for this test's delays"
    final = run_cli_json("export", str(ws), "--out", str(out))
    assert final["items"] == 2
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".out")) == []  # partials removed


def test_two_exports_of_one_workspace_do_not_run_at_once(tmp_path: Path):
    from zuhyo.construct.workspace import Workspace

    ws = make_qa_ws(tmp_path)
    with Workspace.open(ws) as w, w.stage_lock("export"):
        proc = run_cli("export", str(ws), "--out", str(tmp_path / "out"), check=False)
    assert proc.returncode == 1 and "stage export is in use by" in proc.stderr and f"pid {os.getpid()}" in proc.stderr
    assert not (tmp_path / "out").exists()
