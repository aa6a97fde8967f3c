"""Figures, TOC links and figure lists from white-paper HTML pages; site profiles (zuhyo.construct.collect)."""

from __future__ import annotations

from pathlib import Path

import pytest

from zuhyo.construct.collect.html_figures import (
    edition_scope,
    extract_figures,
    extract_page,
    figure_index,
    in_scope,
    toc_links,
)
from zuhyo.construct.collect.profiles import ProfileError, load_profile, profile_for_url, profile_names
from zuhyo.construct.collect.robots import robots_rules

SITES = Path(__file__).resolve().parent / "fixtures" / "whitepaper_sites"
SOUMU = "https://www.soumu.go.jp/johotsusintokei/whitepaper/ja/r05/html/"
MOD = "https://www.clearing.mod.go.jp/hakusho_data/2023/html/"
CAO = "https://www5.cao.go.jp/keizai3/keizaiwp/wp-je93/"
MLIT = "https://www.mlit.go.jp/hakusyo/mlit/h27/hakusho/h28/html/"


def page(url: str) -> str:
    """The fixture file served at ``url`` (the site folder mirrors the real site's paths)."""
    host = url.split("/")[2]
    site = {"www.soumu.go.jp": "soumu", "www.clearing.mod.go.jp": "mod", "www5.cao.go.jp": "cao",
            "www.mlit.go.jp": "mlit", "stats.example.org": "generic"}[host]
    return (SITES / site / url.split("/", 3)[3]).read_text(encoding="utf-8")


# --- profiles -------------------------------------------------------------------------------------------------


def test_bundled_profiles_load() -> None:
    assert profile_names() == ["cao", "generic", "mlit", "mod", "soumu"]
    for name in profile_names():
        assert load_profile(name).name == name


def test_unknown_profile_lists_the_known_ones() -> None:
    with pytest.raises(ProfileError, match=r"unknown site profile 'meti'; known profiles: cao, generic, mlit, mod, "
                                           r"soumu"):
        load_profile("meti")


def test_profile_from_a_file(tmp_path: Path) -> None:
    path = tmp_path / "statistik.toml"
    path.write_text('description = "a German statistics office"\n'
                    'caption_patterns = [\'^(?P<label>Abbildung (?P<number>\\d+)):\\s*(?P<title>.*)$\']\n'
                    'caption_locations = ["following"]\n', encoding="utf-8")
    profile = load_profile(str(path))
    assert profile.name == "statistik"
    html = '<body><p><img src="a.png"></p><p>Abbildung 4: Bevölkerung</p><p>Quelle: Destatis</p></body>'
    (fig,) = extract_figures(html, "https://www.destatis.example/x/y.html", profile)
    assert (fig.figure_number, fig.title, fig.caption_from) == ("4", "Bevölkerung", "following")


@pytest.mark.parametrize(("body", "message"), [
    ('caption_locations = ["above"]', "caption_locations"),
    ('images = "//img[@src"', "XPath"),
    ("caption_patterns = ['^(?P<number>\\d+)']", "lacks the named group"),
    ('colour = "red"', "colour"),
    ("name = ", "cannot read"),
])
def test_invalid_profile_files_name_the_problem(tmp_path: Path, body: str, message: str) -> None:
    path = tmp_path / "bad.toml"
    path.write_text(body + "\n", encoding="utf-8")
    with pytest.raises(ProfileError, match=message) as info:
        load_profile(str(path))
    assert str(path) in str(info.value)


def test_missing_profile_file() -> None:
    with pytest.raises(ProfileError, match="not found"):
        load_profile("no/such/profile.toml")


def test_profile_for_url() -> None:
    assert profile_for_url(SOUMU + "index.html").name == "soumu"
    assert profile_for_url(MOD + "zuhyo.html").name == "mod"
    assert profile_for_url("https://www.example.org/report.html").name == "generic"


# --- soumu: one page per section, caption above, （出典） below ------------------------------------------------


