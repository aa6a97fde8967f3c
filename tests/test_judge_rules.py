"""The rules judge on white-paper-style Japanese answer pairs, including tricky negatives."""

from __future__ import annotations

from decimal import Decimal

import pytest

from zuhyo.evaluate.judges import build_judge
from zuhyo.evaluate.judges.answer_extraction import extract_final_answer, normalize_text
from zuhyo.evaluate.judges.base import JudgeInput
from zuhyo.evaluate.judges.japanese_numbers import convert_era_years, parse_japanese_number, parse_numbers
from zuhyo.evaluate.judges.quantities import parse_quantity
from zuhyo.evaluate.judges.rules import judge_rules, question_asks_for_order

CORRECT = [
    ("2022年の割合は何%か。", "12.3%", "12.3％"),
    ("何年か。", "令和5年", "2023年"),
    ("何年か。", "2019年", "平成31年"),
    ("何年か。", "1989年", "昭和64年"),
    ("何年か。", "平成元年", "1989年"),
    ("何年度か。", "令和4年度", "2022年度"),
    ("何年度か。", "R5年度", "2023年度"),
    ("人口は何人か。", "1億2000万人", "120,000,000人"),
    ("人口は何人か。", "1億2000万人", "約1億2000万人"),
    ("金額は。", "二千三百円", "2300円"),
    ("金額は。", "2,300億円", "2300億円"),
    ("金額は。", "500千円", "50万円"),
    ("何羽か。", "2羽", "二羽"),
    ("割合は。", "3割", "30%"),
    ("割合は。", "3割5分", "35％"),
    ("割合は。", "30パーセント", "30%"),
    ("増加幅は。", "5ポイント", "5pt"),
    ("割合は。", "12.3%", "12.34%"),
    ("人数は。", "1.2万人", "12,345人"),
    ("伸び率は。", "△1.2%", "-1.2%"),
    ("増えているか。", "はい", "Yes"),
    ("増えているか。", "いいえ", "No."),
    ("増えているか。", "Yes", "はい、増えています。"),
    ("該当する県は。", "東京都、大阪府", "大阪府、東京都"),
    ("該当する県は。", "東京都・大阪府・愛知県", "愛知県, 東京都, 大阪府"),
    ("上位3か国を多い順に答えよ。", "中国、米国、日本", "中国、米国、日本"),
    ("最も多い業種は。", "情報通信業", "情報通信業です。"),
    ("最も多い業種は。", "情報通信業", "**情報通信業**"),
    ("最も多い業種は。", "ＩＣＴ分野", "ICT分野"),
    ("時期は。", "2023年4月", "令和5年4月"),
    ("選択肢は。", "B", "(b)"),
    ("件数は。", "1,234件", "1234件"),
    ("割合は。", "25%", "考え方: 2020年は20%、2023年は25%。\nAnswer: 25%"),
    ("割合は。", "25%", "回答：25％"),
    ("What share?", "0.5", "0.50"),
    # Change words say the direction of a change, never a unit (issue 7, item 4).
    ("前年から何ポイント上昇したか。", "3.2ポイント", "3.2ポイント上昇"),
    ("前年比の増加率は。", "25%", "25%増"),
    ("前年から何件増加したか。", "1,250件", "1,250件増加"),
    ("前年比でどう変化したか。", "25%", "25%の増加"),
    ("前年比でどう変化したか。", "25%増", "前年比25%増加した"),
    ("何ポイント上昇したか。", "3.2ポイント上昇", "3.2ポイント"),
    ("何ポイント低下したか。", "3.2ポイント", "3.2ポイント低下しました"),
    ("何ポイント減少したか。", "3.2", "-3.2"),
    ("By how much did it increase?", "25%", "25% increase"),
    # Fractions against decimals, units converted within one dimension.
    ("比率は。", "0.5", "1/2"),
    ("比率は。", "1/2", "0.5"),
    ("比率は。", "1/3", "0.33"),
    ("比率は。", "0.5", "2分の1"),
    ("重さは。", "3.2トン", "3200kg"),
    ("重さは。", "3200kg", "3.2トン"),
    ("人数は。", "1.5万人", "15,000人"),
    ("割合は。", "3割", "30%"),
    ("時間は。", "1.5時間", "90分"),
    ("面積は。", "2ha", "20,000m2"),
    # An abstention is right when the reference itself says the question has no answer.
    ("What was the value in 2030?", "Unanswerable", "unanswerable"),
    ("What was the value in 2030?", "Unanswerable", "The value cannot be determined from the chart."),
    ("2030年の値は。", "回答不能", "わかりません"),
]

