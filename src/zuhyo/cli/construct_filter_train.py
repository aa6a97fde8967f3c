"""`zuhyo filter train WS --labels labels.csv`: train the workspace's chart/table-vs-not classifier."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from zuhyo.cli._common import JsonOpt, console, emit_json, fail, result_console
from zuhyo.cli.workspace import WsArg, open_workspace

ExecutorOpt = Annotated[str, typer.Option(
    "--executor", help="Where image features are computed: local (processes), ray (RAY_ADDRESS or a local "
                       "instance) or ray:ADDRESS (needs the [ray] extra).")]


def train_cmd(
    ws: WsArg,
    labels: Annotated[Path, typer.Option("--labels", help="CSV with a figure_id (or sha256) column and a label "
                                                          "column: chart (or table) | not_chart.")],
    test_fraction: Annotated[float, typer.Option("--test-fraction", help="Share of each class held out to "
                                                                         "report precision and recall.")] = 0.25,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the held-out split.")] = 0,
    ocr: Annotated[bool, typer.Option("--ocr/--no-ocr", help="Add RapidOCR text density to the features "
                                                             "(about 3 s per image on 2 cores; needs the [ocr] "
                                                             "extra).")] = False,
    executor: ExecutorOpt = "local",
    kind: Annotated[str, typer.Option("--kind", help="features (light CPU model) or resnet18 (fine-tune a "
                                                     "torchvision ImageNet checkpoint; needs torch, the [hf] "
                                                     "extra).")] = "features",
    weights: Annotated[Path | None, typer.Option("--weights", help="resnet18: the local torchvision resnet18 "
                                                                   "checkpoint (e.g. resnet18-f37072fd.pth).")] = None,
    epochs: Annotated[int, typer.Option("--epochs", min=1, help="resnet18: training epochs.")] = 5,
    train_all: Annotated[bool, typer.Option("--train-all", help="resnet18: train every layer (default: only "
                                                                "layer4 and the head).")] = False,
    image_size: Annotated[int, typer.Option("--image-size", min=32, help="resnet18: input side in pixels (224 as "
                                                                         "ImageNet; smaller is faster).")] = 224,
    json_out: JsonOpt = False,
) -> None:
    """Train the chart/table-vs-not classifier on labelled figures; report held-out precision/recall and store it
    as WS/models/chart_classifier.json (--kind features) or WS/models/chart_resnet18.pt (--kind resnet18)."""
    from zuhyo.construct.executor import ExecutorError
    from zuhyo.construct.filter.chart_classifier import ClassifierError, train_chart_classifier, train_resnet_classifier

    if kind not in ("features", "resnet18"):
        fail(f"unknown --kind {kind!r} (use features or resnet18)")
    if kind == "resnet18" and weights is None:
        fail("--kind resnet18 needs --weights PATH: a local torchvision resnet18 checkpoint (resnet18-f37072fd.pth)")
    try:
        with open_workspace(ws) as w:
            if kind == "resnet18":
                assert weights is not None
                report = train_resnet_classifier(w, labels, weights, epochs=epochs, train_all=train_all,
                                                 image_size=image_size, test_fraction=test_fraction, seed=seed)
            else:
                report = train_chart_classifier(w, labels, executor=executor, ocr=ocr, test_fraction=test_fraction,
                                                seed=seed)
    except (ClassifierError, ExecutorError) as e:
        fail(str(e))
    if json_out:
        emit_json(report)
        return
    _print(report)


def _print(report: dict[str, Any]) -> None:
    from rich.markup import escape

    how = (f"OCR features {'on' if report['ocr'] else 'off'}" if report["kind"] == "features" else
           f"resnet18, {report['epochs']} epochs, {'all layers' if report['train_all'] else 'layer4 + head'}, "
           f"{report['image_size']} px, {report['seconds']} s")
    result_console.print(f"trained on {report['used']} figures ({report['charts']} chart, {report['not_charts']} "
                         f"not_chart; {how}), {report['errors']} errors", highlight=False)
    held = report.get("held_out")
    if held:
        result_console.print(f"held out {report['test']} (seed {report['seed']}): precision {held['precision']:.3f}, "
                             f"recall {held['recall']:.3f} (chart class; tp {held['tp']}, fp {held['fp']}, "
                             f"fn {held['fn']}, tn {held['tn']})", highlight=False)
    result_console.print(f"model {report['model_id']} saved to {escape(report['model'])}", highlight=False)
    for item in report["error_items"]:
        console.print(f"  [yellow]{escape(item)}[/]", highlight=False, soft_wrap=True)
