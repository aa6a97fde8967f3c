"""Visual diversity: exact blockwise mean vs brute force, the sampled estimate's error bounds, the phash embedder."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from conftest import run_cli, run_cli_json
from PIL import Image, ImageDraw

from zuhyo.analysis.diversity import exact_pairwise_distance, mean_pairwise_cosine_distance, sampled_pairwise_distance
from zuhyo.analysis.embedders import PHashEmbedder, build_embedder, decode_rgb, embed_images
from zuhyo.errors import ModelError


def _brute_force(x: np.ndarray) -> np.ndarray:
    """All pairwise cosine distances i < j, the obvious way."""
    out = []
    for i in range(len(x)):
        for j in range(i + 1, len(x)):
            cos = float(x[i] @ x[j]) / (np.linalg.norm(x[i]) * np.linalg.norm(x[j]))
            out.append(1.0 - cos)
    return np.array(out)


@pytest.mark.parametrize("block", [1, 7, 64, 1000])
def test_exact_matches_brute_force(block: int) -> None:
    rng = np.random.default_rng(3)
    x = rng.normal(size=(53, 12)) + 0.5  # not unit length, not centred
    ref = _brute_force(x)
    r = exact_pairwise_distance(x, block=block)
    assert r.method == "exact" and r.n == 53 and r.pairs == 53 * 52 // 2 == ref.size
    assert r.mean_distance == pytest.approx(ref.mean(), abs=1e-12)
    assert r.std_distance == pytest.approx(ref.std(), abs=1e-9)
    assert r.min_distance == pytest.approx(ref.min(), abs=1e-12)
    assert r.max_distance == pytest.approx(ref.max(), abs=1e-12)


def test_exact_agrees_with_closed_form_identity() -> None:
    # For unit rows, sum_{i != j} cos = ||sum_i x_i||^2 - n: an independent check at a larger n.
    rng = np.random.default_rng(11)
    x = rng.normal(size=(1500, 32))
    u = x / np.linalg.norm(x, axis=1, keepdims=True)
    n = len(u)
    mean_cos = (np.square(u.sum(axis=0)).sum() - n) / (n * (n - 1))
    assert exact_pairwise_distance(x, block=256).mean_distance == pytest.approx(1 - mean_cos, abs=1e-10)


def test_identical_and_opposite_vectors() -> None:
    same = np.tile([[1.0, 2.0, 3.0]], (5, 1))
    r = exact_pairwise_distance(same)
    assert r.mean_distance == pytest.approx(0.0, abs=1e-12) and r.max_distance == pytest.approx(0.0, abs=1e-12)
    opposite = np.array([[1.0, 0.0], [-1.0, 0.0]])
    assert exact_pairwise_distance(opposite).mean_distance == pytest.approx(2.0)


def test_sampled_ci_covers_exact_value() -> None:
    rng = np.random.default_rng(5)
    # Clustered vectors so pairwise distances vary a lot (a harder case for the estimate than isotropic noise).
    centres = rng.normal(size=(6, 16))
    x = centres[rng.integers(0, 6, size=2000)] + 0.4 * rng.normal(size=(2000, 16))
    exact = exact_pairwise_distance(x).mean_distance
    covered = 0
    for seed in range(20):
        r = sampled_pairwise_distance(x, n_pairs=20_000, seed=seed)
        assert r.method == "sampled" and r.sampled_pairs == 20_000 and r.seed == seed
        assert r.ci95_low < r.mean_distance < r.ci95_high
        assert r.ci95_high - r.ci95_low == pytest.approx(2 * 1.959963984540054 * r.standard_error)
        assert abs(r.mean_distance - exact) <= r.hoeffding95_halfwidth  # the distribution-free bound
        covered += r.ci95_low <= exact <= r.ci95_high
    assert covered >= 17  # 95 % nominal coverage; P(fewer than 17 of 20) < 2 % for a correct interval
    fixed = sampled_pairwise_distance(x, n_pairs=20_000, seed=0)
    assert fixed.ci95_low <= exact <= fixed.ci95_high
    assert fixed == sampled_pairwise_distance(x, n_pairs=20_000, seed=0)  # reproducible


def test_sampled_pairs_are_uniform_over_distinct_pairs() -> None:
    # Three points: distances d(0,1)=0, d(0,2)=d(1,2)=1. A uniform pair sampler gives mean 2/3; a sampler that
    # allowed i == j or favoured an index would not.
    x = np.array([[1.0, 0.0], [1.0, 0.0], [0.0, 1.0]])
    r = sampled_pairwise_distance(x, n_pairs=300_000, seed=1)
    assert r.mean_distance == pytest.approx(2 / 3, abs=4 * r.standard_error)


def test_switch_over_threshold() -> None:
    x = np.random.default_rng(0).normal(size=(50, 8))
    assert mean_pairwise_cosine_distance(x, exact_max_n=50).method == "exact"
    r = mean_pairwise_cosine_distance(x, exact_max_n=49, n_pairs=5000, seed=2)
    assert r.method == "sampled" and r.sampled_pairs == 5000 and r.min_distance is None


def test_bad_embeddings_name_the_row() -> None:
    x = np.ones((4, 3))
    x[2] = 0
    with pytest.raises(ValueError, match="row 2 is all zeros"):
        exact_pairwise_distance(x)
    x[2] = np.nan
    with pytest.raises(ValueError, match="row 2 has NaN"):
        sampled_pairwise_distance(x)
    with pytest.raises(ValueError, match="at least 2 images"):
        exact_pairwise_distance(np.ones((1, 3)))


def _chart(path: Path, seed: int, size: tuple[int, int] = (96, 64)) -> None:
    """A little bar chart whose bar heights come from ``seed``."""
    rng = np.random.default_rng(seed)
    im = Image.new("RGB", size, "white")
    draw = ImageDraw.Draw(im)
    for k in range(5):
        h = int(rng.integers(5, size[1] - 4))
        draw.rectangle([8 + 17 * k, size[1] - h, 20 + 17 * k, size[1] - 1], fill=(30, 60 + 30 * k, 160))
    path.parent.mkdir(parents=True, exist_ok=True)
    im.save(path)


def test_phash_embedder_distance_is_normalised_hamming(tmp_path: Path) -> None:
    import imagehash

    _chart(tmp_path / "a.png", 1)
    _chart(tmp_path / "b.png", 2)
    ims = [decode_rgb((tmp_path / n).read_bytes()) for n in ("a.png", "b.png")]
    vecs = PHashEmbedder(16).embed(ims)
    assert vecs.shape == (2, 256) and np.allclose(np.linalg.norm(vecs, axis=1), 1.0)
    hamming = imagehash.phash(ims[0], hash_size=16) - imagehash.phash(ims[1], hash_size=16)
    assert exact_pairwise_distance(vecs).mean_distance == pytest.approx(2 * hamming / 256)


def test_embed_images_reports_undecodable(tmp_path: Path) -> None:
    _chart(tmp_path / "a.png", 1)
    items = [("bench/ok", (tmp_path / "a.png").read_bytes()), ("bench/bad", b"<html>not an image</html>")]
    res = embed_images(build_embedder("phash:8"), items)
    assert res.ids == ["bench/ok"] and res.matrix.shape == (1, 64)
    assert len(res.errors) == 1 and res.errors[0].startswith("bench/bad: cannot decode")
    with pytest.raises(ModelError, match="hash size"):
        build_embedder("phash:x")
    with pytest.raises(Exception, match="unknown embedder 'nope'"):
        build_embedder("nope:1")


def _bench(tmp_path: Path, n: int, *, duplicate: bool = False, broken: bool = False) -> Path:
    rows = []
    for i in range(n):
        _chart(tmp_path / "img" / f"{i}.png", i)
        rows.append({"id": f"s{i}", "benchmark": "div", "question": "?", "answers": ["1"],
                     "image": {"path": f"img/{i}.png"}})
    if duplicate:  # a second question on chart 0 and a byte-identical copy under another name
        (tmp_path / "img" / "copy.png").write_bytes((tmp_path / "img" / "0.png").read_bytes())
        rows.append({"id": "dup1", "benchmark": "div", "question": "?", "answers": ["1"],
                     "image": {"path": "img/0.png"}})
        rows.append({"id": "dup2", "benchmark": "div", "question": "?", "answers": ["1"],
                     "image": {"path": "img/copy.png"}})
    if broken:
        (tmp_path / "img" / "broken.png").write_bytes(b"\x89PNG\r\n\x1a\ntruncated")
        rows.append({"id": "broken", "benchmark": "div", "question": "?", "answers": ["1"],
                     "image": {"path": "img/broken.png"}})
        rows.append({"id": "gone", "benchmark": "div", "question": "?", "answers": ["1"],
                     "image": {"path": "img/missing.png"}})
    path = tmp_path / "div.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_cli_diversity_phash_exact_and_sampled(tmp_path: Path) -> None:
    bench = _bench(tmp_path, 12, duplicate=True, broken=True)
    doc = run_cli_json("analyze", "diversity", "local", "--path", str(bench), "--embedder", "phash")
    assert doc["images"] == 12 and doc["questions"] == 16  # duplicates counted once; 2 unusable images skipped
    assert doc["images_skipped"] == 2
    assert any("div/broken" in m for m in doc["skipped_examples"])
    assert any("div/gone" in m for m in doc["skipped_examples"])
    d = doc["diversity"]
    assert d["method"] == "exact" and d["pairs"] == 66 and 0 < d["mean_distance"] < 2
    sampled = run_cli_json("analyze", "diversity", "local", "--path", str(bench), "--exact-max-n", "5",
                           "--pairs", "50000", "--seed", "4")["diversity"]
    assert sampled["method"] == "sampled" and sampled["sampled_pairs"] == 50000
    assert sampled["ci95_low"] - 1e-9 <= d["mean_distance"] <= sampled["ci95_high"] + 1e-9
    proc = run_cli("analyze", "diversity", "local", "--path", str(bench), "--strict", check=False)
    assert proc.returncode != 0 and "could not be used" in proc.stderr
    human = run_cli("analyze", "diversity", "local", "--path", str(bench))
    assert "mean pairwise cosine distance (exact over 66 pairs)" in human.stdout  # results: stdout


def test_cli_diversity_needs_two_images(tmp_path: Path) -> None:
    bench = _bench(tmp_path, 1)
    proc = run_cli("analyze", "diversity", "local", "--path", str(bench), "--json", check=False)
    assert proc.returncode == 1 and json.loads(proc.stdout)["diversity"] is None


def test_closed_form_mean_equals_exact_pairwise_mean():
    import numpy as np

    from zuhyo.analysis.diversity import (
        closed_form_mean_distance,
        exact_pairwise_distance,
        normalise_rows,
        sampled_pairwise_distance,
    )

    rng = np.random.default_rng(3)
    emb = rng.normal(size=(300, 24)) + 0.5
    exact = exact_pairwise_distance(emb).mean_distance
    assert closed_form_mean_distance(normalise_rows(emb)) == pytest.approx(exact, abs=1e-9)
    sampled = sampled_pairwise_distance(emb, n_pairs=5000, seed=1)
    assert sampled.mean_distance_closed_form == pytest.approx(exact, abs=1e-9)