def test_soumu_section_page() -> None:
    url = SOUMU + "nd112100.html"
    result = extract_page(page(url), url, load_profile("soumu"))
    (fig,) = result.figures  # the logo (header) and the page-top icon are not content figures
    assert fig.image_url == SOUMU + "img/n1102010.png"
    assert (fig.label, fig.figure_number, fig.title) == ("図表1-1-2-1", "1-1-2-1", "移動通信システムの進化")
    assert fig.caption == "図表1-1-2-1　移動通信システムの進化" and fig.caption_from == "preceding"
    assert (fig.source_line, fig.source) == ("（出典）総務省作成資料", "総務省作成資料")
    assert fig.headings == ["第1部 特集 新時代に求められる強靱・健全なデータ流通社会の実現に向けて",
                            "第1章 データ流通の進展", "第1節 通信インフラの高度化の歴史", "2 移動通信"]
    # the citing paragraphs: the one ending "（図表1-1-2-1）。" and the one that also names 図表1-1-2-10; a
    # figure label inside a <script> is not text
    assert len(fig.citing_paragraphs) == 2
    assert fig.citing_paragraphs[0].endswith("多様化・高度化してきた（図表1-1-2-1）。")
    assert fig.citing_paragraphs[1].startswith("図表1-1-2-10 と図表1-1-2-1 を比べると")
    assert fig.edition_year == 2023 and fig.years == []
    assert fig.alt == "移動通信システムの進化"
    assert result.title == "総務省｜令和5年版 情報通信白書｜移動通信"


def test_soumu_back_data_base_href_and_skipped_images() -> None:
    url = SOUMU + "nd121200.html"
    result = extract_page(page(url), url, load_profile("soumu"))
    figs = result.figures
    assert [f.figure_number for f in figs] == ["2-1-2-1", "2-1-2-3", "2-1-2-4", None]
    first = figs[0]
    assert first.back_data == ["https://www.soumu.go.jp/johotsusintokei/whitepaper/ja/r05/excel/n2102010.xlsx",
                               "https://www.soumu.go.jp/johotsusintokei/whitepaper/ja/r05/csv/n2102010.csv"]
    assert first.years == [2023]  # （出典）総務省（令和5年）…
    assert first.source is not None and first.source.startswith("総務省（令和5年）")
    # one paragraph cites two figures: it is a citing paragraph of both; the download-link line is not
    assert figs[1].citing_paragraphs == figs[2].citing_paragraphs and len(figs[1].citing_paragraphs) == 1
    assert len(first.citing_paragraphs) == 1 and "52.8%" in first.citing_paragraphs[0]
    assert figs[1].back_data == [] and figs[2].source_line is not None
    # the photo has no caption line: collected without caption (the filter stage decides), alt kept
    assert figs[3].caption == "" and figs[3].alt == "G7群馬高崎デジタル・技術大臣会合の模様"
    assert [(s.reason, s.src[:10]) for s in result.skipped] == [("not an http(s) URL (data)", "data:image")]


def test_broken_html_does_not_raise() -> None:
    url = SOUMU + "nd212100.html"
    figs = extract_figures(page(url), url, load_profile("soumu"))
    assert figs[0].figure_number == "2-1-1-1"
    assert figs[0].source == "Ericsson“Ericsson Mobility Visualizer” 2 を基に作成"
    assert figs[0].citing_paragraphs == ["データトラヒック量は大幅に増加してきており（図表2-1-1-1）、今後も伸びる"]
    assert figs[0].headings == ["第2章", "第1節 世界のデータ流通"]


@pytest.mark.parametrize("html", ["", "   ", "<", "<html><body><img></body>", "\x00\x01<p>図表1-1　x",
                                  "<?xml version='1.0' encoding='Shift_JIS'?><html><body><p>図表1-1　x</p>"
                                  "<img src='a.png'></body></html>", b"<p>\xff\xfe broken bytes <img src=a.png>"])
def test_garbage_never_raises(html: str | bytes) -> None:
    for name in profile_names():
        result = extract_page(html, "https://example.org/a/b.html", load_profile(name))
        assert all(f.image_url.startswith("https://example.org/a/") for f in result.figures)
        assert toc_links(html, "https://example.org/a/b.html", load_profile(name), "/a/") == []


