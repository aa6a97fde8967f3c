"""Gibbs sampling of charts by CCV (DomainCQA §3.1, Algorithm 1): the pure core, the CSV command and the workspace
stage (`zuhyo sample`)."""

from __future__ import annotations

import csv
import statistics
from pathlib import Path

import numpy as np
import pytest
from conftest import run_cli, run_cli_json

from zuhyo.construct.select.sampling import (
    cell_codes,
    gibbs_sample,
    max_attr_diff,
    min_tvd_joint,
    parse_ccv_csv,
    quota_counts,
    sample_stats,
    tvd_joint,
    tvd_score,
    uniform_sample,
)
from zuhyo.errors import DataError
from zuhyo.schema import CCV_ATTRIBUTES
from zuhyo.testing.ccv_pool import TABLE4_COMPLEX, synthetic_ccv_pool

NAMES = [a.name for a in CCV_ATTRIBUTES]


@pytest.fixture(scope="module")
def pool() -> np.ndarray:
    return synthetic_ccv_pool(10_000, 0)


def test_synthetic_pool_has_table4_marginals_and_correlations(pool: np.ndarray):
    assert np.allclose(pool.mean(axis=0), TABLE4_COMPLEX, atol=0.02)
    corr = np.corrcoef(pool.T.astype(float))
    assert corr[8, 9] > 0.2 and corr[1, 2] > 0.2  # Subplot-Type, Color-Legend linked
    assert len(np.unique(cell_codes(pool))) > 300  # a skewed joint over many cells, not a handful


def test_same_seed_same_sample_other_seed_another(pool: np.ndarray):
    a = gibbs_sample(pool, 303, seed=7)
    b = gibbs_sample(pool, 303, seed=7)
    c = gibbs_sample(pool, 303, seed=8)
    assert np.array_equal(a.indices, b.indices) and (a.sweeps, a.replacements) == (b.sweeps, b.replacements)
    assert not np.array_equal(a.indices, c.indices)
    assert len(set(a.indices.tolist())) == 303 and list(a.indices) == sorted(a.indices)
    assert a.stabilized


def test_sample_matches_the_pool_far_better_than_random(pool: np.ndarray):
    floor = min_tvd_joint(pool, 303)
    gibbs, random, start = [], [], []
    for seed in range(5):
        r = gibbs_sample(pool, 303, seed, refine=False)  # Algorithm 1 as printed
        assert r.refine_swaps is None
        gibbs.append(tvd_joint(pool, r.indices))
        random.append(tvd_joint(pool, uniform_sample(len(pool), 303, seed)))
        # Line 3's random start, without the sweeps: what the chain improves on.
        start.append(tvd_joint(pool, gibbs_sample(pool, 303, seed, max_sweeps=0, refine=False).indices))
        assert max_attr_diff(pool, r.indices) < 0.05
        assert tvd_score(pool, r.indices) < 0.06
    # measured: Gibbs ~0.19, random ~0.39, the best any 303-subset can do ~0.18
    assert statistics.median(gibbs) < 0.6 * statistics.median(random)
    assert statistics.median(gibbs) < 0.6 * statistics.median(start)
    assert max(gibbs) < floor + 0.03


def test_refinement_matches_every_view_better_than_random(pool: np.ndarray):
    """Issue 24's targets: largest attribute gap <= 0.015, score-histogram and joint TVD below the median of 100
    uniform random samples; Algorithm 1 alone misses the first (measured ~0.031) on this pool."""
    rnd = [uniform_sample(len(pool), 303, seed) for seed in range(100)]
    random_joint = statistics.median(tvd_joint(pool, i) for i in rnd)
    random_score = statistics.median(tvd_score(pool, i) for i in rnd)
    for seed in range(3):
        paper = gibbs_sample(pool, 303, seed, refine=False)
        r = gibbs_sample(pool, 303, seed)
        assert r.refine_swaps and r.refine_swaps > 0
        assert max_attr_diff(pool, r.indices) <= 0.015 < max_attr_diff(pool, paper.indices)
        assert tvd_score(pool, r.indices) < min(random_score, tvd_score(pool, paper.indices))
        assert tvd_joint(pool, r.indices) < random_joint
        assert len(set(r.indices.tolist())) == 303
    again = gibbs_sample(pool, 303, 0)
    assert np.array_equal(again.indices, gibbs_sample(pool, 303, 0).indices)  # still one sample per seed


