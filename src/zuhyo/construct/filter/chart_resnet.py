"""The ``resnet18`` chart/table-vs-not classifier: a ResNet-18 in plain torch (no torchvision), fine-tuned.

DomainCQA §4.1 keeps the arXiv figures a ResNet-18 chart-vs-other classifier calls charts (94.45 % precision).
This is the same recipe without torchvision (which pins its own multi-GB torch build): :class:`ResNet18` has
exactly torchvision's ``resnet18`` ``state_dict`` keys (122: ``conv1.weight``, ``bn1.*``, ``layer1.0.conv1.weight``
… ``fc.bias``), so a local torchvision ImageNet checkpoint (``resnet18-f37072fd.pth``) loads with
``load_state_dict(strict=True)``; images are prepared like torchvision's ImageNet transform (composited on white,
shorter side resized to 256/224 of the input size, centre crop, ImageNet mean/std) with Pillow and numpy.

Fine-tuning (:func:`fine_tune`): the 1000-class ``fc`` is replaced by a 2-class head (1 = chart/table); by default
the backbone is frozen except ``layer4`` and ``fc`` (the frozen trunk's outputs are computed once and cached:
about 200 KB per labelled image at 224 px), ``train_all`` trains every layer; AdamW, seeded. The model is fitted
on the seeded stratified training split (:func:`chart_model.split`) and evaluated on the held-out rest
(:func:`chart_model.precision_recall`); **the fitted model is kept** (no refit on all labels), so the held-out
figures describe exactly the stored model. It is saved to ``WS/models/chart_resnet18.pt`` with a JSON sidecar
(weights file and its SHA-256, counts, held-out metrics, date, model id = a short hash of the saved parameters).
torch is imported only by this module, which is imported only when the classifier is used.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from zuhyo.construct.filter.chart_model import RESNET_FILE as MODEL_FILE
from zuhyo.construct.filter.chart_model import ClassifierError, precision_recall, split

SIDECAR_FILE = "models/chart_resnet18.json"
KIND = "resnet18-chart"
IMAGE_SIZE = 224
MEAN = np.array([0.485, 0.456, 0.406], np.float32)
STD = np.array([0.229, 0.224, 0.225], np.float32)
#: Images per forward pass (training and inference).
BATCH = 32


def use_cpu_threads() -> int:
    """Let torch use the CPUs this process may run on (not more: the machine may have only 2 cores)."""
    n = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    if torch.get_num_threads() != n:
        torch.set_num_threads(n)
    return n


class BasicBlock(nn.Module):
    """torchvision's ``BasicBlock``: two 3×3 convolutions with batch norm, plus the (downsampled) input."""

    def __init__(self, inplanes: int, planes: int, stride: int = 1) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(inplanes, planes, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(planes)
        self.relu = nn.ReLU(inplace=True)
        self.conv2 = nn.Conv2d(planes, planes, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(planes)
        self.downsample: nn.Module | None = None
        if stride != 1 or inplanes != planes:
            self.downsample = nn.Sequential(nn.Conv2d(inplanes, planes, 1, stride, bias=False),
                                            nn.BatchNorm2d(planes))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        return self.relu(out + (x if self.downsample is None else self.downsample(x)))


class ResNet18(nn.Module):
    """ResNet-18 (He et al. 2016) laid out as torchvision's ``resnet18``, so the ``state_dict`` keys match."""

    def __init__(self, num_classes: int = 1000) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(3, 64, 7, 2, 3, bias=False)
        self.bn1 = nn.BatchNorm2d(64)
        self.relu = nn.ReLU(inplace=True)
        self.maxpool = nn.MaxPool2d(3, 2, 1)
        self.layer1 = nn.Sequential(BasicBlock(64, 64), BasicBlock(64, 64))
        self.layer2 = nn.Sequential(BasicBlock(64, 128, 2), BasicBlock(128, 128))
        self.layer3 = nn.Sequential(BasicBlock(128, 256, 2), BasicBlock(256, 256))
        self.layer4 = nn.Sequential(BasicBlock(256, 512, 2), BasicBlock(512, 512))
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(512, num_classes)
        for m in self.modules():  # torchvision's initialisation
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")
            elif isinstance(m, nn.BatchNorm2d):
                nn.init.constant_(m.weight, 1)
                nn.init.constant_(m.bias, 0)

    def trunk(self, x: torch.Tensor) -> torch.Tensor:
        """Everything before ``layer4`` (what stays frozen by default)."""
        return self.layer3(self.layer2(self.layer1(self.maxpool(self.relu(self.bn1(self.conv1(x)))))))

    def head(self, x: torch.Tensor) -> torch.Tensor:
        """``layer4``, pooling and ``fc``."""
        return self.fc(torch.flatten(self.avgpool(self.layer4(x)), 1))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.trunk(x))


def preprocess(data: bytes, size: int = IMAGE_SIZE) -> np.ndarray:
    """Image bytes → a normalised ``(3, size, size)`` float32 array, like torchvision's ImageNet transform
    (``Resize(256)``, ``CenterCrop(224)``, ``Normalize``) scaled to ``size``; transparency composited on white.
    Raises ``ValueError`` for bytes that are not an allowed image, are corrupt or have too many pixels
    (:func:`zuhyo.images.verify.decode_untrusted`)."""
    from PIL import Image

    from zuhyo.errors import ImageError
    from zuhyo.images.verify import DEFAULT_MAX_PIXELS, decode_untrusted, on_white

    try:
        im, _ = decode_untrusted(data, DEFAULT_MAX_PIXELS, context="cannot decode the image")
    except ImageError as e:
        raise ValueError(str(e)) from None
    rgb = on_white(im).convert("RGB")
    short = round(size * 256 / 224)
    w, h = rgb.size
    scale = short / min(w, h)
    rw, rh = max(size, round(w * scale)), max(size, round(h * scale))
    rgb = rgb.resize((rw, rh), Image.Resampling.BILINEAR)
    left, top = (rw - size) // 2, (rh - size) // 2
    arr = np.asarray(rgb.crop((left, top, left + size, top + size)), np.float32) / 255.0
    return ((arr - MEAN) / STD).transpose(2, 0, 1).copy()


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def load_weights(model: nn.Module, path: Path) -> None:
    """Load a torch checkpoint (a ``state_dict``, or a dict holding one under ``state_dict``) into ``model``
    strictly; a one-line :class:`ClassifierError` naming the file when it is not one or does not fit."""
    try:
        state = torch.load(path, map_location="cpu", weights_only=True)
    except FileNotFoundError:
        raise ClassifierError(f"weights file {path} does not exist") from None
    except Exception as e:  # torch raises pickle, zip and runtime errors for a file that is not a checkpoint
        raise ClassifierError(f"{path} is not a torch checkpoint ({type(e).__name__}: "
                              f"{str(e).splitlines()[0][:200] if str(e) else ''})") from None
    if isinstance(state, dict) and isinstance(state.get("state_dict"), dict):
        state = state["state_dict"]
    if not isinstance(state, dict) or not all(isinstance(v, torch.Tensor) for v in state.values()):
        raise ClassifierError(f"{path} is a torch file but not a state_dict of tensors")
    own = model.state_dict()
    missing = [k for k in own if k not in state]
    unexpected = [k for k in state if k not in own]
    if missing or unexpected:
        raise ClassifierError(f"{path} is not a {type(model).__name__} state_dict: {len(missing)} keys missing "
                              f"({', '.join(missing[:3])}), {len(unexpected)} unexpected ({', '.join(unexpected[:3])})")
    wrong = [f"{k} {tuple(state[k].shape)} != {tuple(v.shape)}" for k, v in own.items() if state[k].shape != v.shape]
    if wrong:
        raise ClassifierError(f"{path}: {len(wrong)} tensors have the wrong shape ({'; '.join(wrong[:2])})")
    model.load_state_dict(state, strict=True)


def model_id(model: nn.Module) -> str:
    """A short hash of the parameters and buffers (recorded in each decision's ``decided_by``)."""
    h = hashlib.sha256()
    for k, v in sorted(model.state_dict().items()):
        h.update(k.encode())
        h.update(v.detach().cpu().contiguous().numpy().tobytes())
    return h.hexdigest()[:12]


def _batches(x: torch.Tensor, net: Any, batch: int = BATCH) -> torch.Tensor:
    with torch.no_grad():
        return torch.cat([net(x[i:i + batch]) for i in range(0, len(x), batch)]) if len(x) else x


def pretrained(weights: Path) -> ResNet18:
    """The 1000-class ResNet-18 with torchvision's checkpoint ``weights`` loaded (see :func:`load_weights`)."""
    net = ResNet18()
    load_weights(net, weights)
    return net


def fine_tune(net: ResNet18, images: Sequence[np.ndarray], y: Sequence[int], *, epochs: int = 5,
              train_all: bool = False, lr: float = 1e-3, seed: int = 0,
              test_fraction: float = 0.25) -> tuple[ResNet18, dict[str, Any]]:
    """Fine-tune the :func:`pretrained` ``net`` on preprocessed ``images`` (1 = chart) as the module doc says.

    Returns the 2-class model (fitted on the training split) and the report: train/test counts, per-epoch
    training loss and the held-out precision/recall of the chart class.
    """
    use_cpu_threads()
    torch.manual_seed(seed)
    net.fc = nn.Linear(512, 2)
    labels = np.asarray(y, int)
    tr, te = split(len(labels), test_fraction, seed, labels)
    x = torch.from_numpy(np.stack(images)) if len(images) else torch.zeros(0)
    x_train = x[tr]  # indexed once: every batch below takes its rows from it
    trainable = list(net.parameters()) if train_all else [*net.layer4.parameters(), *net.fc.parameters()]
    if not train_all:
        for p in net.parameters():
            p.requires_grad_(False)
        for p in trainable:
            p.requires_grad_(True)
        net.eval()
        feats = _batches(x_train, net.trunk)  # the frozen trunk, once
    opt = torch.optim.AdamW(trainable, lr=lr, weight_decay=1e-4)
    ty = torch.from_numpy(labels[tr])
    pos = max(1, int(ty.sum()))
    loss_fn = nn.CrossEntropyLoss(weight=torch.tensor([len(ty) / (2 * max(1, len(ty) - pos)), len(ty) / (2 * pos)]))
    gen = torch.Generator().manual_seed(seed)
    losses = []
    for _ in range(epochs):
        if train_all:
            net.train()
        else:
            net.layer4.train()
        total = 0.0
        order = torch.randperm(len(ty), generator=gen)
        for i in range(0, len(order), BATCH):
            idx = order[i:i + BATCH]
            if len(idx) < 2:  # batch norm needs two samples
                continue
            out = net(x_train[idx]) if train_all else net.head(feats[idx])
            loss = loss_fn(out, ty[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
            total += float(loss.detach()) * len(idx)
        losses.append(round(total / max(1, len(ty)), 4))
    with torch.no_grad():  # batch-norm statistics of the trained layers over the whole training split
        _recalibrate(net if train_all else net.layer4, lambda: [net(x_train[i:i + BATCH]) if train_all else
                                                                net.head(feats[i:i + BATCH])
                                                                for i in range(0, len(tr), BATCH)])
    net.eval()
    for p in net.parameters():
        p.requires_grad_(False)
    report: dict[str, Any] = {"train": len(tr), "test": len(te), "charts": int(labels.sum()),
                              "not_charts": int(len(labels) - labels.sum()), "seed": seed,
                              "test_fraction": test_fraction, "epochs": epochs, "train_all": train_all,
                              "loss": losses}
    if len(te):
        prob = probabilities(net, x[te])
        report["held_out"] = precision_recall(labels[te], (prob >= 0.5).astype(int))
    return net, report


def _recalibrate(part: nn.Module, forward: Any) -> None:
    """Reset ``part``'s batch-norm running statistics and re-estimate them as exact averages over one pass
    (``forward()``): a few epochs on a few hundred figures are too few optimiser steps for the running
    averages (momentum 0.1) to settle, and inference uses them."""
    norms = [m for m in part.modules() if isinstance(m, nn.BatchNorm2d)]
    for m in norms:
        m.reset_running_stats()
        m.momentum = None
        m.train()
    forward()
    for m in norms:
        m.momentum = 0.1


def probabilities(net: ResNet18, x: torch.Tensor) -> np.ndarray:
    """p(chart) of a batch of preprocessed images, in batches of :data:`BATCH`."""
    net.eval()
    logits = _batches(x, net)
    return torch.softmax(logits, 1)[:, 1].numpy().astype(float) if len(x) else np.zeros(0)


def save(net: ResNet18, root: Path, info: dict[str, Any]) -> dict[str, Any]:
    """Store the model under ``root`` (``WS``) and its sidecar; returns the sidecar's content."""
    path, sidecar = root / MODEL_FILE, root / SIDECAR_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    meta = {"kind": KIND, "model_id": model_id(net), **info, "date": datetime.now(UTC).isoformat(timespec="seconds")}
    tmp = path.with_suffix(".tmp")
    torch.save({"kind": KIND, "image_size": info["image_size"], "state_dict": net.state_dict()}, tmp)
    tmp.replace(path)
    tmp_json = sidecar.with_suffix(".tmp")
    tmp_json.write_text(json.dumps(meta, indent=1, ensure_ascii=False), encoding="utf-8")
    tmp_json.replace(sidecar)
    return meta


def load(root: Path) -> tuple[ResNet18, int, str]:
    """The workspace's fine-tuned model, its input size and model id."""
    path = root / MODEL_FILE
    use_cpu_threads()
    try:
        saved = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as e:
        raise ClassifierError(f"cannot read the chart classifier {path}: {type(e).__name__}: {e}") from None
    if not isinstance(saved, dict) or saved.get("kind") != KIND:
        raise ClassifierError(f"{path} is not a {KIND} model")
    net = ResNet18(num_classes=2)
    load_weights(net, path)
    net.eval()
    return net, int(saved["image_size"]), model_id(net)
