"""Shared fixtures: the suite's own chart data, paths to real third-party data, the fake OpenAI server, CLI runner.

Two layers of data:
- ``tests/fixtures/`` is owned by the suite and always present (see tests/fixtures/README.md for provenance), so
  the engine is tested in any clone: ``chartqa_dir`` is a ChartQA-layout benchmark of 14 charts rendered by
  tests/fixtures/chartqa/render.py and 61 QA rows, ``FIXTURE_CHARTS`` its PNG folder.
- ``../shared/data`` beside the project (real third-party files, see its SOURCES.md) is an extra layer for
  real-data tests; the ``shared_data`` fixture skips them, naming the missing folder, when it is absent.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "fixtures"
FIXTURE_CHARTQA = FIXTURES / "chartqa"
FIXTURE_CHARTS = FIXTURE_CHARTQA / "test" / "png"
SHARED_DATA = ROOT.parent / "shared" / "data"
SHARED_SKIP_REASON = f"real third-party test data not found at {SHARED_DATA} (an optional extra layer of tests)"


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """``../shared/data`` (real third-party files); skips the test with the reason when it is absent."""
    if not SHARED_DATA.is_dir():
        pytest.skip(SHARED_SKIP_REASON)
    return SHARED_DATA


@pytest.fixture(scope="session")
def chartqa_dir() -> Path:
    """The suite's own ChartQA-layout benchmark (test/test_human.json, test/test_augmented.json, test/png/)."""
    return FIXTURE_CHARTQA


@pytest.fixture
def fake_server() -> Iterator[Callable[..., object]]:
    """Factory: fake_server(answers={...}, fail_rate=..., ...) → a started FakeOpenAIServer (stopped after)."""
    from zuhyo.testing.fake_openai import FakeOpenAIServer, ServerState

    servers: list[FakeOpenAIServer] = []

    def start(port: int = 0, **kwargs: object) -> FakeOpenAIServer:
        server = FakeOpenAIServer(ServerState(**kwargs), port=port).start()  # type: ignore[arg-type]
        servers.append(server)
        return server

    yield start
    for s in servers:
        s.stop()


def run_cli(*args: str, check: bool = True, timeout: float = 300, env: dict[str, str] | None = None
            ) -> subprocess.CompletedProcess[str]:
    """Run `zuhyo ARGS` in a subprocess (the real console entry point)."""
    full_env = {**os.environ, "COLUMNS": "200", **(env or {})}
    proc = subprocess.run([sys.executable, "-m", "zuhyo", *args], capture_output=True, text=True, timeout=timeout,
                          env=full_env)
    if check and proc.returncode != 0:
        raise AssertionError(f"zuhyo {' '.join(args)} failed ({proc.returncode}):\n{proc.stderr[-3000:]}")
    return proc


def run_cli_json(*args: str, **kw: object) -> dict:
    proc = run_cli(*args, "--json", **kw)  # type: ignore[arg-type]
    lines = [ln for ln in proc.stdout.splitlines() if ln.strip()]
    assert len(lines) == 1, f"expected one JSON line on stdout, got {len(lines)}: {proc.stdout[:500]}"
    return json.loads(lines[0])
