"""The ChartQAPro port gives the official evaluate_predictions.py scores on the same inputs."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import pytest

from zuhyo.evaluate.metrics.chartqapro import anls_score, chartqapro, relaxed_correctness_chartqapro
from zuhyo.schema import ChartQAProMeta, Sample

OFFICIAL = Path(__file__).resolve().parent / "fixtures" / "chartqapro_official" / "evaluate_predictions.py"  # MIT

ROWS = [
    {"Answer": ["2016"], "Question Type": "Factoid", "Year": ["YES"], "prediction": "2016"},
    {"Answer": ["2016"], "Question Type": "Factoid", "Year": ["YES"], "prediction": "2015"},
    {"Answer": ["45.2"], "Question Type": "Factoid", "Year": ["NO"], "prediction": "46"},
    {"Answer": ["45.2"], "Question Type": "Factoid", "Year": ["NO"], "prediction": "48"},
    {"Answer": ["12%"], "Question Type": "Factoid", "Year": ["NO"], "prediction": "12.5%"},
    {"Answer": ["0"], "Question Type": "Factoid", "Year": ["NO"], "prediction": "0.0"},
    {"Answer": ["Germany"], "Question Type": "Factoid", "Year": ["NO"], "prediction": "germany."},
    {"Answer": ["United Kingdom"], "Question Type": "Factoid", "Year": ["NO"], "prediction": "United Kingdon"},
    {"Answer": ["United Kingdom"], "Question Type": "Factoid", "Year": ["NO"], "prediction": "France"},
    {"Answer": ["[2019, 2020]"], "Question Type": "Factoid", "Year": ["YES", "YES"], "prediction": "[2019, 2020]"},
    {"Answer": ["[2019, 2020]"], "Question Type": "Factoid", "Year": ["YES", "YES"], "prediction": "[2019, 2021]"},
    {"Answer": ["[Asia, Europe]"], "Question Type": "Factoid", "Year": ["NO"], "prediction": "['Asia', 'Europe']"},
    {"Answer": ["[Asia, Europe]"], "Question Type": "Factoid", "Year": ["NO"], "prediction": "['Asia']"},
    {"Answer": ["[10, 20]"], "Question Type": "Factoid", "Year": ["NO", "NO"],
     "prediction": "[10.2, 19, 30]"},
    {"Answer": ["True"], "Question Type": "Fact Checking", "Year": ["NO"], "prediction": "true"},
    {"Answer": ["True"], "Question Type": "Fact Checking", "Year": ["NO"], "prediction": "Tru"},
    {"Answer": ["b"], "Question Type": "Multi Choice", "Year": ["NO"], "prediction": "B"},
    {"Answer": ["What?", "1990"], "Question Type": "Conversational", "Year": ["NO", "YES"], "prediction": "1990"},
    {"Answer": ["x", "1990"], "Question Type": "Conversational", "Year": ["NO", "YES"], "prediction": "1991"},
    {"Answer": ["It would rise to 30"], "Question Type": "Hypothetical", "Year": ["NO"],
     "prediction": "It would rise to 31"},
    {"Answer": ["5.0"], "Question Type": "Factoid", "Year": ["NO"], "prediction": "5.\n"},
]


@pytest.fixture(scope="module")
def official() -> ModuleType:
    if not OFFICIAL.exists():
        pytest.skip(f"official scorer not at {OFFICIAL}")
    pytest.importorskip("anls")  # the official script imports anls (pip install anls)
    pytest.importorskip("pandas")
    spec = importlib.util.spec_from_file_location("chartqapro_official", OFFICIAL)
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _sample(row: dict) -> Sample:
    return Sample(id="r", benchmark="chartqapro", question="q", answers=[row["Answer"][-1]],
                  chartqapro=ChartQAProMeta(question_type=row["Question Type"], year_flags=row["Year"]))


@pytest.mark.parametrize("row", ROWS, ids=[f"{i}-{r['prediction']!r}" for i, r in enumerate(ROWS)])
def test_each_row_matches_official(official: ModuleType, row: dict) -> None:
    expected = official.evaluate_predictions_chartqapro([row])["Overall"]
    assert chartqapro(_sample(row), row["prediction"]) == pytest.approx(expected)


def test_split_means_match_official(official: ModuleType) -> None:
    expected = official.evaluate_predictions_chartqapro(ROWS)
    ours: dict[str, list[float]] = {}
    for row in ROWS:
        ours.setdefault(row["Question Type"], []).append(chartqapro(_sample(row), row["prediction"]))
    for split, scores in ours.items():
        assert sum(scores) / len(scores) == pytest.approx(expected[split])
    assert 0 < expected["Overall"] < 1  # the rows exercise both outcomes


def test_anls_and_relaxed_helpers_match_official(official: ModuleType) -> None:
    for pred, gold in [("kingdom", "Kingdom"), ("abc", "abd"), ("abc", "xyz"), ("", ""), ("  a  b ", "a b")]:
        assert anls_score(pred, [gold]) == pytest.approx(official.anls_score(prediction=pred, gold_labels=[gold]))
    for t, p, flags in [("[1, 2, 3]", "[1, 2]", ["NO"]), ("1.5%", "1.52", ["NO"]), ("[a, b]", "[b, a]", ["NO"])]:
        assert relaxed_correctness_chartqapro(t, p, year_flags=flags) == pytest.approx(
            official.relaxed_correctness_chartqapro(t, p, year_flags=flags))


def test_missing_year_flags_count_as_no() -> None:
    s = Sample(id="r", benchmark="chartqapro", question="q", answers=["100"])
    assert chartqapro(s, "103") == 1.0
    assert chartqapro(s, "110") == 0.0