def test_img_without_src_is_reported() -> None:
    result = extract_page("<body><p>図表1-1　x</p><img alt='no source'></body>", "https://e.org/p.html",
                          load_profile("generic"))
    assert result.figures == [] and [s.reason for s in result.skipped] == ["no src attribute"]


def test_xml_declaration_and_lazy_src() -> None:
    html = ("<?xml version='1.0' encoding='Shift_JIS'?><html><body><p>図表1-1　x</p>"
            "<img data-src='lazy/a.png' alt=''></body></html>")
    (fig,) = extract_figures(html, "https://e.org/wp/p.html", load_profile("generic"))
    assert fig.image_url == "https://e.org/wp/lazy/a.png" and fig.figure_number == "1-1"


def test_soumu_toc_links_stay_in_scope() -> None:
    url = SOUMU + "index.html"
    profile = load_profile("soumu")
    scope = edition_scope(url, profile)
    assert scope == "https://www.soumu.go.jp/johotsusintokei/whitepaper/ja/r05/"
    links = toc_links(page(url), url, profile, scope)
    # fragments dropped and deduplicated; the text mirror, the Excel file, the 令和4年版 edition, the external
    # site, the page-top anchor and the mailto link are left out; a missing page is still a link
    assert links == [SOUMU + "nd112100.html", SOUMU + "nd121200.html", SOUMU + "nd212100.html",
                     SOUMU + "nd999999.html"]
    assert toc_links(page(url), url, profile, "/johotsusintokei/whitepaper/ja/r05/") == links
    narrower = toc_links(page(url), url, profile, SOUMU + "nd1")
    assert narrower == [SOUMU + "nd112100.html", SOUMU + "nd121200.html"]


def test_generic_toc_links_keep_any_page_in_scope() -> None:
    url = SOUMU + "index.html"
    links = toc_links(page(url), url, load_profile("generic"), "https://www.soumu.go.jp/johotsusintokei/")
    assert "https://www.soumu.go.jp/johotsusintokei/whitepaper/ja/r04/html/index.html" in links
    assert not any(link.endswith((".txt", ".xlsx")) or "#" in link for link in links)
    assert len(links) == len(set(links)) == 5


def test_in_scope() -> None:
    assert in_scope(SOUMU + "a.html", "https://www.soumu.go.jp/johotsusintokei/")
    assert in_scope(SOUMU + "a.html", "https://WWW.SOUMU.GO.JP/johotsusintokei/")
    assert not in_scope("http://www.soumu.go.jp/johotsusintokei/a.html", "https://www.soumu.go.jp/johotsusintokei/")
    assert not in_scope("https://www.soumu.go.jp/other/a.html", "https://www.soumu.go.jp/johotsusintokei/")
    assert not in_scope("https://evil.example/johotsusintokei/a.html", "https://www.soumu.go.jp/johotsusintokei/")


# --- 防衛白書: figure list with csv back data, Roman chapter numbers --------------------------------------------


def test_mod_figure_list() -> None:
    url = MOD + "zuhyo.html"
    entries = figure_index(page(url), url, load_profile("mod"))
    assert [(e.caption.label, e.caption.title) for e in entries] == [
        ("図表I-2-1-1", "中国の公表国防費の推移"), ("図表I-2-1-2", "中国の国防費の内訳"),
        ("図表I-3-1", "ロシア軍の配置"), ("表III-1-1", "防衛関係費（当初予算）の推移")]
    assert entries[0].pages == [MOD + "n12101000.html"]
    assert entries[0].back_data == ["https://www.clearing.mod.go.jp/hakusho_data/2023/csv/zuhyo01020101.csv"]
    assert entries[1].back_data == []
    assert entries[3].back_data == ["https://www.clearing.mod.go.jp/hakusho_data/2023/csv/hyo03010101.xlsx"]
    assert figure_index(page(url), url, load_profile("soumu")) == []  # no index_entries in that profile


