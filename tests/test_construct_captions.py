"""Caption lines, source lines and era years of white papers (zuhyo.construct.collect.caption_lines)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from zuhyo.construct.collect.caption_lines import (
    compile_patterns,
    era_years,
    first_era_year,
    fold_width,
    parse_caption,
    parse_source_line,
)

ICT_R5 = Path(__file__).resolve().parents[2] / "shared" / "data" / "ict-white-paper" / "data_r5.txt"

# Lines copied from real white papers. "r5:N" = line N of ../shared/data/ict-white-paper/data_r5.txt (令和5年版
# 情報通信白書, yashikota/ict-white-paper @ 8af3f21, CC BY 4.0); the others are the numbering styles listed in
# ../shared/data/notes/whitepaper_sites.md (防衛白書, 経済白書, 国土交通白書) and the MEXT chapter PDFs there.
CAPTIONS = [
    ("図表1-1-2-1　移動通信システムの進化", "図表1-1-2-1", "1-1-2-1", "移動通信システムの進化"),  # r5:13
    ("図表2-1-4-1　校務・学習データの可視化（Microsoft）", "図表2-1-4-1", "2-1-4-1",
     "校務・学習データの可視化（Microsoft）"),  # r5:89
    ("図表3-1-2-9　水力発電システムのデジタルツイン（米国）", "図表3-1-2-9", "3-1-2-9",
     "水力発電システムのデジタルツイン（米国）"),  # r5:439
    ("図表4-1-1-3　日本の産業別エンタプライズIT支出予測（単位：億円）", "図表4-1-1-3", "4-1-1-3",
     "日本の産業別エンタプライズIT支出予測（単位：億円）"),  # r5:585
    ("図表1　世界におけるインターネットの遮断", "図表1", "1", "世界におけるインターネットの遮断"),  # r5:555
    ("図表5　産学官で取り組むべきBeyond 5G（6G）研究開発10課題", "図表5", "5",
     "産学官で取り組むべきBeyond 5G（6G）研究開発10課題"),  # r5:2092
    ("図表I-2-1-1 中国の国防費の推移", "図表I-2-1-1", "I-2-1-1", "中国の国防費の推移"),  # 防衛白書 style
    ("図表Ⅲ－１－２　防衛関係費", "図表III-1-2", "III-1-2", "防衛関係費"),  # Roman numeral block, full width
    ("第3-3-12図 製品輸入比率の推移", "第3-3-12図", "3-3-12", "製品輸入比率の推移"),  # 経済白書
    ("付図3-3 主要国の経常収支", "付図3-3", "3-3", "主要国の経常収支"),
    ("コラム3-5図 企業の設備投資", "コラム3-5図", "3-5", "企業の設備投資"),
    ("第1-2表 国内総生産", "第1-2表", "1-2", "国内総生産"),
    ("表1-2　主な指標", "表1-2", "1-2", "主な指標"),
    ("■第１-３-１図／科学技術・イノベーション基本計画の構造", "第1-3-1図", "1-3-1",
     "科学技術・イノベーション基本計画の構造"),  # MEXT 令和6年版 ch3 PDF
    ("Figure 3: Monthly traffic", "Figure 3", "3", "Monthly traffic"),
    ("Fig. 2a Light curve", "Fig. 2a", "2a", "Light curve"),
    ("Table 1. Sample", "Table 1", "1", "Sample"),
    ("Figure S1", "Figure S1", "S1", ""),
]


@pytest.mark.parametrize(("line", "label", "number", "title"), CAPTIONS)
def test_caption_styles(line: str, label: str, number: str, title: str) -> None:
    caption = parse_caption(line)
    assert caption is not None, line
    assert (caption.label, caption.figure_number, caption.title) == (label, number, title)
    assert caption.line == line.strip()


@pytest.mark.parametrize("line", [
    "第1章　データ流通の進展",  # r5:1, a chapter heading
    "5　第3.9世代移動通信システム（LTE）と第4世代移動通信システム",  # r5 footnote
    "図表1-2に示すとおり、増加している。",  # a reference in body text, not a caption
    "表示の仕方を変える",
    "Table view of the data",
    "（出典）総務省作成資料",
    "",
])
def test_not_captions(line: str) -> None:
    assert parse_caption(line) is None


@pytest.mark.parametrize(("line", "source"), [
    ("（出典）総務省作成資料", "総務省作成資料"),  # r5:14
    ("（出典）Ericsson“Ericsson Mobility Visualizer” 2 を基に作成",
     "Ericsson“Ericsson Mobility Visualizer” 2 を基に作成"),  # r5:44
    ("出典：総務省（2023）「ICT基盤の高度化」", "総務省（2023）「ICT基盤の高度化」"),
    ("資料：内閣府「国民経済計算」", "内閣府「国民経済計算」"),
    ("資料）総務省「国勢調査」", "総務省「国勢調査」"),  # 国土交通白書 style
    ("(出典) OECD", "OECD"),
    ("Source: IMF World Economic Outlook", "IMF World Economic Outlook"),
])
def test_source_lines(line: str, source: str) -> None:
    assert parse_source_line(line) == source


def test_not_source_lines() -> None:
    assert parse_source_line("出典が明らかでない資料") is None
    assert parse_source_line("図表1-1-2-1　移動通信システムの進化") is None


@pytest.mark.parametrize(("text", "years"), [
    ("令和5年版 情報通信白書", [2023]),
    ("平成31年4月から令和元年5月まで", [2019, 2019]),
    ("令和元年度", [2019]),
    ("平成元年", [1989]),
    ("昭和64年1月", [1989]),
    ("昭和元年", [1926]),
    ("令和五年", [2023]),
    ("平成２９年", [2017]),
    ("2023年（令和5年）", [2023]),
    ("令和年", []),
    ("平成100年", []),
])
def test_era_years(text: str, years: list[int]) -> None:
    assert era_years(text) == years


def test_era_letters_only_when_asked() -> None:
    assert era_years("H29年版") == []
    assert era_years("H29年版", letters=True) == [2017]
    assert first_era_year("/whitepaper/ja/r05/html/", letters=True) == 2023
    assert first_era_year("H2O and CO2", letters=True) is None
    assert first_era_year("no era here") is None


def test_fold_width() -> None:
    assert fold_width("第１－３－１図") == "第1-3-1図"
    assert fold_width("Ⅱ―１") == "II-1"
    assert fold_width("（出典）") == "（出典）"  # brackets stay as written


def test_compile_patterns_reports_bad_patterns() -> None:
    with pytest.raises(ValueError, match="does not compile"):
        compile_patterns(["(unclosed"], ("number",))
    with pytest.raises(ValueError, match="lacks the named group"):
        compile_patterns([r"^図(?P<number>\d+)"], ("label", "number", "title"))


def test_custom_caption_pattern() -> None:
    (rx,) = compile_patterns([r"^(?P<label>Abbildung (?P<number>\d+)):\s*(?P<title>.*)$"], ("label", "number", "title"))
    caption = parse_caption("Abbildung 4: Bevölkerung", [rx])
    assert caption is not None and caption.figure_number == "4" and caption.title == "Bevölkerung"
    assert parse_caption("図表1-1　x", [rx]) is None


@pytest.mark.skipif(not ICT_R5.is_file(), reason=f"shared ICT white-paper text not present at {ICT_R5}")
def test_all_caption_lines_of_the_ict_white_paper_r5() -> None:
    lines = ICT_R5.read_text(encoding="utf-8").splitlines()
    caption_lines = [line for line in lines if line.startswith("図表")]
    assert len(caption_lines) == 225
    captions = [parse_caption(line) for line in caption_lines]
    unparsed = [line for line, c in zip(caption_lines, captions, strict=True) if c is None]
    assert not unparsed
    parsed = [c for c in captions if c is not None]
    for line, c in zip(caption_lines, parsed, strict=True):
        assert c.label == "図表" + c.figure_number
        assert c.title and line.strip() == f"{c.label}　{c.title}"
    numbered = [c.figure_number for c in parsed if re.fullmatch(r"\d+-\d+-\d+-\d+", c.figure_number)]
    columns = [c.figure_number for c in parsed if re.fullmatch(r"\d", c.figure_number)]
    assert (len(numbered), len(set(numbered)), len(columns)) == (207, 207, 9 * 2)
    # no other line of the book reads as a caption (chapter headings, footnotes, body text citing figures)
    assert sum(parse_caption(line) is not None for line in lines) == 225
    sources = [line for line in lines if line.startswith("（出典）")]
    assert len(sources) == 167
    assert all(parse_source_line(line) == line.removeprefix("（出典）").strip() for line in sources)
    followed = sum(1 for i, line in enumerate(lines[:-1])
                   if parse_caption(line) is not None and parse_source_line(lines[i + 1]) is not None)
    assert followed == 167