INCORRECT = [
    ("何年か。", "2019年", "2018年"),
    ("何年か。", "令和元年", "2018年"),
    ("割合は。", "12%", "1.2%"),
    ("人口は。", "1億人", "1万人"),
    ("金額は。", "1兆円", "1億円"),
    ("人数は。", "100人", "100円"),
    ("割合は。", "12.3%", "12.4%"),
    ("割合は。", "3割", "35%"),
    ("増えているか。", "はい", "いいえ"),
    ("増えているか。", "yes", "false"),
    ("上位3か国を多い順に答えよ。", "中国、米国、日本", "米国、中国、日本"),
    ("該当する県は。", "東京都、大阪府", "東京都、大阪府、愛知県"),
    ("時期は。", "2023年4月", "令和5年5月"),
    ("選択肢は。", "B", "C"),
    ("割合は。", "25%", "2020年は20%と低い"),
    ("人数は。", "約100万人", "90万人"),
    ("伸び率は。", "-1.2%", "1.2%"),
    ("何羽か。", "2羽", "三羽"),
    ("何ポイント変化したか。", "25%減", "25%増"),
    ("何ポイント上昇したか。", "3.2ポイント", "3.5ポイント上昇"),
    ("重さは。", "3.2トン", "320kg"),
    ("比率は。", "1/2", "0.4"),
    ("比率は。", "1/2", "1/3"),
    # Abstentions never raise a score (issue 7, item 8).
    ("増えているか。", "はい", "グラフからは判断できない"),
    ("割合は。", "25%", "わかりません"),
    ("割合は。", "25%", "回答できません。"),
    ("国名は。", "米国", "不明です"),
    ("What share?", "25%", "Unknown"),
    ("What share?", "25%", "I don't know."),
    ("What share?", "25%", "It cannot be determined from the chart."),
    ("What share?", "25%", "The chart does not provide enough information"),
    ("What was the value in 2030?", "Unanswerable", "42"),
]

UNDECIDED = [
    ("業種は。", "情報通信業", "IT産業"),
    # A reference that is itself approximate: the chart's printed value is unknown (issue 21).
    ("人数は。", "約100万人", "98万人"),
    ("人数は。", "100万人程度", "103万人"),
    ("増加幅は。", "5ポイント", "5%"),
    ("人数は。", "100人以上", "100人"),
    ("理由は。", "高齢化が進み、医療費が増加したため。", "医療費が増えたから"),
    ("割合は。", "0.5", "50%"),
    # When in doubt, undecided: a direction the question contradicts, a change the question did not ask for.
    ("何ポイント上昇したか。", "3.2ポイント", "3.2ポイント低下"),
    ("どう変化したか。", "3.2ポイント上昇", "3.2ポイント"),
    ("2020年の割合は。", "25%", "25%増"),
    ("比率は。", "1/3", "0.3"),
    ("校数は。", "12校", "12学校"),
    ("最も多い業種は。", "製造業",
     "製造業（特に自動車）が最多で、次いで情報通信業となっているが、年による変動が大きい点に注意が必要である。"),
]


@pytest.mark.parametrize(("question", "reference", "response"), CORRECT)
def test_correct_pairs(question: str, reference: str, response: str) -> None:
    v = judge_rules(question, [reference], response)
    assert v.verdict == "correct", v.reason
    assert v.score == 1.0 and v.decided_by == "rules"


@pytest.mark.parametrize(("question", "reference", "response"), INCORRECT)
def test_incorrect_pairs(question: str, reference: str, response: str) -> None:
    v = judge_rules(question, [reference], response)
    assert v.verdict == "incorrect", v.reason
    assert v.score == 0.0


