"""Shared fixtures: paths to real third-party data, the fake OpenAI-compatible server, CLI runner."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SHARED_DATA = ROOT.parent / "shared" / "data"


@pytest.fixture(scope="session")
def shared_data() -> Path:
    if not SHARED_DATA.is_dir():
        pytest.skip(f"shared test data not found at {SHARED_DATA}")
    return SHARED_DATA


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
