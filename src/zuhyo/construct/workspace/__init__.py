"""A construction workspace: ``zuhyo.toml``, the database (:mod:`zuhyo.construct.workspace.db`) and the image store.

Layout of ``WS/``::

    zuhyo.toml     what the workspace is: database URL (relative SQLite paths are relative to WS), image store
    zuhyo.db       the SQLite database (default; -wal and -shm files beside it while in use)
    images/        the content-addressed image store (:class:`zuhyo.images.store.ImageStore`)
    .locks/        one lock file per stage that allows one writer at a time (``run(..., lock=True)``)
    tmp/           scratch files of running stages (:mod:`zuhyo.construct.workspace.scratch`)

A team points ``--db`` at PostgreSQL instead; the password belongs in ``~/.pgpass`` or ``PGPASSWORD`` (libpq reads
both), not in ``zuhyo.toml``.

The package's modules: :mod:`db` (connection, one write path, migrations run from code), :mod:`orm`, :mod:`tables`
and :mod:`qa_tables` (the tables), :mod:`records` (writes of collected rows and decisions), :mod:`queries`,
:mod:`labels` and :mod:`stage_counts` (reads), ``migrations/`` (Alembic).
"""

from __future__ import annotations

import asyncio
import getpass
import json
import os
import socket
import tomllib
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from zuhyo.construct.workspace.db import Database, WorkspaceError, current_revision, upgrade
from zuhyo.images.store import ImageStore

CONFIG_NAME = "zuhyo.toml"
DEFAULT_DB_NAME = "zuhyo.db"
DEFAULT_IMAGES = "images"
FORMAT = 1


def _toml_str(value: str) -> str:
    # A JSON string with ASCII escapes is a valid TOML basic string.
    return json.dumps(value, ensure_ascii=True)


def _resolve_url(root: Path, url: str) -> str:
    from sqlalchemy.engine import make_url

    parsed = make_url(url)
    if parsed.get_backend_name() == "sqlite" and parsed.database and parsed.database != ":memory:":
        db_path = Path(parsed.database)
        if not db_path.is_absolute():
            return parsed.set(database=str(root / db_path)).render_as_string(hide_password=False)
    return url


def current_user() -> str:
    """Who is running this process, for ``decided_by`` and run records."""
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return f"uid{os.getuid()}"


