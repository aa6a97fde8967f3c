"""ROUGE-L and BLEU-4 with a tokenizer that keeps Japanese."""

from __future__ import annotations

import pytest
from rouge_score import rouge_scorer

from zuhyo.evaluate.metrics.text_overlap import bleu4, bleu4_metric, rouge_l, rouge_l_f, tokenize
from zuhyo.schema import Sample

REF_JA = "銀河の回転速度は半径が大きくなってもほぼ一定である"
PRED_JA = "回転速度は半径によらずほぼ一定"


def test_tokenizer_splits_cjk_per_character_and_words_otherwise() -> None:
    assert tokenize("ＨＩ銀河、Hubble constant H0=70 km/s") == ["hi", "銀", "河", "hubble", "constant", "h0", "70",
                                                                  "km", "s"]


def test_japanese_gets_nonzero_rouge_where_the_default_tokenizer_gives_zero() -> None:
    default = rouge_scorer.RougeScorer(["rougeL"]).score(REF_JA, PRED_JA)["rougeL"].fmeasure
    assert default == 0.0
    ours = rouge_l_f(REF_JA, PRED_JA)
    # LCS 回転速度は半径 + ほぼ一定 = 11 chars; P = 11/15, R = 11/25
    p, r = 11 / 15, 11 / 25
    assert ours == pytest.approx(2 * p * r / (p + r))


def test_english_rouge_matches_rouge_score_default() -> None:
    ref, pred = "the rotation curve stays flat", "the curve stays flat at large radii"
    default = rouge_scorer.RougeScorer(["rougeL"]).score(ref, pred)["rougeL"].fmeasure
    assert rouge_l_f(ref, pred) == pytest.approx(default)


def test_bleu4_range_and_ordering() -> None:
    assert bleu4([REF_JA], REF_JA) == pytest.approx(1.0)
    partial = bleu4([REF_JA], PRED_JA)
    assert 0.0 < partial < 1.0
    assert bleu4([REF_JA], "全く関係のない文章") < partial
    assert bleu4(["the cat sat on the mat"], "the cat sat on the mat") == pytest.approx(1.0)


def test_registered_metrics_take_the_best_reference() -> None:
    s = Sample(id="t", benchmark="astrochart", question="q", answers=["無関係", REF_JA])
    assert rouge_l(s, PRED_JA) == pytest.approx(rouge_l_f(REF_JA, PRED_JA))
    assert 0 < bleu4_metric(s, PRED_JA) <= 1
