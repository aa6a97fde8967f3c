"""``sample-ja`` items drawn as multi-panel dashboards (numbers from 令和5年版 情報通信白書)."""

# ruff: noqa: E501 - verbatim Japanese quotes and captions; ruff counts each full-width character as two columns

from __future__ import annotations

from typing import Any

from matplotlib.figure import Figure

from zuhyo.schema import Flag, ImageType, TopicGroup
from zuhyo_samples import ja_plots as jp
from zuhyo_samples.common import fixed, oku_yen
from zuhyo_samples.ja_items import JaItem

D = dict[str, Any]


def _panel(fig: Figure, k: int, n: int, title: str):  # type: ignore[no-untyped-def]
    w = 0.9 / n
    ax = jp.body(fig, (0.06 + w * k, 0.16, w - 0.07, 0.62))
    ax.set_title(title, fontsize=10, pad=18)
    return ax


def _broadcast_draw(d: D) -> Figure:
    fig = jp.frame("図表　放送事業者の概況（ダッシュボード）", "総務省「民間放送事業者の収支状況」、NHK資料、「ケーブルテレビの現状」",
                   size=(9.6, 4.6))
    short = {"地上系民間基幹放送": "地上系", "衛星系民間放送": "衛星系", "ケーブルテレビ": "CATV", "NHK": "NHK"}
    ax = _panel(fig, 0, 3, "① 売上高（2021年度）")
    jp.bars(ax, [short[k] for k in d["sales"]], list(d["sales"].values()), "億円")
    ax = _panel(fig, 1, 3, "② 売上高営業利益率（2021年度）")
    jp.bars(ax, [short[k] for k in d["margin"]], list(d["margin"].values()), "％", fmt="{:.1f}")
    ax = _panel(fig, 2, 3, "③ 事業者数")
    jp.bars(ax, [short[k] for k in d["count"]], list(d["count"].values()), "者")
    return fig


def _broadcast_answer(d: D) -> list[str]:
    best = max(d["margin"], key=d["margin"].__getitem__)
    return [oku_yen(d["sales"][best])]


def _local_gov_draw(d: D) -> Figure:
    fig = jp.frame("図表　行政のデジタル化の状況（ダッシュボード）", "総務省「自治体におけるAI・RPA活用促進」「地方公共団体におけるテレワーク取組状況」ほか",
                   size=(9.6, 4.6))
    ax = _panel(fig, 0, 3, "① マイナンバーカード交付率")
    jp.lines(ax, ["2022年3月末", "2023年3月末"], {"交付率": d["mynumber"]}, "％", fmt="{:.1f}")
    ax.set_ylim(0, 100)
    ax = _panel(fig, 1, 3, "② AI・RPAの導入済み団体の割合")
    jp.grouped_bars(ax, ["都道府県", "指定都市", "その他の\n市区町村"], {"AI": d["ai"], "RPA": d["rpa"]}, "％")
    ax = _panel(fig, 2, 3, "③ 職員のテレワーク導入（市区町村）")
    jp.bars(ax, ["2021年", "2022年"], d["telework"], "団体")
    return fig


def _local_gov_answer(d: D) -> list[str]:
    groups = ["都道府県", "指定都市", "その他の市区町村"]
    gaps = [a - r for a, r in zip(d["ai"], d["rpa"], strict=True)]
    i = max(range(3), key=gaps.__getitem__)
    return [f"{groups[i]}（{gaps[i]}ポイント）"]