def test_mod_section_page() -> None:
    url = MOD + "n12101000.html"
    profile = load_profile("mod")
    figs = extract_figures(page(url), url, profile)
    assert [(f.figure_number, f.source) for f in figs] == [("I-2-1-1", "中国財政部の公表資料を基に作成"),
                                                            ("I-2-1-2", None)]
    assert figs[0].headings == ["第I部 わが国を取り巻く安全保障環境", "第2章 諸外国の防衛政策など", "第1節 中国"]
    assert all(f.edition_year == 2023 for f in figs)
    assert toc_links(page(url), url, profile, edition_scope(url, profile)) == [MOD + "zuhyo.html",
                                                                              MOD + "n13000000.html"]


# --- 経済白書: one figure per page ------------------------------------------------------------------------------


@pytest.mark.parametrize(("name", "label", "number", "title", "source"), [
    ("wp-je93bun-3-3-12z.html", "第3-3-12図", "3-3-12", "製品輸入比率の推移", "大蔵省「外国貿易概況」により作成。"),
    ("wp-je93bun-1-2h.html", "第1-2表", "1-2", "国内総生産（平成4年度）", "経済企画庁「国民経済計算」"),
    ("wp-je93-fuzu3-3z.html", "付図3-3", "3-3", "主要国の経常収支", "IMF「International Financial Statistics」"),
    ("wp-je93-c3-5z.html", "コラム3-5図", "3-5", "企業の設備投資", None),
])
def test_cao_figure_pages(name: str, label: str, number: str, title: str, source: str | None) -> None:
    url = CAO + name
    (fig,) = extract_figures(page(url), url, load_profile("cao"))
    assert (fig.label, fig.figure_number, fig.title, fig.source) == (label, number, title, source)
    assert fig.image_url == CAO + "img/" + name.replace(".html", ".gif")
    assert fig.edition_year == 1993


def test_cao_table_of_contents() -> None:
    url = CAO + "wp-je93-000i1.html"
    profile = load_profile("cao")
    assert edition_scope(url, profile) == CAO
    links = toc_links(page(url), url, profile, edition_scope(url, profile))
    assert links == [CAO + n for n in ("wp-je93bun-3-3.html", "wp-je93bun-3-3-12z.html", "wp-je93bun-1-2h.html",
                                       "wp-je93-fuzu3-3z.html", "wp-je93-c3-5z.html")]  # not the 平成4年版 edition
    assert extract_page(page(url), url, profile).title == "平成5年 年次経済報告 目次"  # a Shift_JIS meta on UTF-8 text
    assert [f.title for f in extract_figures(page(CAO + "wp-je93bun-1-2h.html"), CAO + "wp-je93bun-1-2h.html",
                                             profile)][0].endswith("（平成4年度）")


def test_cao_years_from_the_caption() -> None:
    url = CAO + "wp-je93bun-1-2h.html"
    (fig,) = extract_figures(page(url), url, load_profile("cao"))
    assert fig.years == [1992]  # 平成4年度


# --- 国土交通白書 ------------------------------------------------------------------------------------------------


def test_mlit_page() -> None:
    url = MLIT + "n1101000.html"
    result = extract_page(page(url), url, load_profile("mlit"))
    (fig,) = result.figures  # the header logo and the footer button are outside the content root
    assert fig.image_url == "https://www.mlit.go.jp/hakusyo/mlit/h27/hakusho/h28/image/n10101020.gif"
    assert fig.back_data == ["https://www.mlit.go.jp/hakusyo/mlit/h27/hakusho/h28/excel/n10101020.xls"]
    assert fig.source is not None and fig.source.startswith("総務省「国勢調査」")
    assert fig.years == [2012]  # 平成24年1月推計 in the source line
    assert fig.edition_year == 2016  # …/hakusho/h28/
    assert fig.citing_paragraphs == ["我が国の総人口は平成20年をピークに減少に転じている（図表1-1-1-2）。"]


# --- the generic fallback on an unknown site ----------------------------------------------------------------------


