"""The `hf:<path>` embedder on tiny randomly initialised SigLIP / CLIP models saved locally (no download)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import run_cli_json
from PIL import Image, ImageDraw

from zuhyo.analysis.diversity import exact_pairwise_distance
from zuhyo.analysis.embedders import EmbedderOptions, build_embedder, decode_rgb
from zuhyo.errors import ModelError


def _chart(seed: int, size: tuple[int, int] = (80, 56)) -> Image.Image:
    rng = np.random.default_rng(seed)
    im = Image.new("RGB", size, "white")
    draw = ImageDraw.Draw(im)
    for k in range(4):
        h = int(rng.integers(4, size[1] - 2))
        draw.rectangle([6 + 18 * k, size[1] - h, 18 + 18 * k, size[1] - 1],
                       fill=tuple(int(c) for c in rng.integers(0, 255, 3)))
    return im


def test_importing_analysis_does_not_import_torch() -> None:
    code = ("import sys, zuhyo.analysis, zuhyo.analysis.embedders, zuhyo.cli.analysis; "
            "print(sorted(m for m in ('torch', 'transformers') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_hf_embedder_errors_are_clear(tmp_path: Path) -> None:
    with pytest.raises(ModelError, match="needs a local folder"):
        build_embedder("hf:")
    pytest.importorskip("torch", reason="torch not installed")
    pytest.importorskip("transformers", reason="transformers not installed")
    with pytest.raises(ModelError, match="not a folder"):
        build_embedder(f"hf:{tmp_path / 'missing'}")
    (tmp_path / "empty").mkdir()
    with pytest.raises(ModelError, match="cannot load a vision model"):
        build_embedder(f"hf:{tmp_path / 'empty'}")


@pytest.fixture(scope="module")
def siglip_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    torch = pytest.importorskip("torch", reason="torch not installed")
    transformers = pytest.importorskip("transformers", reason="transformers not installed")
    torch.manual_seed(0)
    cfg = transformers.SiglipVisionConfig(hidden_size=48, intermediate_size=96, num_hidden_layers=2,
                                          num_attention_heads=4, image_size=32, patch_size=8)
    path = tmp_path_factory.mktemp("siglip")
    transformers.SiglipVisionModel(cfg).save_pretrained(path)
    transformers.SiglipImageProcessorPil(size={"height": 32, "width": 32}).save_pretrained(path)
    return path


@pytest.fixture(scope="module")
def clip_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    torch = pytest.importorskip("torch", reason="torch not installed")
    transformers = pytest.importorskip("transformers", reason="transformers not installed")
    torch.manual_seed(1)
    cfg = transformers.CLIPConfig(
        text_config={"hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 1, "num_attention_heads": 2,
                     "vocab_size": 99, "max_position_embeddings": 16},
        vision_config={"hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 1, "num_attention_heads": 2,
                       "image_size": 48, "patch_size": 16},
        projection_dim=24)
    path = tmp_path_factory.mktemp("clip")
    transformers.CLIPModel(cfg).save_pretrained(path)
    transformers.CLIPImageProcessorPil(size={"shortest_edge": 48}, crop_size={"height": 48, "width": 48}
                                       ).save_pretrained(path)
    return path


@pytest.mark.hf
def test_siglip_vision_tower_pooled_normalised_and_batched(siglip_dir: Path) -> None:
    import torch
    from transformers import SiglipImageProcessorPil, SiglipVisionModel

    images = [_chart(i) for i in range(5)]
    emb = build_embedder(f"hf:{siglip_dir}", EmbedderOptions(batch_size=2))
    vecs = emb.embed(images)
    assert vecs.shape == (5, 48) and np.allclose(np.linalg.norm(vecs, axis=1), 1.0, atol=1e-5)
    model = SiglipVisionModel.from_pretrained(siglip_dir).eval()
    inputs = SiglipImageProcessorPil.from_pretrained(siglip_dir)(images=images, return_tensors="pt")
    with torch.no_grad():
        ref = torch.nn.functional.normalize(model(**inputs).pooler_output, dim=-1).numpy()
    assert np.allclose(vecs, ref, atol=1e-5)
    # Batching does not change a vector.
    assert np.allclose(build_embedder(f"hf:{siglip_dir}", EmbedderOptions(batch_size=16)).embed(images), vecs,
                       atol=1e-5)
    # The same picture twice is at distance 0; different charts are not.
    same = emb.embed([images[0], images[0].copy()])
    assert exact_pairwise_distance(same).mean_distance == pytest.approx(0.0, abs=1e-6)
    assert exact_pairwise_distance(vecs).min_distance > 1e-6


@pytest.mark.hf
def test_clip_full_model_uses_projected_image_features(clip_dir: Path) -> None:
    import torch
    from transformers import CLIPImageProcessorPil, CLIPModel

    images = [_chart(10 + i) for i in range(3)]
    vecs = build_embedder(f"hf:{clip_dir}").embed(images)
    assert vecs.shape == (3, 24)  # projection_dim, not the vision hidden size
    model = CLIPModel.from_pretrained(clip_dir).eval()
    inputs = CLIPImageProcessorPil.from_pretrained(clip_dir)(images=images, return_tensors="pt")
    with torch.no_grad():
        out = model.get_image_features(**inputs)
        feats = out if isinstance(out, torch.Tensor) else out.pooler_output
    assert np.allclose(vecs, torch.nn.functional.normalize(feats, dim=-1).numpy(), atol=1e-5)


@pytest.mark.hf
def test_cli_diversity_with_hf_embedder(siglip_dir: Path, tmp_path: Path) -> None:
    rows = []
    for i in range(6):
        path = tmp_path / "img" / f"{i}.png"
        path.parent.mkdir(exist_ok=True)
        _chart(100 + i).save(path)
        rows.append({"id": f"s{i}", "benchmark": "hfdiv", "question": "?", "answers": ["1"],
                     "image": {"path": f"img/{i}.png"}})
    bench = tmp_path / "b.jsonl"
    bench.write_text("".join(json.dumps(r) + "\n" for r in rows))
    doc = run_cli_json("analyze", "diversity", "local", "--path", str(bench), "--embedder", f"hf:{siglip_dir}",
                       "--batch-size", "4")
    assert doc["embedder"] == f"hf:{siglip_dir}" and doc["images"] == 6
    images = [decode_rgb((tmp_path / "img" / f"{i}.png").read_bytes()) for i in range(6)]
    expected = exact_pairwise_distance(build_embedder(f"hf:{siglip_dir}").embed(images))
    assert doc["diversity"]["method"] == "exact" and doc["diversity"]["pairs"] == 15
    assert doc["diversity"]["mean_distance"] == pytest.approx(expected.mean_distance, abs=1e-5)
