"""`zuhyo list`: what is registered."""

from __future__ import annotations

import typer

from zuhyo.cli._common import JsonOpt, console, emit_json


def registries() -> dict[str, list[tuple[str, str]]]:
    """name → [(entry, description)] for every registry, importing only light modules."""
    from zuhyo.benchmarks import BENCHMARKS, ensure_registered

    ensure_registered()
    out: dict[str, list[tuple[str, str]]] = {"benchmarks": [(e.name, e.description) for e in BENCHMARKS]}
    try:
        from zuhyo.models import MODEL_BACKENDS, ensure_registered as models_registered

        models_registered()
        out["model backends"] = [(e.name, e.description) for e in MODEL_BACKENDS]
    except ImportError:
        pass
    try:
        from zuhyo.evaluate.judges import JUDGES, ensure_registered as judges_registered

        judges_registered()
        out["judges"] = [(e.name, e.description) for e in JUDGES]
    except ImportError:
        pass
    try:
        from zuhyo.evaluate.metrics import METRICS, ensure_registered as metrics_registered

        metrics_registered()
        out["metrics"] = [(e.name, e.description) for e in METRICS]
    except ImportError:
        pass
    return out


def register(app: typer.Typer) -> None:
    @app.command("list")
    def list_cmd(json_out: JsonOpt = False) -> None:
        """List registered benchmarks, model backends, judges and metrics."""
        regs = registries()
        if json_out:
            emit_json({k.replace(" ", "_"): [{"name": n, "description": d} for n, d in v] for k, v in regs.items()})
            return
        from rich.table import Table

        for kind, entries in regs.items():
            table = Table(title=kind, title_justify="left", show_header=False, box=None)
            for n, d in entries:
                table.add_row(f"[bold]{n}[/]", d)
            console.print(table)