def test_generic_profile_on_an_unknown_site() -> None:
    url = "https://stats.example.org/report/2024/index.html"
    result = extract_page(page(url), url, load_profile("generic"))
    got = [(f.image_url.rsplit("/", 1)[1], f.caption_from, f.figure_number, f.caption) for f in result.figures]
    assert got == [
        ("gdp.png", "figcaption", "1", "Figure 1: Real GDP, 2015-2024"),
        ("exports.png", "table_caption", "2", "Table 2. Exports by region"),
        ("imports.png", "nearest", "3", "Figure 3. Imports by product"),  # caption below its image
        ("ports.png", "alt_text", None, "Map of the main ports"),
        ("energy.png", "figcaption", None, "Energy mix"),
    ]
    gdp, exports, imports, ports, energy = result.figures
    assert gdp.citing_paragraphs == ["Output grew in every quarter (see Figure 1). Fig. 1 also shows the 2020 dip; "
                                     "Figure 10 is unrelated."]
    assert imports.source == "National statistics office"
    assert ports.back_data == ["https://stats.example.org/report/2024/data/imports.csv"]
    assert gdp.headings == ["Annual Report 2024", "1 Economy"] and exports.headings[-1] == "2 Trade"
    assert [s.reason for s in result.skipped] == ["decoration (matches skip_image_src)"]
    assert energy.title == "Energy mix" and energy.label is None


def test_generic_profile_on_a_white_paper_page() -> None:
    url = SOUMU + "nd121200.html"
    figs = extract_figures(page(url), url, load_profile("generic"))
    assert [f.figure_number for f in figs] == ["2-1-2-1", "2-1-2-3", "2-1-2-4", None]
    assert figs[3].caption == "G7群馬高崎デジタル・技術大臣会合の模様" and figs[3].caption_from == "alt_text"


def test_a_caption_line_captions_one_image() -> None:
    html = ("<body><p>図表1-1　上</p><p><img src='a.png'></p><p><img src='b.png'></p>"
            "<p>図表1-2　下</p><p><img src='c.png'></p></body>")
    figs = extract_figures(html, "https://e.org/p.html", load_profile("soumu"))
    assert [f.figure_number for f in figs] == ["1-1", None, "1-2"]


def test_citations_are_whole_labels() -> None:
    html = ("<body><p>表1-2　主な指標</p><p><img src='a.png'></p>"
            "<p>図表1-2 と付表1-2 は別の図表である。</p><p>表1-20 も別である。</p>"
            "<p>主な指標は表1-2のとおり。</p></body>")
    (fig,) = extract_figures(html, "https://e.org/p.html", load_profile("generic"))
    assert fig.citing_paragraphs == ["主な指標は表1-2のとおり。"]


def test_a_sentence_starting_with_a_label_is_not_a_caption() -> None:
    html = "<body><p>図表1-1 のとおり増えた。</p><p><img src='a.png'></p></body>"
    (fig,) = extract_figures(html, "https://e.org/p.html", load_profile("generic"))
    assert fig.figure_number is None


# --- robots.txt -------------------------------------------------------------------------------------------------


def test_robots_rules() -> None:
    rules = robots_rules(200, "User-agent: *\nDisallow: /private/\nCrawl-delay: 2\n\n"
                              "User-agent: zuhyo\nDisallow: /nozuhyo/\n")
    assert rules.allows("https://e.org/public/a.html", "zuhyo-collect/0.1")
    assert not rules.allows("https://e.org/nozuhyo/a.html", "zuhyo-collect/0.1")
    assert rules.allows("https://e.org/private/a.html", "zuhyo-collect/0.1")  # its own group wins
    assert not rules.allows("https://e.org/private/a.html", "otherbot")
    assert rules.crawl_delay("otherbot") == 2
    assert robots_rules(404, "").allows("https://e.org/anything", "zuhyo")  # no robots.txt: all allowed
    assert not robots_rules(503, "").allows("https://e.org/anything", "zuhyo")  # unreachable: nothing allowed
    assert not robots_rules(None, "").allows("https://e.org/anything", "zuhyo")
