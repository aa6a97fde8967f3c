"""`zuhyo serve` as a real process on 127.0.0.1 (uvicorn), for tests that need the server as users run it."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def serving(workspace: Path, *args: str, timeout_s: float = 60) -> Iterator[str]:
    """Run `zuhyo serve WORKSPACE ARGS` on a free port until the block ends; yields its base URL once
    ``/healthz`` answers (the test fails with the server's output when it does not start)."""
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "zuhyo", "serve", str(workspace), "--port", str(port), *args],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + timeout_s
        while True:
            try:
                with urllib.request.urlopen(base + "/healthz", timeout=2) as r:
                    assert r.read() == b'{"ok":true}'
                    break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    out = proc.stdout.read() if proc.stdout else ""
                    pytest.fail(f"zuhyo serve did not start: {out[-2000:]}")
                time.sleep(0.3)
        yield base
    finally:
        proc.terminate()
        proc.wait(timeout=20)
