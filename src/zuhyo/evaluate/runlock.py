"""One writer per run set: an exclusive ``flock`` on ``DIR/.zuhyo.lock`` held by `zuhyo eval` and `zuhyo score`;
the same lock (:class:`ProcessLock`) keeps one writer per workspace stage (``Workspace.run(..., lock=True)``).

The kernel releases a ``flock`` when its process exits for any reason (kill -9 included), so a crash never leaves
a stale lock behind: the next process simply takes it. The file's content — the holder's pid, command line and start
time — is only informational, shown to a second process that is refused; a leftover content from a crashed holder
is overwritten. (``flock`` over NFS may only lock against processes of the same machine: keep run sets on a local
disk when several machines share one.)
"""

from __future__ import annotations

import fcntl
import json
import os
import shlex
import sys
import time
from pathlib import Path
from types import TracebackType

from zuhyo.errors import ZuhyoError
from zuhyo.evaluate.store import write_error

LOCK_FILE = ".zuhyo.lock"


class RunSetBusyError(ZuhyoError):
    """Another process holds the run set's lock."""


def _command_line() -> str:
    argv = list(sys.argv) or ["python"]
    if argv[0].endswith(("__main__.py", "/zuhyo")):
        argv[0] = "zuhyo"
    return shlex.join(argv)


def _describe_holder(text: str) -> str:
    try:
        info = json.loads(text)
        started = time.strftime("%Y-%m-%d %H:%M:%S %Z", time.localtime(float(info["started"])))
        return f"pid {info['pid']} ({info['command']}), started {started}"
    except (ValueError, KeyError, TypeError):
        return "another process (it has not recorded its pid yet)"


class ProcessLock:
    """Exclusive, non-blocking ``flock`` on ``path`` (its folder created); a context manager. A second process is
    refused with :meth:`busy` (the holder's pid, command and start time)."""

    def __init__(self, path: Path, command: str | None = None) -> None:
        self.root = path.parent
        self.path = path
        self.command = command or _command_line()
        self._fd: int | None = None

    def busy(self, holder: str) -> ZuhyoError:
        """The error a refused process raises; ``holder`` describes who holds the lock."""
        return ZuhyoError(f"{self.path} is held by {holder}")

    def acquire(self) -> None:
        try:
            self.root.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as e:  # read-only or full file system, no permission: one line, no traceback
            raise write_error(e, self.path) from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 4096, 0).decode("utf-8", "replace")
            os.close(fd)
            raise self.busy(_describe_holder(holder)) from None
        info = json.dumps({"pid": os.getpid(), "command": self.command, "started": time.time()}).encode()
        try:
            os.ftruncate(fd, 0)
            os.pwrite(fd, info, 0)
        except OSError:
            pass  # only informational (e.g. a full disk): the lock itself is held; the run's own writes will say why
        self._fd = fd

    def release(self) -> None:
        if self._fd is None:
            return
        try:
            os.ftruncate(self._fd, 0)  # nobody holds it now; a refused process reads nothing stale
        except OSError:
            pass
        fcntl.flock(self._fd, fcntl.LOCK_UN)
        os.close(self._fd)
        self._fd = None

    def __enter__(self) -> ProcessLock:
        self.acquire()
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.release()


class RunSetLock(ProcessLock):
    """Exclusive, non-blocking lock on a run set; a context manager. Raises :class:`RunSetBusyError` when held."""

    def __init__(self, root: Path, command: str | None = None) -> None:
        super().__init__(root / LOCK_FILE, command)

    def busy(self, holder: str) -> ZuhyoError:
        return RunSetBusyError(f"run set {self.root} is in use by {holder}; wait for it to finish or use another --out")
