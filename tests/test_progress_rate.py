"""`zuhyo eval`'s live progress bar: the rate is computed when the bar refreshes, not on every item (issue 7,
item 7: reading rich's Task.speed per advance cost half the CLI's CPU)."""

from __future__ import annotations

import io

import pytest
from rich.console import Console
from rich.progress import Task

from zuhyo.cli import evaluation


def test_advance_does_not_compute_the_rate_per_item(monkeypatch: pytest.MonkeyPatch) -> None:
    reads = 0
    original = Task.speed

    def counting(self: Task) -> float | None:
        nonlocal reads
        reads += 1
        return original.fget(self)  # type: ignore[attr-defined]

    monkeypatch.setattr(Task, "speed", property(counting))
    buf = io.StringIO()
    monkeypatch.setattr(evaluation, "console", Console(file=buf, force_terminal=True, width=120))
    with evaluation.RichProgress().task("inference", 20_000) as advance:
        for _ in range(20_000):
            advance(1)
    assert reads < 200  # a few per refresh, never one per item (was 20,000)
    out = buf.getvalue()
    assert "20000/20000" in out and "/s" in out  # the rate is still shown