def test_refinement_keeps_quotas(pool: np.ndarray):
    groups = np.random.default_rng(3).choice(["gov", "arxiv", "press"], p=[0.6, 0.3, 0.1], size=len(pool)).tolist()
    r = gibbs_sample(pool, 303, 5, groups=groups, quotas={"gov": 101, "arxiv": 101, "press": 101})
    assert sorted(groups[i] for i in r.indices) == ["arxiv"] * 101 + ["gov"] * 101 + ["press"] * 101
    assert max_attr_diff(pool, r.indices) <= 0.015


def test_statistics_by_hand():
    pool = np.zeros((4, 10), dtype=np.uint8)
    pool[1, 0] = 1          # score 1
    pool[2, :3] = 1         # score 3
    pool[3, :3] = 1         # score 3, same cell as row 2
    idx = np.array([2, 3])
    # pool cells: {0: 1/4, 1: 1/4, 7: 2/4}; sample: {7: 1} -> TVD = 0.5 * (1/4 + 1/4 + 1/2)
    assert tvd_joint(pool, idx) == pytest.approx(0.5)
    assert tvd_score(pool, idx) == pytest.approx(0.5)
    assert max_attr_diff(pool, idx) == pytest.approx(1 - 0.5)  # Color, Legend: half the pool, all the sample
    stats = sample_stats(pool, idx, seed=1)
    assert list(stats) == ["n", "pool", "tvd_joint", "tvd_score", "max_attr_diff", "random_tvd_joint"]
    assert (stats["n"], stats["pool"]) == (2, 4)
    assert min_tvd_joint(pool, 2) == pytest.approx(0.25)  # best: one chart of cell 7 and one of cell 0 or 1


def test_quota_counts_proportional_and_explicit():
    groups = ["a"] * 5 + ["b"] * 3 + ["c"] * 2
    # exact shares 2.0, 1.2, 0.8 -> floors 2, 1, 0 -> the one left goes to the largest remainder (c)
    assert quota_counts(groups, 4) == {"a": 2, "b": 1, "c": 1}
    assert quota_counts(groups, 4, {"b": 3, "c": 1}) == {"a": 0, "b": 3, "c": 1}
    with pytest.raises(DataError, match="sum to 3, expected n = 4"):
        quota_counts(groups, 4, {"a": 3})
    with pytest.raises(DataError, match="group 'c' is 3, but the group has 2"):
        quota_counts(groups, 4, {"a": 1, "c": 3})
    with pytest.raises(DataError, match="'z' has no chart"):
        quota_counts(groups, 4, {"z": 4})


def test_quotas_honoured_exactly(pool: np.ndarray):
    rng = np.random.default_rng(3)
    groups = rng.choice(["gov", "arxiv", "press"], p=[0.6, 0.3, 0.1], size=len(pool)).tolist()
    want = quota_counts(groups, 303)
    r = gibbs_sample(pool, 303, 5, groups=groups)
    got: dict[str, int] = {}
    for i in r.indices.tolist():
        got[groups[i]] = got.get(groups[i], 0) + 1
    assert got == want == r.group_counts
    assert tvd_joint(pool, r.indices) < 0.6 * tvd_joint(pool, uniform_sample(len(pool), 303, 5))
    explicit = {"gov": 101, "arxiv": 101, "press": 101}
    r2 = gibbs_sample(pool, 303, 5, groups=groups, quotas=explicit)
    assert sorted(groups[i] for i in r2.indices) == sorted(g for g, c in explicit.items() for _ in range(c))


def test_bad_sizes():
    pool = synthetic_ccv_pool(10, 1)
    for k in (0, -1, 11):
        with pytest.raises(DataError, match=f"between 1 and the pool size 10, got {k}"):
            gibbs_sample(pool, k, 0)
    whole = gibbs_sample(pool, 10, 0)
    assert len(whole.indices) == 10 and whole.replacements == 0
    assert whole.skipped == 10 * whole.sweeps  # nothing outside S to swap in: every step counted as skipped
    with pytest.raises(DataError, match="row 2: Color is 2"):
        bad = pool.copy()
        bad[2, 1] = 2
        gibbs_sample(bad, 3, 0)


def _write_pool(path: Path, pool: np.ndarray, extra: bool = False) -> list[list[str]]:
    rows = [["id", *NAMES] + (["note"] if extra else [])]
    rows += [[f"chart-{i}", *map(str, r.tolist())] + ([f"n{i}"] if extra else []) for i, r in enumerate(pool)]
    with path.open("w", newline="") as f:
        csv.writer(f).writerows(rows)
    return rows


