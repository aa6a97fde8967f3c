"""The resnet18 chart/table-vs-not classifier (plain torch, no torchvision): torchvision-compatible weights,
fine-tuning on a real rendered corpus, the filter's decisions with it, and the CLI's errors. No downloads: the
"pretrained" checkpoint is a randomly initialised ResNet-18 saved to a temporary file."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from conftest import run_cli, run_cli_json

pytest.importorskip("sqlalchemy", reason="the [build] extra is needed")
torch = pytest.importorskip("torch", reason="the resnet18 classifier needs torch (the [hf] extra)")

from test_construct_classifier import figure_ids, write_corpus, write_labels  # noqa: E402

# torchvision.models.resnet18().state_dict() keys, in order (122)
_BN = ("weight", "bias", "running_mean", "running_var", "num_batches_tracked")


def _torchvision_resnet18_keys() -> list[str]:
    keys = ["conv1.weight", *(f"bn1.{k}" for k in _BN)]
    for layer in range(1, 5):
        for block in range(2):
            p = f"layer{layer}.{block}"
            keys += [f"{p}.conv1.weight", *(f"{p}.bn1.{k}" for k in _BN),
                     f"{p}.conv2.weight", *(f"{p}.bn2.{k}" for k in _BN)]
            if layer > 1 and block == 0:
                keys += [f"{p}.downsample.0.weight", *(f"{p}.downsample.1.{k}" for k in _BN)]
    return [*keys, "fc.weight", "fc.bias"]


@pytest.fixture(scope="module")
def weights(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A torchvision-layout ImageNet-shaped checkpoint (random weights: nothing is downloaded)."""
    from zuhyo.construct.filter.chart_resnet import ResNet18

    torch.manual_seed(0)
    path = tmp_path_factory.mktemp("weights") / "resnet18-f37072fd.pth"
    torch.save(ResNet18().state_dict(), path)
    return path


def test_state_dict_has_torchvisions_keys_and_shapes_and_loads_strictly(weights: Path) -> None:
    from zuhyo.construct.filter.chart_resnet import ResNet18, load_weights

    state = ResNet18().state_dict()
    assert list(state) == _torchvision_resnet18_keys() and len(state) == 122
    assert tuple(state["conv1.weight"].shape) == (64, 3, 7, 7)
    assert tuple(state["layer4.0.downsample.0.weight"].shape) == (512, 256, 1, 1)
    assert tuple(state["fc.weight"].shape) == (1000, 512)
    net = ResNet18()
    load_weights(net, weights)
    saved = torch.load(weights, weights_only=True)
    assert all(torch.equal(net.state_dict()[k], v) for k, v in saved.items())
    assert net(torch.zeros(2, 3, 64, 64)).shape == (2, 1000)


def test_bad_weights_files_are_one_line_errors_naming_the_file(weights: Path, tmp_path: Path) -> None:
    from zuhyo.construct.filter.chart_classifier import ClassifierError
    from zuhyo.construct.filter.chart_resnet import ResNet18, load_weights

    text = tmp_path / "notes.pth"
    text.write_text("not a checkpoint")
    renamed = tmp_path / "other.pth"
    state = torch.load(weights, weights_only=True)
    state["head.weight"] = state.pop("fc.weight")
    torch.save(state, renamed)
    resized = tmp_path / "ten.pth"
    state = torch.load(weights, weights_only=True)
    state["fc.weight"], state["fc.bias"] = torch.zeros(10, 512), torch.zeros(10)
    torch.save(state, resized)
    for path, expected in ((text, "is not a torch checkpoint"), (renamed, "1 keys missing (fc.weight), 1 unexpected "
                                                                          "(head.weight)"),
                           (resized, "2 tensors have the wrong shape (fc.weight (10, 512) != (1000, 512)"),
                           (tmp_path / "absent.pth", "does not exist")):
        with pytest.raises(ClassifierError) as e:
            load_weights(ResNet18(), path)
        assert str(path) in str(e.value) and expected in str(e.value) and "\n" not in str(e.value)


@pytest.fixture(scope="module")
def trained(tmp_path_factory: pytest.TempPathFactory, weights: Path) -> tuple[Path, dict[str, int], dict, float]:
    """A workspace with 40 charts/tables and 40 non-charts (photo-like images, logos), fine-tuned at 64 px."""
    from zuhyo.construct.collect.folder import collect_folder
    from zuhyo.construct.workspace import Workspace

    root = tmp_path_factory.mktemp("resnet")
    truth = write_corpus(root / "train", 40, 28, 12)
    with Workspace.init(root / "ws") as w:
        collect_folder(w, root / "train")
    started = time.monotonic()
    labels = write_labels(root / "labels.csv", truth)
    report = run_cli_json("filter", "train", str(root / "ws"), "--labels", str(labels), "--kind", "resnet18",
                          "--weights", str(weights), "--image-size", "64", "--epochs", "4")
    return root / "ws", truth, report, time.monotonic() - started


def test_fine_tune_learns_chart_vs_not_and_stores_model_and_sidecar(trained: tuple[Path, dict, dict, float],
                                                                     weights: Path) -> None:
    from zuhyo.construct.filter.chart_resnet import sha256_file

    ws, truth, report, seconds = trained
    assert report["kind"] == "resnet18" and report["used"] == report["figures"] == len(truth) == 80
    assert (report["train"], report["test"], report["errors"]) == (60, 20, 0)
    held = report["held_out"]
    # measured precision 1.0 / recall 1.0 (seed 0, random "pretrained" weights, 64 px, 4 epochs); chance is 0.5
    assert held["precision"] >= 0.85 and held["recall"] >= 0.85, held
    assert report["loss"][-1] < report["loss"][0]
    assert seconds < 60, f"fine-tuning took {seconds:.0f} s"
    meta = json.loads((ws / "models" / "chart_resnet18.json").read_text())
    assert meta["model_id"] == report["model_id"] and len(meta["model_id"]) == 12
    assert meta["weights"] == str(weights.resolve()) and meta["weights_sha256"] == sha256_file(weights)
    assert meta["held_out"] == held and meta["image_size"] == 64 and meta["train_all"] is False
    assert meta["date"].startswith("20") and (ws / "models" / "chart_resnet18.pt").is_file()