class Workspace:
    """An opened workspace. Use :meth:`init` or :meth:`open`; close with :meth:`close` (or ``with``)."""

    def __init__(self, root: Path, db_url: str, images_dir: Path, config: dict[str, Any]) -> None:
        self.root = root
        self.config = config
        self.db = Database(_resolve_url(root, db_url))
        self.images = ImageStore(images_dir)
        self.migrated_from: str | None = None
        """Revision the database was at before this open upgraded it (None when it was current or new)."""

    @classmethod
    def init(cls, root: Path | str, db_url: str | None = None, images: Path | str | None = None) -> Workspace:
        """Create (or re-open, when it already is one) the workspace at ``root`` and migrate its database."""
        root = Path(root)
        cfg_path = root / CONFIG_NAME
        if cfg_path.exists():
            ws = cls.open(root)
            if db_url is not None and _resolve_url(root, db_url) != ws.db.url:
                ws.close()
                raise WorkspaceError(f"{root} is already a workspace with another database ({_redact(ws.db.url)}); "
                                     "choose another folder")
            return ws
        if root.exists() and not root.is_dir():
            raise WorkspaceError(f"{root} exists and is not a folder")
        root.mkdir(parents=True, exist_ok=True)
        url = db_url or f"sqlite:///{DEFAULT_DB_NAME}"
        images_dir = str(images) if images is not None else DEFAULT_IMAGES
        created = datetime.now(UTC).isoformat(timespec="seconds")
        text = (f"# zuhyo construction workspace (see docs/build.md)\n[workspace]\nformat = {FORMAT}\n"
                f"created = {_toml_str(created)}\n\n[database]\nurl = {_toml_str(url)}\n\n"
                f"[images]\nstore = {_toml_str(images_dir)}\n")
        ws = cls._from_config(root, tomllib.loads(text))
        try:
            _checked(upgrade, ws.db)
        except BaseException:
            ws.close()
            raise
        # The config is written last: a folder without it is not a workspace, so a failed init can be retried.
        tmp = cfg_path.with_suffix(".toml.tmp")
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, cfg_path)
        return ws

    @classmethod
    def open(cls, root: Path | str) -> Workspace:
        """Open the workspace at ``root``, upgrading its database to the newest migration when it is older."""
        root = Path(root)
        cfg_path = root / CONFIG_NAME
        if not cfg_path.is_file():
            raise WorkspaceError(f"{root} is not a zuhyo workspace (no {CONFIG_NAME}); create one with `zuhyo init`")
        try:
            config = tomllib.loads(cfg_path.read_text(encoding="utf-8"))
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as e:
            raise WorkspaceError(f"{cfg_path}: not valid TOML: {e}") from None
        ws = cls._from_config(root, config)
        try:
            before, after = _checked(upgrade, ws.db)
            ws.migrated_from = before if before != after else None
        except BaseException:
            ws.close()
            raise
        return ws

    @classmethod
    def _from_config(cls, root: Path, config: dict[str, Any]) -> Workspace:
        fmt = config.get("workspace", {}).get("format")
        if fmt != FORMAT:
            raise WorkspaceError(f"{root / CONFIG_NAME}: workspace format {fmt!r} is not {FORMAT}")
        url = config.get("database", {}).get("url")
        if not isinstance(url, str) or not url:
            raise WorkspaceError(f"{root / CONFIG_NAME}: [database] url is missing")
        images = Path(config.get("images", {}).get("store", DEFAULT_IMAGES))
        return cls(root, url, images if images.is_absolute() else root / images, config)

    def revision(self) -> str | None:
        """The database's migration revision."""
        return current_revision(self.db)

    def close(self) -> None:
        self.db.dispose()

    def __enter__(self) -> Workspace:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextmanager
    def stage_lock(self, stage: str) -> Iterator[None]:
        """Hold the workspace's lock of ``stage``: a second process is refused with :class:`StageBusyError` naming
        the holder's pid and command (an ``flock``, released by the kernel when the holder dies, ``kill -9``
        included; like the run set's lock of `zuhyo eval`, it excludes processes of one machine)."""
        from zuhyo.evaluate.runlock import ProcessLock

        class _StageLock(ProcessLock):
            def busy(self, holder: str) -> StageBusyError:
                return StageBusyError(f"workspace {root}: stage {stage} is in use by {holder}; wait for it to "
                                      "finish")

        root = self.root
        with _StageLock(self.root / ".locks" / f"{stage}.lock"):
            yield

    @contextmanager
    def run(self, stage: str, params: dict[str, Any], *, lock: bool = False) -> Iterator[RunHandle]:
        """Record one stage invocation in ``stage_runs``: ``running`` now, ``done``, ``failed`` or ``interrupted``
        (Ctrl-C) with counts.

        ``lock``: hold the stage's lock throughout (:meth:`stage_lock`): one writer per stage, so that two
        processes never record every decision twice or ask a model twice about every figure."""
        if lock:
            with self.stage_lock(stage), self.run(stage, params) as handle:
                yield handle
            return
        from zuhyo import __version__
        from zuhyo.construct.workspace.orm import utcnow
        from zuhyo.construct.workspace.tables import StageRun

        with self.db.write() as s:
            row = StageRun(stage=stage, params=params, status="running", counts={}, started_by=current_user(),
                           host=socket.gethostname(), pid=os.getpid(), zuhyo_version=__version__)
            s.add(row)
            s.flush()
            run_id = row.id
        handle = RunHandle(run_id)
        status = "failed"
        try:
            yield handle
            status = "done"
        except (KeyboardInterrupt, asyncio.CancelledError):
            status = "interrupted"  # Ctrl-C: what was recorded stays; a re-run resumes
            raise
        finally:
            with self.db.write() as s:
                done = s.get(StageRun, run_id)
                assert done is not None
                done.status, done.counts, done.finished_at = status, dict(handle.counts), utcnow()


class StageBusyError(WorkspaceError):
    """Another process holds the workspace's lock of a stage."""


class RunHandle:
    """The stage run in progress: its id (to tag rows with) and the counts recorded when it ends."""

    def __init__(self, run_id: int) -> None:
        self.id = run_id
        self.counts: dict[str, Any] = {}


def _checked(migrate: Any, db: Database) -> tuple[str | None, str | None]:
    """Run ``migrate(db)``; a database that cannot be reached becomes a one-line :class:`WorkspaceError`."""
    from sqlalchemy.exc import OperationalError

    try:
        result: tuple[str | None, str | None] = migrate(db)
    except OperationalError as e:
        first_line = str(e.orig).strip().splitlines()[0] if e.orig is not None else str(e)
        raise WorkspaceError(f"cannot use the workspace database {_redact(db.url)}: {first_line}") from None
    return result


def _redact(url: str) -> str:
    from sqlalchemy.engine import make_url

    return make_url(url).render_as_string(hide_password=True)