def _devices_draw(d: D) -> Figure:
    fig = jp.frame("図表　情報通信機器の保有とインターネット利用（2022年、ダッシュボード）", "総務省「令和4年通信利用動向調査」",
                   size=(9.6, 4.6))
    ax = _panel(fig, 0, 3, "① 情報通信機器の世帯保有率")
    jp.bars(ax, list(d["households"]), list(d["households"].values()), "％", fmt="{:.1f}")
    ax.tick_params(axis="x", labelsize=8)
    ax.text(0.0, -0.22, "※スマートフォンはモバイル端末全体の内数", transform=ax.transAxes, fontsize=7.5)
    ax = fig.add_axes((0.38, 0.14, 0.26, 0.62))
    jp.pie(ax, ["利用", "非利用"], [d["internet"], round(100 - d["internet"], 1)], donut=True,
           center_text=f"{d['internet']}%")
    ax.set_title("② インターネット利用率（個人）", fontsize=10, pad=4)
    ax = _panel(fig, 2, 3, "③ 端末別インターネット利用率（個人）")
    jp.bars(ax, list(d["by_device"]), list(d["by_device"].values()), "％", fmt="{:.1f}")
    return fig


def _devices_answer(d: D) -> list[str]:
    h = d["households"]
    return [f"{fixed(h['モバイル端末全体'] - h['スマートフォン'], 1)}%"]


ITEMS: list[JaItem] = [
    JaItem(
        "ja_dash_01", ImageType.DASHBOARD, TopicGroup.SOCIETY, "放送事業者の概況",
        {"sales": {"地上系民間基幹放送": 21701, "衛星系民間放送": 3418, "ケーブルテレビ": 4990, "NHK": 7048},
         "margin": {"地上系民間基幹放送": 7.3, "衛星系民間放送": 9.1, "ケーブルテレビ": 10.1},
         "count": {"地上系民間基幹放送": 534, "衛星系民間放送": 42, "ケーブルテレビ": 464}},
        _broadcast_draw, "売上高営業利益率が最も高い区分の、2021年度の売上高はいくらか。",
        _broadcast_answer, "4,990億円", (Flag.MULTI_HOP, Flag.VISUAL),
        ("NHKの経常事業収入が7,048億円", "ケーブルテレビ事業者の売上高総計が4,990億円",
         "ケーブルテレビ事業者（同10.1%）", "衛星系民間放送事業者が42社"),
        page="nd243110", data_origin="総務省「民間放送事業者の収支状況」、NHK資料、総務省「ケーブルテレビの現状」"),
    JaItem(
        "ja_dash_02", ImageType.DASHBOARD, TopicGroup.SOCIETY, "行政のデジタル化の状況",
        {"mynumber": [42.4, 67.0], "ai": [100, 100, 35], "rpa": [91, 95, 29], "telework": [849, 1083]},
        _local_gov_draw, "AIの導入済み割合とRPAの導入済み割合の差が最も大きい団体区分はどれか。また、その差は何ポイントか。",
        _local_gov_answer, "都道府県（9ポイント）", (Flag.MULTI_HOP, Flag.GLOBAL),
        ("都道府県・指定都市で100%となった。その他の市区町村は35％", "都道府県が91％、指定都市が95％まで増加した。その他の市区町村は29％",
         "市区町村では1,083団体（62.9%）が導入しており、前年の849団体（49.3％）"),
        page="nd24b320", data_origin="総務省「自治体におけるAI・RPA活用促進」「地方公共団体におけるテレワーク取組状況」"),
    JaItem(
        "ja_dash_03", ImageType.DASHBOARD, TopicGroup.SOCIETY, "情報通信機器の保有とインターネット利用",
        {"households": {"モバイル端末全体": 97.5, "スマートフォン": 90.1, "パソコン": 69.0}, "internet": 84.9,
         "by_device": {"スマートフォン": 71.2, "パソコン": 48.5}},
        _devices_draw, "モバイル端末を保有しているがスマートフォンは保有していない世帯の割合は何%か。",
        _devices_answer, "7.4%", (Flag.MULTI_HOP,),
        ("「モバイル端末全体」で97.5％であり、その内数である「スマートフォン」は90.1%である。また、パソコンは69.0％",
         "2022年のインターネット利用率（個人）は84.9％", "「スマートフォン」（71.2％）が「パソコン」（48.5％）"),
        page="nd24b110", data_origin="総務省「通信利用動向調査」"),
]