@pytest.mark.parametrize(("text", "message"), [
    ("", "empty"),
    ("id,Annotation,Color\nx,1,0\n", "line 1: missing column(s) Legend, Pattern"),
    ("id," + ",".join(NAMES) + "\n", "no rows after the header"),
    ("id," + ",".join(NAMES) + "\na," + ",".join("0" * 10) + "\nb," + ",".join("0" * 9) + ",yes\n",
     "line 3: Type of 'b' is 'yes', expected 0 or 1"),
    ("id," + ",".join(NAMES) + "\na," + ",".join("0" * 10) + "\n\nb," + ",".join("1" * 10) + "\na,"
     + ",".join("1" * 10) + "\n", "line 5: duplicate id 'a' (first on line 2)"),
    ("id," + ",".join(NAMES) + "\na,1,0\n", "line 2: 3 fields, the header has 11"),
    ("id," + ",".join(NAMES) + "\n ," + ",".join("0" * 10) + "\n", "line 2: empty id"),
])
def test_csv_errors_name_the_line(text: str, message: str):
    with pytest.raises(DataError) as e:
        parse_ccv_csv(text, name="pool.csv")
    assert message in str(e.value) and str(e.value).startswith("pool.csv")


def test_csv_header_case_and_extra_columns():
    table = parse_ccv_csv("\ufeffID,note," + ",".join(n.lower() for n in NAMES) + "\nq,hello,"
                          + ",".join("0101010101") + "\n")
    assert table.ids == ["q"] and table.ccvs.tolist() == [[0, 1, 0, 1, 0, 1, 0, 1, 0, 1]]


def test_cli_csv_json_and_chosen_rows(tmp_path: Path):
    pool = synthetic_ccv_pool(1500, 2)
    rows = _write_pool(tmp_path / "pool.csv", pool, extra=True)
    out = run_cli_json("sample", "--ccv-csv", str(tmp_path / "pool.csv"), "--n", "60", "--seed", "9",
                       "--out", str(tmp_path / "chosen.csv"))
    assert list(out) == ["n", "pool", "tvd_joint", "tvd_score", "max_attr_diff", "random_tvd_joint"]
    assert (out["n"], out["pool"]) == (60, 1500)
    paper = run_cli_json("sample", "--ccv-csv", str(tmp_path / "pool.csv"), "--n", "60", "--seed", "9", "--no-refine")
    assert paper["tvd_joint"] == pytest.approx(tvd_joint(pool, gibbs_sample(pool, 60, 9, refine=False).indices))
    with (tmp_path / "chosen.csv").open(newline="") as f:
        chosen = list(csv.reader(f))
    assert chosen[0] == rows[0]  # the pool's header, extra column included
    expected = gibbs_sample(pool, 60, 9).indices.tolist()
    assert chosen[1:] == [rows[1 + i] for i in expected]  # the pool's rows, in pool order
    assert out["tvd_joint"] == pytest.approx(tvd_joint(pool, np.asarray(expected)))
    assert out["random_tvd_joint"] == pytest.approx(tvd_joint(pool, uniform_sample(1500, 60, 9)))
    assert out["tvd_joint"] < out["random_tvd_joint"]
    again = run_cli_json("sample", "--ccv-csv", str(tmp_path / "pool.csv"), "--n", "60", "--seed", "9")
    assert again == out


def test_cli_csv_errors_are_one_line(tmp_path: Path):
    _write_pool(tmp_path / "pool.csv", synthetic_ccv_pool(5, 1))
    text = (tmp_path / "pool.csv").read_text().splitlines()
    text[3] = text[3].rsplit(",", 1)[0] + ",2"
    (tmp_path / "bad.csv").write_text("\n".join(text) + "\n")
    for args, message in [
        (["--ccv-csv", str(tmp_path / "bad.csv"), "--n", "2"], "bad.csv line 4: Type of 'chart-2' is '2'"),
        (["--ccv-csv", str(tmp_path / "pool.csv"), "--n", "6"], "between 1 and the pool size 5, got 6"),
        (["--ccv-csv", str(tmp_path / "missing.csv"), "--n", "2"], "missing.csv: cannot read"),
        (["--n", "2"], "give a workspace or --ccv-csv"),
        (["--ccv-csv", str(tmp_path / "pool.csv"), "--n", "2", "--quota-by", "source"],
         "--quota-by needs a workspace"),
    ]:
        proc = run_cli("sample", *args, check=False)
        assert proc.returncode == 1, args
        lines = proc.stderr.strip().splitlines()
        assert len(lines) == 1 and message in lines[0], (args, proc.stderr)


# --- workspace mode -------------------------------------------------------------------------------------------

def _labels_module() -> bool:
    try:
        import zuhyo.construct.workspace.labels  # noqa: F401
    except ImportError:
        return False
    return True


