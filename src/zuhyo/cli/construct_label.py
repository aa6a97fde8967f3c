"""`zuhyo classify` (image types) and `zuhyo complexity` (chart complexity vectors): label a workspace's figures
with a model (`--model`), from people's CSV (`--import`), or both."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from zuhyo.cli._common import (
    SHOWN_ERRORS,
    JsonOpt,
    console,
    emit_json,
    exit_if_all_failed,
    fail,
    print_item_errors,
    result_console,
    stage_progress,
)
from zuhyo.cli.workspace import WsArg, open_workspace

if TYPE_CHECKING:
    from zuhyo.construct.asking import RetryingBackend
    from zuhyo.construct.select.labelling import LabelTask
    from zuhyo.construct.workspace import Workspace


ModelOpt = Annotated[str | None, typer.Option("--model", help="Model spec, e.g. openai:<model>@<base_url>.")]
ConcurrencyOpt = Annotated[int, typer.Option("--concurrency", min=1, help="Figures in flight.")]
TimeoutOpt = Annotated[float, typer.Option("--timeout", help="Per-request timeout, seconds.")]
RetriesOpt = Annotated[int, typer.Option("--retries", min=0, help="Retries per request on 429/5xx/timeouts.")]
RetryBaseOpt = Annotated[float, typer.Option("--retry-base", help="First backoff delay, seconds.")]
ApiKeyEnvOpt = Annotated[str, typer.Option("--api-key-env", help="Env var holding the API key.")]
MaxPixelsOpt = Annotated[int | None, typer.Option("--max-image-pixels", help="Downscale images above this many "
                                                                             "pixels.")]
ConstrainedOpt = Annotated[bool, typer.Option("--constrained/--no-constrained",
                                              help="Send the reply's JSON schema as response_format (servers "
                                                   "without structured output: --no-constrained).")]
LenientJsonOpt = Annotated[bool, typer.Option("--lenient-json", help="Take the first JSON object of a reply with "
                                                                     "text around it (by default such a reply is "
                                                                     "re-asked, then the figure's error); "
                                                                     "recorded in the run.")]


def stage_backend(model: str, *, timeout: float, retries: int, retry_base: float, api_key_env: str,
                  max_image_pixels: int | None) -> RetryingBackend:
    """The backend of a construction stage: ``model`` with a per-request timeout and transient errors retried."""
    from zuhyo.construct.asking import RetryingBackend
    from zuhyo.evaluate.config import RetryPolicy
    from zuhyo.models.base import BackendOptions, build_backend

    inner = build_backend(model, BackendOptions(api_key=os.environ.get(api_key_env) or None, timeout_s=timeout,
                                                max_image_pixels=max_image_pixels))
    return RetryingBackend(inner, RetryPolicy(max_retries=retries, base_delay_s=retry_base), timeout)


def _label(w: Workspace, task: LabelTask, *, model: str | None, import_csv: Path | None, concurrency: int,
           timeout: float, retries: int, retry_base: float, api_key_env: str, max_image_pixels: int | None,
           constrained: bool, json_out: bool, lenient_json: bool = False) -> dict[str, Any]:
    """Import people's labels, then run the model; the JSON summary (without the stage's statistics)."""
    from zuhyo.construct.select.labelling import import_labels, run_labelling

    out: dict[str, Any] = {"stage": task.stage, "import": None, "run": None}
    if import_csv is not None:
        out["import"] = import_labels(w, task, import_csv).model_dump(mode="json")
    if model is not None:

        backend = stage_backend(model, timeout=timeout, retries=retries, retry_base=retry_base,
                                api_key_env=api_key_env, max_image_pixels=max_image_pixels)
        with stage_progress(quiet=json_out, label=task.stage) as (on_start, on_item):
            report = run_labelling(w, task, backend, concurrency=concurrency, constrained=constrained,
                                   lenient_json=lenient_json, on_start=on_start,
                                   on_item=(lambda fid, outcome: on_item(str(fid), outcome)) if on_item else None)
        out["run"] = report.model_dump(mode="json")
    return out


def _need_something(model: str | None, import_csv: Path | None) -> None:
    if model is None and import_csv is None:
        fail("give --model SPEC to label with a model, or --import CSV to record people's labels (or both)")


def _print_common(out: dict[str, Any]) -> None:
    from rich.markup import escape

    imp = out["import"]
    if imp is not None:
        result_console.print(f"{escape(imp['file'])}: {imp['imported']} labels imported, {imp['unchanged']} already "
                             f"imported, {len(imp['errors'])} bad rows, {len(imp['unknown'])} unknown figures",
                             highlight=False)
        for msg in (imp["errors"] + imp["unknown"])[:SHOWN_ERRORS]:
            console.print(f"  [yellow]{escape(msg)}[/]", highlight=False, soft_wrap=True)
    run = out["run"]
    if run is not None:
        result_console.print(f"{escape(run['model'])} (prompt v{run['prompt_version']}): {run['labelled']} figures "
                             f"labelled, "
                             f"{run['skipped_existing']} already labelled, {run['dropped']} dropped figures left out, "
                             f"{run['errors']} errors ({run['reasked']} re-asked, {run['retries']} retries)",
                             highlight=False)
        print_item_errors([f"figure {item['figure_id']}: {item['reason'][:300]}" for item in run["error_items"]])


def classify_cmd(
    ws: WsArg,
    model: ModelOpt = None,
    import_csv: Annotated[Path | None, typer.Option("--import", help="People's labels: CSV with the figure id or "
                                                                     "sha256 first, then an image_type column; "
                                                                     "they win over model labels.")] = None,
    gold: Annotated[Path | None, typer.Option("--gold", help="A labelled sample (same CSV form): report the "
                                                             "model's accuracy and Cohen's kappa on it.")] = None,
    concurrency: ConcurrencyOpt = 8, timeout: TimeoutOpt = 300.0, retries: RetriesOpt = 5,
    retry_base: RetryBaseOpt = 1.0, api_key_env: ApiKeyEnvOpt = "OPENAI_API_KEY",
    max_image_pixels: MaxPixelsOpt = None, constrained: ConstrainedOpt = True, lenient_json: LenientJsonOpt = False,
    json_out: JsonOpt = False,
) -> None:
    """Image type of each kept figure: one of the 11 HakushoBench classes (Bar, Line, Pie, Area, Scatter, Bubble,
    Map, Table, Infographic, Dashboard, Other); resumable, re-runs with another model keep earlier answers."""
    from zuhyo.construct.select.classify import IMAGE_TYPE_TASK, gold_agreement, type_counts
    from zuhyo.construct.select.labelling import model_labels
    from zuhyo.construct.workspace.labels import current_labels

    if gold is None:
        _need_something(model, import_csv)
    with open_workspace(ws) as w:
        out = _label(w, IMAGE_TYPE_TASK, model=model, import_csv=import_csv, concurrency=concurrency,
                     timeout=timeout, retries=retries, retry_base=retry_base, api_key_env=api_key_env,
                     max_image_pixels=max_image_pixels, constrained=constrained, json_out=json_out,
                     lenient_json=lenient_json)
        current = current_labels(w, IMAGE_TYPE_TASK.stage)
        out["labelled_figures"] = len(current)
        out["types"] = type_counts(current)
        out["agreement"] = None
        if gold is not None:
            compared = (model_labels(w, IMAGE_TYPE_TASK.stage, model, IMAGE_TYPE_TASK.prompt.version)
                        if model is not None else current)
            out["agreement"] = gold_agreement(w, gold, compared)
    if json_out:
        emit_json(out)
    else:
        _print_classify(out, gold, model)
    _exit_if_all_failed(out)


def _exit_if_all_failed(out: dict[str, Any]) -> None:
    run = out["run"]
    if run is not None:
        exit_if_all_failed(run["labelled"], run["errors"], "figures asked")


def _print_classify(out: dict[str, Any], gold: Path | None, model: str | None) -> None:
    _print_common(out)
    result_console.print(f"image types of {out['labelled_figures']} figures: "
                         + ", ".join(f"{k} {v}" for k, v in out["types"].items() if v), highlight=False)
    agr = out["agreement"]
    if agr is not None:
        acc = "n/a" if agr["accuracy"] is None else f"{agr['accuracy']:.1%}"
        kappa = "n/a" if agr["kappa"] is None else f"{agr['kappa']:.3f}"
        result_console.print(f"agreement with {gold} ({'model ' + model if model else 'current labels'}): "
                             f"n={agr['n']}, "
                             f"accuracy {acc}, Cohen's kappa {kappa}, {agr['missing']} gold figures unlabelled, "
                             f"{len(agr['errors'])} bad gold rows", highlight=False)


def complexity_cmd(
    ws: WsArg,
    model: ModelOpt = None,
    import_csv: Annotated[Path | None, typer.Option("--import", help="People's labels: CSV with the figure id or "
                                                                     "sha256 first, then the 10 attribute columns "
                                                                     "Annotation ... Type, each 0 or 1; they win "
                                                                     "over model labels.")] = None,
    concurrency: ConcurrencyOpt = 8, timeout: TimeoutOpt = 300.0, retries: RetriesOpt = 5,
    retry_base: RetryBaseOpt = 1.0, api_key_env: ApiKeyEnvOpt = "OPENAI_API_KEY",
    max_image_pixels: MaxPixelsOpt = None, constrained: ConstrainedOpt = True, lenient_json: LenientJsonOpt = False,
    json_out: JsonOpt = False,
) -> None:
    """Chart Complexity Vector of each kept figure: the 10 binary attributes of DomainCQA Table 3, the L1
    complexity score and the Table 4 proportions; resumable, re-runs with another model keep earlier answers."""
    from zuhyo.construct.select.complexity import CCV_TASK, summary
    from zuhyo.construct.workspace.labels import current_labels

    _need_something(model, import_csv)
    with open_workspace(ws) as w:
        out = _label(w, CCV_TASK, model=model, import_csv=import_csv, concurrency=concurrency, timeout=timeout,
                     retries=retries, retry_base=retry_base, api_key_env=api_key_env,
                     max_image_pixels=max_image_pixels, constrained=constrained, json_out=json_out,
                     lenient_json=lenient_json)
        out.update(summary(current_labels(w, CCV_TASK.stage)))
    if json_out:
        emit_json(out)
    else:
        _print_complexity(out)
    _exit_if_all_failed(out)


def _print_complexity(out: dict[str, Any]) -> None:
    from rich.table import Table

    _print_common(out)
    table = Table(title=f"CCV of {out['charts']} charts (DomainCQA Table 4)", title_justify="left")
    for col in ("#", "attribute", "group", "simple", "complex"):
        table.add_column(col, justify="right" if col in ("#", "simple", "complex") else "left")
    for i, row in enumerate(out["table4"], 1):
        simple = "-" if row["simple_share"] is None else f"{row['simple_share']:.0%}"
        cplx = "-" if row["complex_share"] is None else f"{row['complex_share']:.0%}"
        table.add_row(str(i), f"{row['attribute']} Complexity", row["group"], simple, cplx)
    result_console.print(table)
    result_console.print("L1 complexity scores: " + ", ".join(f"{k}: {v}" for k, v in out["scores"].items()),
                         highlight=False)


def register(app: typer.Typer) -> None:
    app.command("classify")(classify_cmd)
    app.command("complexity")(complexity_cmd)
