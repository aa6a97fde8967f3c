"""The light chart/table-vs-not model: L2-regularised logistic regression on standardised image features.

Trained in numpy (no scikit-learn) by full-batch gradient descent, which takes well under a second for thousands
of labelled figures. The model is a small JSON file in the workspace (``WS/models/chart_classifier.json``) with
its feature names, scaling, weights, training counts and date, so a run can say which model decided.
DomainCQA §4.1 filters its arXiv figures with a chart-vs-other classifier (ResNet-18, 94.45 % precision) and
HakushoBench §3.1 removes photographs before annotation; this model does the same job on CPU features.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from zuhyo.errors import ZuhyoError

MODEL_FILE = "models/chart_classifier.json"
RESNET_FILE = "models/chart_resnet18.pt"
"""Where the fine-tuned resnet18 classifier (:mod:`chart_resnet`) lives in the workspace."""
KIND = "features-logreg"


class ClassifierError(ZuhyoError):
    """A classifier that cannot be used: unknown spec, no trained model, unreadable labels."""


@dataclass
class ChartModel:
    """A trained model: ``p(chart) = sigmoid(w · (x - mean) / scale + b)``."""

    features: list[str]
    mean: list[float]
    scale: list[float]
    weights: list[float]
    bias: float
    trained: dict[str, Any] = field(default_factory=dict)
    """Training counts, held-out precision/recall, seed, date."""
    kind: str = KIND

    @property
    def model_id(self) -> str:
        """A short id of the parameters (recorded in each decision's ``decided_by``)."""
        blob = json.dumps([self.features, self.mean, self.scale, self.weights, self.bias])
        return hashlib.sha256(blob.encode()).hexdigest()[:12]

    def probabilities(self, x: Any) -> np.ndarray:
        z = (np.asarray(x, float) - np.asarray(self.mean)) / np.asarray(self.scale)
        return _sigmoid(z @ np.asarray(self.weights) + self.bias)

    def save(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(asdict(self), indent=1, ensure_ascii=False), encoding="utf-8")
        tmp.replace(path)

    @classmethod
    def load(cls, path: Path) -> ChartModel:
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            model = cls(**data)
        except (OSError, ValueError, TypeError) as e:
            raise ValueError(f"cannot read the chart classifier {path}: {e}") from None
        if model.kind != KIND or len(model.weights) != len(model.features):
            raise ValueError(f"{path} is not a {KIND} chart classifier")
        return model


def _sigmoid(z: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-np.clip(z, -40, 40)))


def fit(x: np.ndarray, y: np.ndarray, features: list[str], *, l2: float = 1e-2, steps: int = 3000,
        lr: float = 0.5) -> ChartModel:
    """Logistic regression on ``x`` (n × d) and ``y`` (1 = chart); classes weighted to balance."""
    x = np.asarray(x, float)
    y = np.asarray(y, float)
    if len(set(y.tolist())) < 2:
        raise ValueError("training needs labelled examples of both classes (chart and not_chart)")
    mean = x.mean(axis=0)
    scale = x.std(axis=0)
    scale[scale < 1e-9] = 1.0
    z = (x - mean) / scale
    pos = y.mean()
    sw = np.where(y == 1, 0.5 / pos, 0.5 / (1 - pos))  # balanced class weights
    w = np.zeros(z.shape[1])
    b = 0.0
    for _ in range(steps):
        p = _sigmoid(z @ w + b)
        g = sw * (p - y)
        w -= lr * (z.T @ g / len(y) + l2 * w)
        b -= lr * float(g.mean())
    return ChartModel(features=list(features), mean=mean.tolist(), scale=scale.tolist(), weights=w.tolist(),
                      bias=float(b))


def split(n: int, test_fraction: float, seed: int, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Seeded stratified split: indices (train, test), each class split by ``test_fraction``."""
    rng = np.random.default_rng(seed)
    train, test = [], []
    for cls in (0, 1):
        idx = np.flatnonzero(y == cls)
        rng.shuffle(idx)
        k = int(round(len(idx) * test_fraction)) if len(idx) > 1 else 0
        test.extend(idx[:k].tolist())
        train.extend(idx[k:].tolist())
    return np.array(sorted(train), int), np.array(sorted(test), int)


def precision_recall(y: np.ndarray, pred: np.ndarray) -> dict[str, float | int]:
    """Precision and recall of the chart class (as DomainCQA §4.1 reports its classifier)."""
    tp = int(((pred == 1) & (y == 1)).sum())
    fp = int(((pred == 1) & (y == 0)).sum())
    fn = int(((pred == 0) & (y == 1)).sum())
    tn = int(((pred == 0) & (y == 0)).sum())
    return {"precision": tp / (tp + fp) if tp + fp else 0.0, "recall": tp / (tp + fn) if tp + fn else 0.0,
            "accuracy": (tp + tn) / max(1, len(y)), "tp": tp, "fp": fp, "fn": fn, "tn": tn}


def train_and_evaluate(x: np.ndarray, y: np.ndarray, features: list[str], *, test_fraction: float = 0.25,
                       seed: int = 0) -> tuple[ChartModel, dict[str, Any]]:
    """Fit on a seeded training split, report precision/recall on the held-out rest, then refit on everything
    (the stored model uses all labels; the report is the held-out estimate)."""
    y = np.asarray(y, int)
    tr, te = split(len(y), test_fraction, seed, y)
    held = fit(x[tr], y[tr], features)
    report: dict[str, Any] = {"train": len(tr), "test": len(te), "charts": int(y.sum()),
                              "not_charts": int(len(y) - y.sum()), "seed": seed, "test_fraction": test_fraction}
    if len(te):
        report["held_out"] = precision_recall(y[te], (held.probabilities(x[te]) >= 0.5).astype(int))
    model = fit(x, y, features)
    model.trained = {**report, "date": datetime.now(UTC).isoformat(timespec="seconds")}
    return model, report
