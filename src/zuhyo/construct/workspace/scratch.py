"""Scratch folders of running stages, under the workspace (``WS/tmp/``), never left behind for good.

A stage that needs temporary files (an extracted LaTeX tarball, the filter's memory-mapped thumbnails) takes a
folder with :func:`scratch_dir`: ``WS/tmp/<prefix><pid>-<random>/``, holding an ``flock`` on its ``.lock`` file
while in use. It is removed when the stage ends, also on Ctrl-C and on SIGTERM (turned into ``SystemExit`` while
the folder is held, so that the clean-up runs). A ``kill -9`` or a power cut cannot be caught: the kernel then
releases the lock, and the next :func:`scratch_dir` in this workspace removes every folder whose lock nobody holds.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import signal
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

SCRATCH = "tmp"
_LOCK = ".lock"


def sweep(base: Path) -> list[str]:
    """Remove the scratch folders under ``base`` that no process holds (left by killed runs); their names."""
    removed = []
    for child in sorted(base.iterdir()) if base.is_dir() else []:
        if not child.is_dir() or child.is_symlink():
            continue
        try:
            fd = os.open(child / _LOCK, os.O_RDWR)
        except FileNotFoundError:  # being created this instant (or not ours): left alone
            continue
        except OSError:
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            continue  # in use by a running stage
        finally:
            os.close(fd)  # closing releases the lock we may have taken
        shutil.rmtree(child, ignore_errors=True)
        removed.append(child.name)
    return removed


@contextlib.contextmanager
def _sigterm_as_exit() -> Iterator[None]:
    """SIGTERM raises ``SystemExit(143)`` while held (main thread, default handler only), so ``finally`` runs."""
    if threading.current_thread() is not threading.main_thread() or signal.getsignal(signal.SIGTERM) != signal.SIG_DFL:
        yield
        return

    def terminate(signum: int, frame: Any) -> None:
        raise SystemExit(128 + signum)

    signal.signal(signal.SIGTERM, terminate)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)


@contextlib.contextmanager
def scratch_dir(root: Path, prefix: str) -> Iterator[Path]:
    """A fresh scratch folder under ``root/tmp`` (stale ones swept first), removed afterwards."""
    base = root / SCRATCH
    base.mkdir(parents=True, exist_ok=True)
    sweep(base)
    while True:
        folder = Path(tempfile.mkdtemp(prefix=f"{prefix}{os.getpid()}-", dir=base))
        fd = os.open(folder / _LOCK, os.O_RDWR | os.O_CREAT, 0o600)
        fcntl.flock(fd, fcntl.LOCK_EX)
        try:  # another sweep may have taken it between the two calls above: then it is gone, and we start again
            if os.stat(folder / _LOCK).st_ino == os.fstat(fd).st_ino:
                break
        except FileNotFoundError:
            pass
        os.close(fd)
    try:
        with _sigterm_as_exit():
            yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)
        os.close(fd)