@pytest.fixture
def ws_with_ccvs(tmp_path: Path) -> tuple[Path, dict[int, tuple[int, ...]]]:
    """A workspace of 24 collected figures in 2 documents, each with a CCV (figure 24 dropped) and image types;
    built in-process (the CLI itself is exercised by the tests)."""
    pytest.importorskip("sqlalchemy", reason="the [build] extra is needed")
    if not _labels_module():
        pytest.skip("zuhyo.construct.workspace.labels (figure labels, migration 0003) is not in this tree yet")
    from test_construct_collect_folder import make_image_folder

    from zuhyo.construct.collect.folder import collect_folder
    from zuhyo.construct.workspace import Workspace
    from zuhyo.construct.workspace.labels import CCV_STAGE, IMAGE_TYPE_STAGE, record_label
    from zuhyo.construct.workspace.queries import decide

    make_image_folder(tmp_path / "imgs", 24, subdirs=2)
    pool = synthetic_ccv_pool(24, 4)
    with Workspace.init(tmp_path / "ws") as ws:
        assert collect_folder(ws, tmp_path / "imgs").figures == 24
        with ws.db.write() as s:
            for fid in range(1, 25):
                record_label(s, fid, CCV_STAGE, dict(zip(NAMES, pool[fid - 1].tolist(), strict=True)),
                             source="import", model="import:test")
                record_label(s, fid, IMAGE_TYPE_STAGE, "Bar" if fid % 3 else "Map", source="import",
                             model="import:test")
        decide(ws, "24", "drop", "a photo")
    return tmp_path / "ws", {fid: tuple(pool[fid - 1].tolist()) for fid in range(1, 24)}


def test_workspace_sample_recorded_once_per_seed(ws_with_ccvs: tuple[Path, dict[int, tuple[int, ...]]]):
    from zuhyo.construct.select.sample_stage import current_sample, sample_workspace
    from zuhyo.construct.workspace import Workspace

    ws, ccvs = ws_with_ccvs
    first = run_cli_json("sample", str(ws), "--n", "8", "--seed", "3")
    assert (first["n"], first["pool"], first["recorded"]) == (8, 23, 8)
    assert {"tvd_joint", "tvd_score", "max_attr_diff", "random_tvd_joint", "run_id", "figure_ids"} <= set(first)
    ids = sorted(ccvs)
    pool = np.asarray([ccvs[i] for i in ids])
    assert first["figure_ids"] == [ids[i] for i in gibbs_sample(pool, 8, 3).indices]  # the core's choice
    assert 24 not in first["figure_ids"]  # a dropped figure is not in the pool
    again = run_cli_json("sample", str(ws), "--n", "8", "--seed", "3")
    assert again["recorded"] == 0 and again["run_id"] == first["run_id"]
    stage = run_cli_json("status", str(ws))["stages"]["sample"]
    assert (stage["keep"], stage["runs"]) == (8, 1)  # no second stage run, no second decision
    with Workspace.open(ws) as w:
        assert current_sample(w) == first["figure_ids"]
        other = sample_workspace(w, 6, 4)
        assert other.recorded == 6 and other.run_id != first["run_id"]
        assert current_sample(w) == other.figure_ids
        # back to the first seed: a new run again, and it is the current sample once more
        back = sample_workspace(w, 8, 3)
        assert back.recorded == 8 and back.figure_ids == first["figure_ids"]
        assert current_sample(w) == first["figure_ids"]
        assert sample_workspace(w, 8, 3).recorded == 0


def test_workspace_quotas(ws_with_ccvs: tuple[Path, dict[int, tuple[int, ...]]]):
    from zuhyo.construct.select.sample_stage import sample_workspace
    from zuhyo.construct.workspace import Workspace

    ws, _ = ws_with_ccvs
    by_type = run_cli_json("sample", str(ws), "--n", "9", "--seed", "1", "--quota-by", "image_type")
    # 23 kept figures: 16 Bar, 7 Map -> shares 6.26 and 2.74 -> 6 and 3
    assert by_type["groups"] == {"Bar": 6, "Map": 3}
    assert sum(1 for f in by_type["figure_ids"] if f % 3 == 0) == 3
    with Workspace.open(ws) as w:
        explicit = sample_workspace(w, 5, 1, quota_by="document", quotas={"1": 1, "2": 4})
        assert explicit.groups == {"1": 1, "2": 4}
        assert sample_workspace(w, 5, 1, quota_by="document", quotas={"1": 1, "2": 4}).recorded == 0
        with pytest.raises(DataError, match="--quota-by must be one of"):
            sample_workspace(w, 5, 1, quota_by="colour")
    proc = run_cli("sample", str(ws), "--n", "20", "--quota-by", "document", "--quota", "1=20", check=False)
    assert proc.returncode == 1
    assert proc.stderr.strip() == "error: quota for group '1' is 20, but the group has 12 charts"
