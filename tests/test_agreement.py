"""Krippendorff's α from the coincidence matrix and its bootstrap confidence interval (Hayes & Krippendorff 2007),
as functions and through `zuhyo agreement` in a subprocess."""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import pytest
from conftest import run_cli, run_cli_json

from zuhyo import agreement as agr
from zuhyo.agreement import ALPHA_LEVELS, alpha_ci, alpha_summary, coincidence_alpha, krippendorff_alpha

#: Krippendorff's reliability-data example (4 coders × 12 units; the "C data" of R's irr kripp.alpha docs):
#: α = 0.743 nominal, 0.815 ordinal, 0.849 interval, 0.797 ratio (Krippendorff, Computing Krippendorff's
#: alpha-reliability, 2011).
C_DATA = [[1, 2, 3, 3, 2, 1, 4, 1, 2, None, None, None],
          [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, None, 3],
          [None, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, None],
          [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, None]]
C_ALPHAS = {"nominal": 0.743, "ordinal": 0.815, "interval": 0.849, "ratio": 0.797}


def noisy_scale(units: int, coders: int = 4, seed: int = 0, missing: float = 0.1) -> list[list[float | None]]:
    """A 1-5 rating of each unit by each coder: a true value ± 1 now and then, some ratings missing."""
    rng = np.random.default_rng(seed)
    truth = rng.integers(1, 6, units)
    rows = np.clip(truth + rng.choice([-1, 0, 0, 0, 1], size=(coders, units)), 1, 5).astype(float)
    return [[None if rng.random() < missing else float(v) for v in row] for row in rows]


def as_csv(path: Path, matrix: list[list[float | None]]) -> Path:
    path.write_text("\n".join(",".join("" if v is None else f"{v:g}" for v in row) for row in matrix) + "\n",
                    encoding="utf-8")
    return path


def test_alpha_from_the_coincidence_matrix_equals_the_krippendorff_package():
    rng = np.random.default_rng(7)
    checked = 0
    for _ in range(200):
        coders, units, values = rng.integers(2, 7), rng.integers(1, 30), rng.integers(1, 8)
        scale, offset = rng.choice([1.0, 0.5, 3.0]), rng.choice([0.0, -2.0, 1.0, 1e6])
        data = rng.integers(0, values, (coders, units)) * scale + offset
        data[rng.random(data.shape) < rng.random() * 0.6] = np.nan
        matrix = [[None if np.isnan(v) else float(v) for v in row] for row in data]
        for level in ALPHA_LEVELS:
            ours, theirs = coincidence_alpha(matrix, level), krippendorff_alpha(matrix, level)
            assert (ours is None) == (theirs is None), (level, matrix)
            if ours is not None:
                assert ours == pytest.approx(theirs, abs=1e-9), (level, matrix)
                checked += 1
    assert checked > 400


def test_krippendorffs_own_example():
    for level, expected in C_ALPHAS.items():
        summary = alpha_summary(C_DATA, level, n_boot=500, seed=0)
        assert round(summary["alpha"], 3) == expected and round(coincidence_alpha(C_DATA, level), 3) == expected
        assert (summary["level"], summary["coders"], summary["units"]) == (level, 4, 12)
        lo, hi = summary["ci95"]
        assert lo < summary["alpha"] < hi <= 1


def test_the_interval_is_reproducible_for_a_seed():
    matrix = noisy_scale(200)
    for level in ALPHA_LEVELS:
        first = alpha_ci(matrix, level, n_boot=1000, seed=3)
        assert first == alpha_ci(matrix, level, n_boot=1000, seed=3)
        other = alpha_ci(matrix, level, n_boot=1000, seed=4)
        assert first is not None and other is not None and other != first
        assert other == pytest.approx(first, abs=0.02)


def test_the_interval_contains_alpha_and_narrows_as_units_grow():
    widths = []
    for units in (30, 300, 3000):
        matrix = noisy_scale(units, seed=units)
        for level in ALPHA_LEVELS:
            alpha, ci = coincidence_alpha(matrix, level), alpha_ci(matrix, level)
            assert alpha is not None and ci is not None and ci[0] < alpha < ci[1], (units, level, alpha, ci)
        lo, hi = alpha_ci(matrix, "interval")  # type: ignore[misc]
        widths.append(hi - lo)
    assert widths[0] > 2 * widths[1] > 4 * widths[2], widths


def test_perfect_agreement_gives_one_and_undefined_alpha_gives_none():
    perfect = [[1, 2, 3, None, 2], [1, 2, 3, 4, 2], [1, None, 3, 4, None]]
    for level in ALPHA_LEVELS:
        assert alpha_ci(perfect, level) == (1.0, 1.0)
        assert alpha_summary(perfect, level, n_boot=100)["ci95"] == [1.0, 1.0]
    for undefined in ([[1, 2, 3]], [[1, None], [None, 2]], [[2, 2], [2, 2]], [[1, -1], [1, -1]]):
        level = "ratio" if undefined[0][1] == -1 else "nominal"
        assert alpha_ci(undefined, level) is None  # the last: ratio δ² of 1 and −1 is 0 by convention, D_e = 0
        assert alpha_summary(undefined, level) | {"coders": 0, "units": 0} == {
            "alpha": None, "ci95": None, "level": level, "coders": 0, "units": 0}
    assert alpha_summary(C_DATA, "nominal", n_boot=0)["ci95"] is None
    with pytest.raises(ValueError, match="n_boot must be a positive integer"):
        alpha_ci(C_DATA, "nominal", n_boot=0)
    with pytest.raises(ValueError, match="n_boot must be 0 or a positive integer"):
        alpha_summary(C_DATA, "nominal", n_boot=-1)
    with pytest.raises(ValueError, match="confidence must be between 0 and 1"):
        alpha_ci(C_DATA, "nominal", confidence=95)


