"""One writer per workspace stage: filter, classify, complexity, draft, audit and abstracts take the stage's lock,
and a second process is refused naming the holder's pid and command (the lock of `zuhyo eval`, reused)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from conftest import run_cli

pytest.importorskip("sqlalchemy", reason="the [build] extra is needed")


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    path = tmp_path / "ws"
    run_cli("init", str(path))
    return path


@contextmanager
def held_by_another_process(ws: Path, stage: str) -> Iterator[int]:
    """A child process holding ``stage``'s lock of ``ws`` as `zuhyo <stage> WS` would; yields its pid."""
    code = textwrap.dedent(f"""
        import sys, time
        sys.argv = ["zuhyo", "{stage}", {str(ws)!r}]
        from zuhyo.construct.workspace import Workspace
        with Workspace.open({str(ws)!r}) as w, w.stage_lock({stage!r}):
            print("held", flush=True)
            sys.stdin.read()
    """)
    proc = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "held"
        yield proc.pid
    finally:
        assert proc.stdin is not None
        proc.stdin.close()
        proc.wait(timeout=30)


def _backend(spec: str = "openai:stub@http://127.0.0.1:9") -> Any:
    async def aclose() -> None:
        return None

    return SimpleNamespace(spec=spec, max_image_pixels=None, aclose=aclose)


def _stages() -> dict[str, Callable[[Any], Any]]:
    from zuhyo.construct.filter.stage import run_filter
    from zuhyo.construct.qa.abstracts import run_abstracts
    from zuhyo.construct.qa.audit import run_audit
    from zuhyo.construct.qa.drafting import run_drafting
    from zuhyo.construct.select.classify import IMAGE_TYPE_TASK
    from zuhyo.construct.select.complexity import CCV_TASK
    from zuhyo.construct.select.labelling import run_labelling

    return {
        "filter": lambda w: run_filter(w, classifier="none"),
        "image_type": lambda w: run_labelling(w, IMAGE_TYPE_TASK, _backend()),
        "ccv": lambda w: run_labelling(w, CCV_TASK, _backend()),
        "draft": lambda w: run_drafting(w, _backend(), "hakusho"),
        "audit": lambda w: run_audit(w, [_backend()], SimpleNamespace(id="j", aclose=_backend().aclose)),
        "abstracts": lambda w: run_abstracts(w, [_backend("a"), _backend("b")]),
    }


@pytest.mark.parametrize("stage", ["filter", "image_type", "ccv", "draft", "audit", "abstracts"])
def test_a_second_writer_of_a_stage_is_refused_with_the_holders_pid_and_command(ws: Path, stage: str):
    from zuhyo.construct.workspace import StageBusyError, Workspace

    run = _stages()[stage]
    with held_by_another_process(ws, stage) as pid, Workspace.open(ws) as w:
        with pytest.raises(StageBusyError) as e:
            run(w)
        assert f"stage {stage} is in use by pid {pid} (zuhyo {stage} {ws})" in str(e.value)
        with w.db.read() as s:
            from sqlalchemy import select

            from zuhyo.construct.workspace.tables import StageRun

            assert s.scalars(select(StageRun).where(StageRun.stage == stage)).all() == []  # nothing recorded


def test_the_cli_says_who_holds_the_stage_and_a_free_stage_runs(ws: Path):
    with held_by_another_process(ws, "filter") as pid:
        proc = run_cli("filter", str(ws), "--classifier", "none", check=False)
        assert proc.returncode == 1
        assert f"stage filter is in use by pid {pid}" in proc.stderr and "Traceback" not in proc.stderr
        other = run_cli("classify", str(ws), "--help")  # another stage is not held
        assert other.returncode == 0
    again = run_cli("filter", str(ws), "--classifier", "none", check=False)
    assert again.returncode == 0, again.stderr  # the holder is gone: the lock is free again
