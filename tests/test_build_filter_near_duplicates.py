"""The near-duplicate candidates and verification on real matplotlib charts from bench/chart_corpus.py: a copy
cropped by a few per cent is its original's nearest candidate among charts of its kind and style; two pies of
one grey palette whose wedges moved a few degrees are told apart; the vectorised, pre-checked scoring agrees
with scoring each pair alone."""

from __future__ import annotations

import numpy as np
import pytest
from test_build_filter import chart_corpus

pytest.importorskip("matplotlib", reason="the charts are rendered with matplotlib")
pytest.importorskip("scipy", reason="the [build] extra is needed")

from zuhyo.build.filter.near_duplicates import (  # noqa: E402
    DEFAULT_MIN_SCORE,
    MAX_SOLID,
    candidate_pairs,
    descriptors,
    image_features,
    score_pairs,
    thumbs_array,
    verified_pairs,
    verify_pair,
)


def _thumbs(images: list[bytes]) -> np.ndarray:
    return thumbs_array([image_features(data) for data in images])


def test_a_cropped_copy_is_the_nearest_candidate_among_charts_of_its_kind_and_style() -> None:
    cc = chart_corpus()
    # Corpus item 1399 copies 1389 (a step chart, default style; cropped, resized, JPEG); the others are step
    # charts of the same style with other data. The whole-image descriptor alone ranked the original below them.
    assert cc.original_of(1399) == 1389
    look_alikes = [i for i in range(9, 2000, 60)][:12]
    assert {cc.kind_style(i) for i in [1389, *look_alikes]} == {("step", "default")}
    thumbs = _thumbs([cc.render_chart(1389), cc.near_duplicate(1389, seed=1399),
                      *(cc.render_chart(i) for i in look_alikes)])
    pairs = candidate_pairs(descriptors(thumbs), neighbours=1)
    assert [0, 1] in pairs.tolist()
    assert len(pairs) <= len(thumbs)  # one nearest per image (some shared)


def test_pies_of_one_grey_palette_with_moved_wedges_are_not_duplicates_but_the_copy_is() -> None:
    cc = chart_corpus()
    # Items 294 and 1314: grayscale pies whose wedge boundaries differ by a few degrees between two close greys
    # (they scored 0.99 when only the share of differing ink counted); 299 is a planted copy of 294.
    assert cc.kind_style(294) == cc.kind_style(1314) == ("pie", "grayscale")
    thumbs = _thumbs([cc.render_chart(294), cc.render_chart(1314), cc.near_duplicate(294, seed=299)])
    assert verify_pair(thumbs[0], thumbs[1]) < DEFAULT_MIN_SCORE
    assert verify_pair(thumbs[0], thumbs[2]) >= DEFAULT_MIN_SCORE
    scores, solids = score_pairs(thumbs, np.array([[0, 1], [0, 2], [1, 2]]), precheck=None)
    assert solids[1] <= MAX_SOLID < solids[0]
    desc = descriptors(thumbs)
    found = verified_pairs(thumbs, desc, np.array([[0, 1], [0, 2], [1, 2]]))
    assert [(p.i, p.j) for p in found] == [(0, 2)]
    assert found[0].score >= DEFAULT_MIN_SCORE and found[0].solid <= MAX_SOLID and found[0].descriptor_distance > 0


def test_batched_prechecked_scores_agree_with_each_pair_alone() -> None:
    cc = chart_corpus()
    items = [0, 4, 8, 60, 64, 68]
    thumbs = _thumbs([*(cc.render_chart(i) for i in items), cc.near_duplicate(0, seed=101),
                      cc.near_duplicate(64, seed=303)])
    pairs = np.array([(i, j) for i in range(len(thumbs)) for j in range(i + 1, len(thumbs))])
    alone = np.array([verify_pair(thumbs[i], thumbs[j]) for i, j in pairs])
    batched, _ = score_pairs(thumbs, pairs, precheck=None)
    assert np.allclose(batched, alone, atol=1e-9)
    prechecked, _ = score_pairs(thumbs, pairs)
    passed = {tuple(p) for p, s in zip(pairs.tolist(), prechecked, strict=True) if s >= DEFAULT_MIN_SCORE}
    assert passed == {tuple(p) for p, s in zip(pairs.tolist(), alone, strict=True) if s >= DEFAULT_MIN_SCORE}
    assert passed == {(0, 6), (4, 7)}
    # Through the executor, reading the driver's memory-mapped thumbnails or sent them with each chunk of pairs
    # (a plain array, as for Ray): the same pairs.
    assert isinstance(thumbs, np.memmap)
    desc = descriptors(thumbs)
    for source in (thumbs, np.array(thumbs)):
        found = verified_pairs(source, desc, pairs, executor="local", chunk=2)
        assert {(p.i, p.j) for p in found} == passed


def test_the_thumbnails_memory_map_is_removed_with_the_array() -> None:
    import gc
    from pathlib import Path

    cc = chart_corpus()
    thumbs = _thumbs([cc.render_chart(1), cc.render_chart(2)])
    path = Path(str(thumbs.filename))  # type: ignore[attr-defined]
    assert path.is_file() and np.load(path, mmap_mode="r").shape == (2, 128, 128, 3)
    del thumbs
    gc.collect()
    assert not path.exists()
    assert thumbs_array([]).shape == (0, 128, 128, 3)