def test_the_two_ways_of_drawing_give_the_same_distribution(monkeypatch):
    """Multinomial counts per cell and M single draws by the alias method are the same bootstrap: forced either
    way, the intervals of a large data set agree to well within their own seed-to-seed spread."""
    matrix = noisy_scale(2000, seed=11)
    by_counts = alpha_ci(matrix, "interval", n_boot=4000, seed=1)
    monkeypatch.setattr(agr, "_MULTINOMIAL_DRAWS_PER_CELL", 10**12)
    by_draws = alpha_ci(matrix, "interval", n_boot=4000, seed=1)
    assert by_counts is not None and by_draws is not None and by_counts != by_draws
    assert by_draws == pytest.approx(by_counts, abs=0.003)


def test_continuous_ratings_and_the_speed_of_1000_resamples_on_1000_units():
    """Ratings with thousands of distinct values (where the krippendorff package's dense value counts would need
    ~119 GiB); 1000 resamples of 1000 units in well under a second (bound generous for shared CI machines)."""
    rng = np.random.default_rng(5)
    truth = rng.normal(size=1000)
    continuous = [list(truth + rng.normal(scale=0.5, size=1000)) for _ in range(4)]
    scale = noisy_scale(1000)
    for matrix, level in ((continuous, "interval"), (continuous, "ordinal"), (scale, "ordinal")):
        start = time.perf_counter()
        summary = alpha_summary(matrix, level, n_boot=1000, seed=0)
        assert time.perf_counter() - start < 3.0
        assert summary["ci95"][0] < summary["alpha"] < summary["ci95"][1]
    assert summary["alpha"] == pytest.approx(krippendorff_alpha(scale, "ordinal"), abs=1e-9)


def test_cli_reports_alpha_with_a_reproducible_ci(tmp_path: Path):
    csv_path = as_csv(tmp_path / "c.csv", C_DATA)
    out = run_cli_json("agreement", "--input", str(csv_path), "--level", "interval")
    assert set(out) == {"alpha", "ci95", "level", "coders", "units", "bootstrap", "seed"}
    assert (round(out["alpha"], 3), out["level"], out["coders"], out["units"]) == (0.849, "interval", 4, 12)
    assert (out["bootstrap"], out["seed"]) == (1000, 0)
    assert out["ci95"][0] < out["alpha"] < out["ci95"][1]
    assert run_cli_json("agreement", "--input", str(csv_path), "--level", "interval") == out
    other = run_cli_json("agreement", "--input", str(csv_path), "--level", "interval", "--seed", "1")
    assert other["ci95"] != out["ci95"] and other["ci95"] == pytest.approx(out["ci95"], abs=0.05)
    assert other["alpha"] == out["alpha"] and other["seed"] == 1
    fewer = run_cli_json("agreement", "--input", str(csv_path), "--bootstrap", "200", "--seed", "2")
    assert (fewer["bootstrap"], fewer["seed"], round(fewer["alpha"], 3)) == (200, 2, 0.743)
    none = run_cli_json("agreement", "--input", str(csv_path), "--bootstrap", "0")
    assert none["ci95"] is None and none["bootstrap"] == 0


def test_cli_human_line_and_errors(tmp_path: Path):
    csv_path = as_csv(tmp_path / "c.csv", C_DATA)
    line = run_cli("agreement", "--input", str(csv_path)).stdout.strip()
    lo, hi = alpha_ci(C_DATA, "nominal")  # type: ignore[misc]
    assert line == (f"Krippendorff's alpha (nominal): α = 0.7434 (95 % CI {lo:.2f}–{hi:.2f}, 1000 resamples) — "
                    "4 coders, 12 units")
    plain = run_cli("agreement", "--input", str(csv_path), "--bootstrap", "0").stdout.strip()
    assert plain == "Krippendorff's alpha (nominal): α = 0.7434 — 4 coders, 12 units"
    for args, message in ((["--bootstrap", "-1"], "--bootstrap must be 0 (no interval) or a number of resamples"),
                          (["--seed", "-3"], "--seed must be 0 or more")):
        proc = run_cli("agreement", "--input", str(csv_path), *args, check=False)
        assert proc.returncode == 1 and message in proc.stderr, proc.stderr
    same = as_csv(tmp_path / "same.csv", [[3, 3, None], [3, 3, 3]])
    proc = run_cli("agreement", "--input", str(same), "--level", "interval", "--json", check=False)
    assert proc.returncode == 1 and "alpha is undefined" in proc.stderr and not proc.stdout.strip()