def test_filter_records_resnet18_decisions_auto_uses_it_and_rerun_adds_nothing(
        trained: tuple[Path, dict, dict, float], tmp_path: Path) -> None:
    from zuhyo.construct.collect.folder import collect_folder
    from zuhyo.construct.workspace import Workspace

    ws, _, report, _ = trained
    new_truth = write_corpus(tmp_path / "new", 6, 4, 2, offset=500)  # unseen
    with Workspace.open(ws) as w:
        collect_folder(w, tmp_path / "new")
    args = ("filter", str(ws), "--min-side", "1", "--min-pixels", "1")
    first = run_cli_json(*args, "--classifier", "resnet18")
    assert first["chart_check"].startswith("resnet18: ") and first["errors"] == 0
    ids = figure_ids(ws)
    by = f"classifier:resnet18@{report['model_id']}"
    with Workspace.open(ws) as w:
        from test_construct_classifier import _decisions

        rows = _decisions(w, [ids[s] for s in new_truth])
    decided = {sha: rows[ids[sha]][-1] for sha in new_truth}
    assert all(d.decided_by == by and d.stage == "filter" for d in decided.values())
    right = sum((d.decision == "keep") == bool(new_truth[sha]) for sha, d in decided.items())
    assert right >= 10, f"{right}/12 unseen figures classified right"
    drop = next(d for d in decided.values() if d.decision == "drop")
    assert drop.reason.startswith("not a chart/table (photo, illustration, logo or portrait), p=")
    assert 0 <= drop.evidence["probability"] < 0.5 and drop.evidence["image_size"] == 64
    again = run_cli_json(*args)  # --classifier auto: the only model in the workspace is the resnet18 one
    assert again["chart_check"].startswith("resnet18: 0 classified") and again["recorded"] == 0


def test_corrupt_image_is_an_error_not_a_verdict(trained: tuple[Path, dict, dict, float], tmp_path: Path) -> None:
    from zuhyo.construct.collect.folder import collect_folder
    from zuhyo.construct.filter.chart_classifier import run_chart_check
    from zuhyo.construct.workspace import Workspace

    ws, _, _, _ = trained
    truth = write_corpus(tmp_path / "more", 2, 0, 0, offset=700)
    with Workspace.open(ws) as w:
        collect_folder(w, tmp_path / "more")
        ids = figure_ids(ws)
        broken, fine = (ids[s] for s in truth)
        path = w.images.path_for(next(iter(truth)))
        assert path is not None
        data = path.read_bytes()
        path.chmod(0o644)
        path.write_bytes(data[: len(data) // 3])
        counts = run_chart_check(w, [broken, fine], "torchvision")  # the alias of resnet18
        from test_construct_classifier import _decisions

        rows = _decisions(w, [broken, fine])
    assert counts["errors"] == 1 and counts["checked"] == 1
    assert broken not in rows and rows[fine][-1].decided_by.startswith("classifier:resnet18@")
    from sqlalchemy import select

    from zuhyo.construct.workspace.tables import ItemError

    with Workspace.open(ws) as w, w.db.read() as s:
        errs = list(s.scalars(select(ItemError).where(ItemError.item_key == f"chart:{broken}")))
    assert len(errs) == 1 and "cannot decode the image" in errs[0].reason


def test_cli_errors(weights: Path, tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    run_cli("init", str(ws))
    labels = tmp_path / "labels.csv"
    labels.write_text("figure_id,label\n")
    train = ("filter", "train", str(ws), "--labels", str(labels), "--kind", "resnet18")
    no_weights = run_cli(*train, check=False)
    assert no_weights.returncode == 1 and "--kind resnet18 needs --weights PATH" in no_weights.stderr
    missing = run_cli(*train, "--weights", str(tmp_path / "nope.pth"), check=False)
    assert missing.returncode == 1 and f"weights file {tmp_path / 'nope.pth'} does not exist" in missing.stderr
    text = tmp_path / "notes.pth"
    text.write_text("hello")
    wrong = run_cli(*train, "--weights", str(text), check=False)
    assert wrong.returncode == 1 and f"{text} is not a torch checkpoint" in wrong.stderr
    no_model = run_cli("filter", str(ws), "--classifier", "resnet18", check=False)
    assert no_model.returncode != 0
    assert "no resnet18 chart classifier" in no_model.stdout + no_model.stderr
    assert "--kind resnet18 --weights" in no_model.stdout + no_model.stderr
    # ... said before the stage checked any image: no filter run, no decision
    assert "filter" not in run_cli_json("status", str(ws))["stages"]


def test_preprocess_refuses_bombs_and_non_images_before_decoding() -> None:
    """Images reach the network through the same untrusted-bytes decoder as the rest of zuhyo: a decompression
    bomb is refused on its header, a non-image says what it looks like."""
    from test_images_fetch import bomb_png

    from zuhyo.construct.filter.chart_resnet import preprocess

    with pytest.raises(ValueError, match="pixels"):
        preprocess(bomb_png(20_000, 20_000))
    with pytest.raises(ValueError, match="cannot decode the image: looks like an HTML page"):
        preprocess(b"<!DOCTYPE html><html><body>404</body></html>")
