"""Error analysis (HakushoBench §6.3): sample N wrong answers of one model from a run set, let people tag each
with an error type and a note, and break the tags down."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from zuhyo.annotate.workflow import DEFAULT_ERROR_TYPES, ErrorTask, SubmitResult, WorkflowConfig
from zuhyo.build.db import Database

DEFAULT_CONFIG = WorkflowConfig()


def import_error_samples(db: Database, run_dir: Path, model: str, n: int, seed: int,
                         error_types: tuple[str, ...] = DEFAULT_ERROR_TYPES) -> dict[str, Any]:
    """Load the run set's wrong answers of ``model`` and add ``n`` drawn at random (``seed``) to
    ``error_samples``; idempotent. Returns ``{"wrong", "imported", "existing", "run_set", "model"}``."""
    raise NotImplementedError


def next_error_task(db: Database, user_id: int, config: WorkflowConfig = DEFAULT_CONFIG) -> ErrorTask | None:
    """The user's open error-tagging assignment, else a new one, else None."""
    raise NotImplementedError


def submit_error_tag(db: Database, user_id: int, assignment_id: int, error_type: str, note: str | None,
                     submit_key: str, config: WorkflowConfig = DEFAULT_CONFIG) -> SubmitResult:
    """Tag the sample with one of ``config.error_types`` and a note."""
    raise NotImplementedError


def error_breakdown(db: Database) -> dict[str, Any] | None:
    """Tags per (run set, model): ``{"groups": [{"run_set", "model", "samples", "tagged", "types": {type: n}}]}``,
    or None when no error sample was imported."""
    raise NotImplementedError