@pytest.mark.parametrize(("question", "reference", "response"), UNDECIDED)
def test_undecided_pairs(question: str, reference: str, response: str) -> None:
    v = judge_rules(question, [reference], response)
    assert v.verdict == "undecided", v.reason
    assert v.score is None


def test_multiple_references_any_matches() -> None:
    assert judge_rules("q", ["2018年", "2019年"], "2019年").verdict == "correct"
    assert judge_rules("q", ["2018年", "2019年"], "2020年").verdict == "incorrect"
    # an undecided reference beats an incorrect one when none is correct
    assert judge_rules("q", ["2018年", "情報通信業"], "IT産業").verdict == "undecided"


def test_empty_answer_is_incorrect_and_reason_is_given() -> None:
    v = judge_rules("q", ["12%"], "Answer: ")
    assert v.verdict == "incorrect" and "empty" in v.reason


def test_extracts_text_after_last_answer_marker() -> None:
    reply = "Answer: 10%\nいや、見直すと…\n**Answer:** **25%**。"
    assert extract_final_answer(reply) == "25%"
    assert extract_final_answer("理由…\n答え：「東京都」") == "東京都"
    assert extract_final_answer("so the value is \\boxed{12.5}") == "12.5"
    assert extract_final_answer("plain reply.") == "plain reply"


def test_normalisation_width_and_copula() -> None:
    assert normalize_text("ＡＢＣ　２５％です。") == "abc 25%"
    assert normalize_text("ｶﾀｶﾅ") == "カタカナ"


@pytest.mark.parametrize(("text", "value"), [
    ("1億2000万", 120_000_000), ("二千三百", 2300), ("3.5万", 35_000), ("十二", 12), ("二〇二三", 2023),
    ("1,234.5", Decimal("1234.5")), ("百万", 1_000_000), ("3千5百", 3500), ("2兆5000億", 2_500_000_000_000)])
def test_parse_japanese_number(text: str, value: int | Decimal) -> None:
    assert parse_japanese_number(text) == Decimal(value)


@pytest.mark.parametrize("text", ["万", "2000万1億", "一般", "abc", ""])
def test_parse_japanese_number_rejects(text: str) -> None:
    assert parse_japanese_number(text) is None


def test_era_conversion() -> None:
    assert convert_era_years("令和5年度と平成元年、昭和64年") == "2023年度と1989年、1989年"
    assert convert_era_years("平成三十一年") == "2019年"


def test_quantities() -> None:
    q = parse_quantity("約1億2000万人")
    assert q is not None and q.value == Decimal(120_000_000) and q.unit == "人" and q.approx
    q = parse_quantity("3割5分2厘")
    assert q is not None and q.value == Decimal("35.2") and q.unit == "%"
    assert parse_quantity("一般") is None  # a word starting with a kanji numeral
    assert parse_quantity("2023年4月") is None  # two numbers
    q = parse_quantity("1.2万人")
    assert q is not None and q.quantum == Decimal(1000)


def test_parse_numbers_scientific_and_lists() -> None:
    assert parse_numbers("1.2×10^-3, -3 and 1,234.5; 2.5") == pytest.approx([0.0012, -3, 1234.5, 2.5])
    assert parse_numbers("$10^{5}$ or 1.5e3 or 1.2万") == pytest.approx([1e5, 1500, 12000])
    assert parse_numbers("COVID-19") == [19.0]


def test_order_detection() -> None:
    assert question_asks_for_order("割合が高い順に3つ挙げよ。")
    assert question_asks_for_order("List them in descending order.")
    assert not question_asks_for_order("該当する都道府県をすべて挙げよ。")


async def test_registered_judge_uses_the_rules() -> None:
    judge = build_judge("rules")
    assert judge.id == "rules" and judge.prompt_version
    v = await judge.judge(JudgeInput(question="何年か。", references=("令和5年",), response="Answer: 2023年"))
    assert v.verdict == "correct" and v.extracted_answer == "2023年"
    with pytest.raises(ValueError):
        build_judge("rules:extra")
