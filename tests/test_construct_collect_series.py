"""White-paper series lists (`zuhyo collect html --series`): HakushoBench Table 5 as data, the latest edition of
each listed series collected from a real local server, and the white paper and topic group carried through the
figures into an export's statistics (issue 24, item 1)."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from conftest import run_cli, run_cli_json

from zuhyo.construct.collect.series import load_series, parse_series_csv, series_names
from zuhyo.errors import DataError
from zuhyo.schema import TopicGroup

pytest.importorskip("sqlalchemy", reason="the [build] extra is needed")

from test_construct_collect_html import FAST, R04, R05, Site, cli, site, ws  # noqa: E402,F401

HEADER = "title_ja,title_en,edition,topic,examples,ministry,site,start_url\n"


def test_hakushobench_list_is_table5():
    rows = load_series("hakushobench")
    assert "hakushobench" in series_names() and len(rows) == 33
    assert sum(r.examples or 0 for r in rows) == 2053  # Table 5's total
    by_topic = Counter(r.topic for r in rows)
    assert by_topic == {TopicGroup.SECURITY: 8, TopicGroup.ECONOMY: 10, TopicGroup.SOCIETY: 6,
                        TopicGroup.INFRASTRUCTURE: 4, TopicGroup.ENERGY_ENVIRONMENT: 3, TopicGroup.DIPLOMACY: 2}
    economy = sum(r.examples or 0 for r in rows if r.topic == TopicGroup.ECONOMY)
    assert round(100 * economy / 2053, 1) == 30.4  # §4: "The largest topic is Economy (30.4%)"
    examples = [r.examples or 0 for r in rows]
    assert (min(examples), max(examples)) == (9, 93)
    for r in rows:
        assert urlsplit(r.start_url).hostname == r.site and r.ministry, r.title_ja
    first = rows[0]
    assert (first.title_ja, first.title_en, first.edition, first.examples) == ("海上保安レポート", "Japan Coast Guard",
                                                                              2025, 93)


def test_pick_series_by_title():
    from zuhyo.construct.collect.series import pick_series

    rows = load_series("hakushobench")
    assert [r.title_ja for r in pick_series(rows, ["外交青書", "defence of japan"])] == ["防衛白書", "外交青書"]
    assert pick_series(rows, []) == rows
    with pytest.raises(DataError, match="series 'Sports' is not in the list"):
        pick_series(rows, ["Sports"])


def test_listed_series_reach_the_profiles_and_editions():
    from zuhyo.construct.collect.editions import edition_of
    from zuhyo.construct.collect.profiles import profile_for_url
    from zuhyo.images.fetch import check_url

    rows = {r.title_ja: r for r in load_series("hakushobench")}
    for row in rows.values():
        assert check_url(row.start_url) is None, row.title_ja
    expected = {"情報通信白書": ("soumu", 2025), "防衛白書": ("mod", 2025), "国土交通白書": ("mlit", 2024),
                "年次経済財政報告": ("cao", 2025)}
    for title, (profile, year) in expected.items():
        prof = profile_for_url(rows[title].start_url)
        assert (prof.name, edition_of(rows[title].start_url, prof).year) == (profile, year), title
    assert profile_for_url(rows["外交青書"].start_url).name == "generic"  # no profile written for it yet


@pytest.mark.parametrize(("text", "message"), [
    ("title_ja,topic\nA,Economy\n", "line 1: missing column(s) title_en, ministry, site, start_url"),
    (HEADER + "A,,2025,Sports,1,M,h,https://h/a\n", "line 2: topic:"),
    (HEADER + "A,,2025,Economy,1,M,h,ftp://h/a\n", "line 2: start_url: Value error, start_url must be an http"),
    (HEADER + "A,,,Economy,,M,h,https://h/a\nA,,,Economy,,M,h,https://h/b\n", "line 3: series 'A' listed twice"),
    (HEADER, "no series listed"),
])
def test_series_csv_errors_name_the_line(text: str, message: str):
    with pytest.raises(DataError) as e:
        parse_series_csv(text, "mine.csv")
    assert message in str(e.value) and str(e.value).startswith("mine.csv")


def test_unknown_list_and_no_urls_are_one_line(tmp_path: Path):
    run_cli("init", str(tmp_path / "w"))
    proc = run_cli("collect", "html", str(tmp_path / "w"), "--series", "nosuch", check=False)
    assert proc.returncode == 1 and "unknown series list 'nosuch'; bundled lists: hakushobench" in proc.stderr
    proc = run_cli("collect", "html", str(tmp_path / "w"), check=False)
    assert proc.returncode == 1 and "give start URLs or --series" in proc.stderr
    proc = run_cli("collect", "html", str(tmp_path / "w"), "--series", "hakushobench", "--only-series", "Sports",
                   check=False)
    assert proc.returncode == 1 and "series 'Sports' is not in the list" in proc.stderr


async def test_series_collects_latest_edition_with_topic_through_export(site: Site, ws: Path,  # noqa: F811
                                                                        tmp_path: Path) -> None:
    from zuhyo.construct.qa.items import add_qa_item
    from zuhyo.construct.workspace import Workspace

    listing = tmp_path / "series.csv"
    listing.write_text(HEADER + f"情報通信白書,Information & Communications,2023,Economy,65,総務省,127.0.0.1,"
                                f"{site.base}{R05}index.html\n", encoding="utf-8")
    # an older edition of the same series given as a start URL too: --series keeps the latest only
    out = await cli("collect", "html", str(ws), site.base + R04 + "index.html", "--series", str(listing), *FAST)
    assert out["editions"] == [site.base + R05] and out["figures"] > 0
    assert [e["scope"] for e in out["left_out_editions"]] == [site.base + R04]
    figures = run_cli_json("figures", str(ws))["figures"]
    with Workspace.open(ws) as w, w.db.write() as s:
        from zuhyo.construct.workspace.tables import FigureRow, Source

        src = s.query(Source).one()
        assert (src.meta["white_paper"], src.meta["topic"], src.meta["publisher"]) == ("情報通信白書", "Economy",
                                                                                      "総務省")
        for fig in s.query(FigureRow):
            assert (fig.provenance["white_paper"], fig.provenance["topic"]) == ("情報通信白書", "Economy")
        for f in figures[:2]:
            add_qa_item(s, item_key=f"test/{f['id']}", figure_id=f["id"], origin="draft", question="何倍か。",
                        answer="2倍", status="draft", actor="test", style="hakusho", difficulty=["Multi-hop"])
    export = tmp_path / "out"
    run_cli_json("export", str(ws), "--out", str(export), "--include-drafts")
    stats = json.loads((export / "statistics" / "statistics.json").read_text(encoding="utf-8"))
    topics = {row["topic group"]: row["questions"] for row in stats["tables"]["topic_groups"]["rows"]}
    assert topics["Economy"] == 2 and sum(topics.values()) == 2 and "(unknown)" not in topics
    sources = stats["tables"]["sources"]["rows"]
    assert [(r["topic group"], r["source"], r["publisher"], r["questions"]) for r in sources] == [
        ("Economy", "情報通信白書", "総務省", 2)]
    card = (export / "README.md").read_text(encoding="utf-8")
    assert "| Economy | 1 | 2 | 100.0 % | 2 |" in card and "| (unknown) |" not in card
