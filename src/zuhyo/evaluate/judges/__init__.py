"""Judges (see :mod:`zuhyo.evaluate.judges.base`)."""

from __future__ import annotations

from zuhyo.evaluate.judges.base import JUDGES, Judge, JudgeInput, JudgeOptions, Verdict, build_judge
from zuhyo.registry import import_modules

_JUDGE_MODULES = ("rules", "llm", "cascade", "metric", "astrochart", "charxiv", "l3score", "auto")


def ensure_registered() -> None:
    """Import the modules that register themselves (idempotent)."""
    import_modules(__name__, _JUDGE_MODULES)


__all__ = ["JUDGES", "Judge", "JudgeInput", "JudgeOptions", "Verdict", "build_judge", "ensure_registered"]
