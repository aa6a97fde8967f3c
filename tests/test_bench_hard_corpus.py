"""bench/hard_corpus.py's slots (issue 22): with ``fixed`` slots every seed has the same kind meet the same
transform at the same item; ``mixed`` slots pair kinds with transforms by the seed, in ways the fixed ones never
do, with every kind meeting as many transforms."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_construct_filter import bench_module

pytest.importorskip("matplotlib", reason="the generator draws with matplotlib")


def _combos(seed: int, slots: str, n: int = 1000) -> dict[int, tuple[str, str]]:
    """Each copy's (kind, transform) by its item."""
    corpus = bench_module("hard_corpus")
    kinds = corpus.kinds_for("all")
    kind_shift, transform_shift = corpus.slot_shifts(seed, slots, kinds)
    return {i: (corpus.kind_of(corpus.original_of(i), kinds, kind_shift), corpus.transform_of(i, transform_shift))
            for i in range(n) if corpus.role_of(i) == "copy"}


def _spread(combos: dict[int, tuple[str, str]]) -> list[int]:
    """How many transforms each kind meets, sorted."""
    return sorted(len({t for k, t in combos.values() if k == kind}) for kind in {k for k, _ in combos.values()})


def test_fixed_slots_are_the_same_in_every_seed_and_mixed_ones_are_not() -> None:
    fixed = _combos(0, "fixed")
    assert all(_combos(seed, "fixed") == fixed for seed in (1, 23, 31))
    assert fixed[135] == ("table", "rerender_size")  # the table drawn again at another size of every fixed seed
    seen = set(fixed.values())
    for seed in (32, 33, 34):
        mixed = _combos(seed, "mixed")
        assert mixed != fixed and mixed.keys() == fixed.keys()
        assert len(set(mixed.values()) - seen) >= 40  # of 150 copies' kind and transform, pairs no fixed seed has
        # every transform is used, and the kinds meet as many transforms as with fixed slots (3 to 12 in 1,000)
        assert {t for _, t in mixed.values()} == set(bench_module("hard_corpus").TRANSFORMS)
        assert _spread(mixed) == _spread(fixed)
    assert _combos(32, "mixed") == _combos(32, "mixed")  # drawn from the seed alone
    assert _combos(32, "mixed") != _combos(33, "mixed")


def test_a_folder_of_one_slots_is_not_completed_with_the_other(tmp_path: Path) -> None:
    corpus = bench_module("hard_corpus")
    corpus.build_corpus(tmp_path, 0, 5, "all", workers=1, slots="mixed")
    with pytest.raises(SystemExit, match="other slots"):
        corpus.build_corpus(tmp_path, 0, 5, "all", workers=1)
    with pytest.raises(ValueError, match="unknown slots"):
        corpus.slot_shifts(5, "shuffled", corpus.kinds_for("all"))
