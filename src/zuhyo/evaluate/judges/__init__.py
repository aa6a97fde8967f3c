"""Judges (see :mod:`zuhyo.evaluate.judges.base`)."""

from __future__ import annotations

from zuhyo.evaluate.judges.base import JUDGES, Judge, JudgeInput, JudgeOptions, Verdict, build_judge

_JUDGE_MODULES = ("rules", "llm", "cascade", "metric", "astrochart", "charxiv", "l3score", "auto")


def ensure_registered() -> None:
    import importlib

    for mod in _JUDGE_MODULES:
        try:
            importlib.import_module(f"zuhyo.evaluate.judges.{mod}")
        except ModuleNotFoundError as e:
            if e.name != f"zuhyo.evaluate.judges.{mod}":
                raise


__all__ = ["JUDGES", "Judge", "JudgeInput", "JudgeOptions", "Verdict", "build_judge", "ensure_registered"]
