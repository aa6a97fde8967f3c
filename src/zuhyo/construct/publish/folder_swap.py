"""Replace an output folder by a finished one so that a complete folder exists at every instant (issue 20).

An export is written into ``.OUT.partial-<id>`` beside ``OUT``, then swapped in. On Linux the swap is one
``renameat2(RENAME_EXCHANGE)``: ``OUT`` is the old export until the call and the new one after it, and a kill at
any moment leaves a complete folder. Where the kernel or file system cannot exchange (other systems, some network
file systems), the swap takes two renames (``OUT`` → ``.OUT.old-<id>``, then the new folder → ``OUT``);
:func:`recover_output` at the next export's start puts the old folder back if a kill fell between them. Either
way, leftover partial and old folders are removed at that start, under the export's lock.
"""

from __future__ import annotations

import ctypes
import errno
import os
import shutil
import sys
import uuid
from pathlib import Path

_AT_FDCWD = -100
_RENAME_EXCHANGE = 2


def partial_folder(out: Path) -> Path:
    """A new, not yet existing folder beside ``out`` to write the next version into."""
    return out.parent / f".{out.name}.partial-{uuid.uuid4().hex[:8]}"


def exchange(a: Path, b: Path) -> bool:
    """Swap paths ``a`` and ``b`` in one atomic step (Linux ``renameat2`` with ``RENAME_EXCHANGE``); False where
    the system or the file system cannot, so the caller falls back."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        renameat2 = ctypes.CDLL(None, use_errno=True).renameat2
    except (AttributeError, OSError):
        return False
    rc = renameat2(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE)
    if rc == 0:
        return True
    err = ctypes.get_errno()
    if err in (errno.EINVAL, errno.ENOSYS, errno.ENOTSUP, errno.EPERM):
        return False
    raise OSError(err, os.strerror(err), str(b))


def swap_in(new: Path, out: Path) -> None:
    """Make the finished folder ``new`` the folder ``out`` (absent or an earlier version), the old one removed."""
    if not out.exists():
        new.rename(out)
        return
    if exchange(new, out):
        shutil.rmtree(new, ignore_errors=True)  # ``new`` now holds the old version
        return
    old = out.parent / f".{out.name}.old-{uuid.uuid4().hex[:8]}"
    out.rename(old)
    new.rename(out)  # a kill between these two renames is repaired by recover_output
    shutil.rmtree(old, ignore_errors=True)


def recover_output(out: Path, complete: str) -> list[str]:
    """Repair what a killed earlier swap left beside ``out``: when ``out`` is missing, put back the newest old
    folder that holds the file ``complete`` (the mark of a finished version); remove every other old and
    partial folder. Call it under the lock of whoever writes ``out``. Returns one line per repair."""
    done: list[str] = []
    parent = out.parent
    if not parent.is_dir():
        return done
    olds = sorted((p for p in parent.glob(f".{out.name}.old-*") if p.is_dir()), key=lambda p: p.stat().st_mtime,
                  reverse=True)
    if not out.exists():
        for old in olds:
            if (old / complete).is_file():
                old.rename(out)
                olds.remove(old)
                done.append(f"restored {out} from {old.name} (an earlier export was interrupted mid-swap)")
                break
    for leftover in [*olds, *(p for p in parent.glob(f".{out.name}.partial-*") if p.is_dir())]:
        shutil.rmtree(leftover, ignore_errors=True)
        done.append(f"removed {leftover.name} (left by an interrupted export)")
    return done
