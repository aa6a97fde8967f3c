"""Unit tests of the report statistics: bootstrap CI, McNemar's exact test, paired bootstrap, paired comparison."""

from __future__ import annotations

import math

import numpy as np
import pytest

from zuhyo.report.stats import bootstrap_ci, compare_paired, is_binary, mcnemar_exact, paired_bootstrap_p


def test_bootstrap_ci_contains_mean_and_is_deterministic():
    rng = np.random.default_rng(1)
    scores = (rng.random(200) < 0.62).astype(float).tolist()
    a = bootstrap_ci(scores, n_resamples=5000, seed=7)
    b = bootstrap_ci(scores, n_resamples=5000, seed=7)
    c = bootstrap_ci(scores, n_resamples=5000, seed=8)
    assert a == b
    assert a is not None and c is not None and (a.low, a.high) != (c.low, c.high)
    assert a.low < a.mean < a.high
    assert a.mean == pytest.approx(float(np.mean(scores)))
    # Normal approximation of a binomial proportion's 95 % CI half-width: 1.96·sqrt(p(1-p)/n).
    half = 1.96 * math.sqrt(a.mean * (1 - a.mean) / len(scores))
    assert (a.high - a.low) / 2 == pytest.approx(half, rel=0.1)


def test_bootstrap_ci_edge_cases():
    assert bootstrap_ci([]) is None
    one = bootstrap_ci([0.5], n_resamples=100)
    assert one is not None and one.low == one.high == 0.5
    with pytest.raises(ValueError):
        bootstrap_ci([1.0], n_resamples=0)


def test_mcnemar_exact_matches_hand_computed_binomial():
    # A right on 6 items where B is wrong, B right on 1 where A is wrong, 3 ties.
    a = [1, 1, 1, 1, 1, 1, 0, 1, 0, 1]
    b = [0, 0, 0, 0, 0, 0, 1, 1, 0, 1]
    p, only_a, only_b = mcnemar_exact(a, b)
    assert (only_a, only_b) == (6, 1)
    # Two-sided exact p = 2 · P(X ≤ 1), X ~ Bin(7, 0.5) = 2 · (1 + 7) / 128 = 0.125.
    assert p == pytest.approx(0.125, abs=1e-12)


def test_mcnemar_no_discordant_pairs_is_p_one():
    assert mcnemar_exact([1, 0, 1], [1, 0, 1]) == (1.0, 0, 0)
    with pytest.raises(ValueError):
        mcnemar_exact([1], [1, 0])


def test_paired_bootstrap_detects_a_real_difference_and_not_a_null_one():
    rng = np.random.default_rng(3)
    base = rng.random(300)
    better = np.clip(base + 0.1, 0, 1)
    assert paired_bootstrap_p(better, base, n_resamples=2000, seed=0) < 0.01
    noise = np.clip(base + rng.normal(0, 0.05, 300), 0, 1)
    noise = noise - noise.mean() + base.mean()  # same mean: no real difference
    assert paired_bootstrap_p(noise, base, n_resamples=2000, seed=0) > 0.3
    assert paired_bootstrap_p([0.5, 0.2], [0.5, 0.2]) == 1.0


def test_compare_paired_uses_intersection_and_chooses_the_test():
    a = {"x1": 1.0, "x2": 1.0, "x3": 0.0, "only_a": 1.0}
    b = {"x1": 0.0, "x2": 1.0, "x3": 0.0, "only_b": 0.0}
    cmp = compare_paired("A", a, "B", b, n_resamples=500)
    assert (cmp.n_common, cmp.only_in_a, cmp.only_in_b) == (3, 1, 1) and cmp.mismatched
    assert cmp.test == "mcnemar_exact" and cmp.p_value == pytest.approx(1.0)
    assert cmp.mean_a == pytest.approx(2 / 3) and cmp.mean_b == pytest.approx(1 / 3)
    graded = compare_paired("A", {"x1": 0.5, "x2": 1.0}, "B", {"x1": 0.0, "x2": 1.0}, n_resamples=500)
    assert graded.test == "paired_bootstrap" and 0 < graded.p_value <= 1
    none = compare_paired("A", {"x": 1.0}, "B", {"y": 1.0})
    assert none.test == "none" and none.p_value is None and none.n_common == 0
    assert is_binary([0.0, 1.0, 1]) and not is_binary([0.0, 0.5])


def test_bundled_cjk_font_is_used_when_none_is_installed(monkeypatch, tmp_path):
    """A fresh machine without fonts-ipaexfont still gets Japanese glyphs (the packaged IPAex Gothic)."""
    from matplotlib import font_manager

    from zuhyo.report import fonts

    monkeypatch.setattr(fonts, "IPAEX_GOTHIC", tmp_path / "absent.ttf")
    monkeypatch.setattr(font_manager, "findSystemFonts", lambda *a, **k: [])
    assert fonts.find_cjk_font() == fonts.BUNDLED_IPAEX_GOTHIC
    assert fonts._covers(fonts.BUNDLED_IPAEX_GOTHIC)
