"""`zuhyo list`: what is registered."""

from __future__ import annotations

from typing import Any

import typer

from zuhyo.cli._common import JsonOpt, emit_json, result_console
from zuhyo.registry import Registry


def registries() -> dict[str, list[tuple[str, str]]]:
    """name → [(entry, description)] for every registry, importing only light modules."""
    from zuhyo.analysis.embedders import EMBEDDERS
    from zuhyo.benchmarks import BENCHMARKS
    from zuhyo.benchmarks import ensure_registered as benchmarks_registered
    from zuhyo.evaluate.judges import JUDGES
    from zuhyo.evaluate.judges import ensure_registered as judges_registered
    from zuhyo.evaluate.metrics import METRICS
    from zuhyo.evaluate.metrics import ensure_registered as metrics_registered
    from zuhyo.models import MODEL_BACKENDS
    from zuhyo.models import ensure_registered as models_registered

    for ensure in (benchmarks_registered, models_registered, judges_registered, metrics_registered):
        ensure()
    regs: dict[str, Registry[Any]] = {"benchmarks": BENCHMARKS, "model backends": MODEL_BACKENDS, "judges": JUDGES,
                                      "metrics": METRICS, "embedders": EMBEDDERS}
    from zuhyo.models.presets import load_presets

    out = {kind: [(e.name, e.description) for e in reg] for kind, reg in regs.items()}
    out["model presets"] = [(f"preset:{p.name}", p.describe()) for p in load_presets().values()]
    return out


def register(app: typer.Typer) -> None:
    @app.command("list")
    def list_cmd(json_out: JsonOpt = False) -> None:
        """List registered benchmarks, model backends, model presets, judges and metrics."""
        regs = registries()
        if json_out:
            emit_json({k.replace(" ", "_"): [{"name": n, "description": d} for n, d in v] for k, v in regs.items()})
            return
        from rich.table import Table

        for kind, entries in regs.items():
            table = Table(title=kind, title_justify="left", show_header=False, box=None)
            for n, d in entries:
                table.add_row(f"[bold]{n}[/]", d)
            result_console.print(table)
