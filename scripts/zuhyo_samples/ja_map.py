"""``sample-ja`` items drawn as maps: tile-grid maps of Japan's prefectures and a schematic world-region map."""

# ruff: noqa: E501 - verbatim Japanese quotes and captions; ruff counts each full-width character as two columns

from __future__ import annotations

from typing import Any

from matplotlib.figure import Figure
from matplotlib.patches import FancyBboxPatch

from zuhyo.schema import Flag, ImageType, TopicGroup
from zuhyo_samples import ja_plots as jp
from zuhyo_samples.common import PALETTE, comma, fixed
from zuhyo_samples.ja_items import JaItem

D = dict[str, Any]

#: (column, row) of each prefecture on a tile-grid map of Japan, and the 8 conventional regions (地方区分).
PREFECTURE_TILES: dict[str, tuple[int, int]] = {
    "北海道": (12, 0), "青森": (11, 2), "秋田": (10, 3), "岩手": (11, 3), "山形": (10, 4), "宮城": (11, 4),
    "石川": (8, 5), "富山": (9, 5), "新潟": (10, 5), "福島": (11, 5),
    "福井": (7, 6), "岐阜": (8, 6), "長野": (9, 6), "群馬": (10, 6), "栃木": (11, 6),
    "島根": (3, 7), "鳥取": (4, 7), "京都": (6, 7), "滋賀": (7, 7), "愛知": (8, 7), "山梨": (9, 7), "埼玉": (10, 7),
    "茨城": (11, 7),
    "山口": (2, 8), "広島": (3, 8), "岡山": (4, 8), "兵庫": (5, 8), "大阪": (6, 8), "奈良": (7, 8), "三重": (8, 8),
    "静岡": (9, 8), "東京": (10, 8), "千葉": (11, 8),
    "福岡": (1, 9), "大分": (2, 9), "愛媛": (3, 9), "香川": (4, 9), "徳島": (5, 9), "和歌山": (6, 9), "神奈川": (10, 9),
    "佐賀": (0, 10), "熊本": (1, 10), "宮崎": (2, 10), "高知": (4, 10),
    "長崎": (0, 11), "鹿児島": (1, 11), "沖縄": (0, 13),
}
REGIONS: dict[str, tuple[str, ...]] = {
    "北海道": ("北海道",), "東北": ("青森", "岩手", "宮城", "秋田", "山形", "福島"),
    "関東": ("茨城", "栃木", "群馬", "埼玉", "千葉", "東京", "神奈川"),
    "中部": ("新潟", "富山", "石川", "福井", "山梨", "長野", "岐阜", "静岡", "愛知"),
    "近畿": ("三重", "滋賀", "京都", "大阪", "兵庫", "奈良", "和歌山"),
    "中国": ("鳥取", "島根", "岡山", "広島", "山口"), "四国": ("徳島", "香川", "愛媛", "高知"),
    "九州・沖縄": ("福岡", "佐賀", "長崎", "熊本", "大分", "宮崎", "鹿児島", "沖縄"),
}
assert sorted(PREFECTURE_TILES) == sorted(p for ps in REGIONS.values() for p in ps)  # noqa: S101 - 47, no gaps
assert len(set(PREFECTURE_TILES.values())) == 47  # noqa: S101 - no two tiles overlap

_SHADES = ["#eeeeee", "#a9c8e8", "#4f8cc9", "#1f4f8f"]


def _cities_draw(d: D) -> Figure:
    fig = jp.frame("図表　都道府県別の政令指定都市の数", "総務省「指定都市一覧」を基に作成", size=(7.0, 6.0))
    ax = fig.add_axes((0.04, 0.08, 0.92, 0.82))
    counts = {p: len(c) for p, c in d["cities"].items()}
    colors = {p: _SHADES[counts.get(p, 0)] for p in PREFECTURE_TILES}
    labels = {p: p for p in PREFECTURE_TILES}
    jp.tile_map(ax, PREFECTURE_TILES, colors, labels)
    jp.legend_boxes(ax, [(f"{n}市", _SHADES[n]) for n in range(4)], loc="upper left")
    return fig


def _cities_answer(d: D) -> list[str]:
    n = sum(1 for c in d["cities"].values() if len(c) >= 2)
    return [f"{n}つ", f"{n}府県"]


def _census_map_draw(d: D) -> Figure:
    fig = jp.frame("図表　人口500万人以上の都道府県（2020年国勢調査）", "総務省統計局「令和2年国勢調査」", size=(7.0, 6.0))
    ax = fig.add_axes((0.04, 0.08, 0.92, 0.82))
    big = {p: v for p, v in d["population"].items() if v >= 5_000_000}
    colors = {p: (PALETTE[1] if p in big else "#eeeeee") for p in PREFECTURE_TILES}
    labels = {p: (f"{p}\n{comma(round(big[p] / 10_000))}" if p in big else p) for p in PREFECTURE_TILES}
    jp.tile_map(ax, PREFECTURE_TILES, colors, labels)
    jp.legend_boxes(ax, [("500万人以上（数値は万人）", PALETTE[1]), ("500万人未満", "#eeeeee")], loc="upper left")
    return fig


def _census_map_answer(d: D) -> list[str]:
    total = sum(v for p, v in d["population"].items() if v >= 5_000_000 and p in REGIONS["関東"])
    return [f"約{comma(int(fixed(total / 10_000, 0)))}万人"]


#: Rough placement (x, y, w, h) of world regions on a schematic map (for blocks, not geography).
_WORLD_BLOCKS = {"米国": (0.06, 0.42, 0.26, 0.26), "欧州・中東・アフリカ": (0.38, 0.22, 0.2, 0.5),
                 "中国": (0.64, 0.5, 0.16, 0.18), "中国以外のアジア・太平洋": (0.66, 0.14, 0.28, 0.3),
                 "その他": (0.12, 0.1, 0.16, 0.24)}


def _dc_draw(d: D) -> Figure:
    fig = jp.frame("図表　世界のデータセンター容量の地域別割合", "Synergy Research Group資料を基に作成", size=(7.6, 4.6))
    ax = fig.add_axes((0.02, 0.08, 0.96, 0.8))
    ax.axis("off")
    shares = dict(d["shares"])
    shares["その他"] = 100 - sum(shares.values())
    for name, (x, y, w, h) in _WORLD_BLOCKS.items():
        alpha = 0.35 + 0.65 * shares[name] / 53
        ax.add_patch(FancyBboxPatch((x, y), w, h, boxstyle="round,pad=0.01", facecolor=PALETTE[0], alpha=alpha,
                                    edgecolor="#333333"))
        ax.text(x + w / 2, y + h / 2, f"{name}\n{shares[name]}％", ha="center", va="center", fontsize=10,
                color="white" if shares[name] > 20 else "black")
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 0.8)
    return fig


def _dc_answer(d: D) -> list[str]:
    s = d["shares"]
    return [f"{fixed((s['中国'] + s['中国以外のアジア・太平洋']) / s['欧州・中東・アフリカ'], 1)}倍"]


ITEMS: list[JaItem] = [
    JaItem(
        "ja_map_01", ImageType.MAP, TopicGroup.SOCIETY, "都道府県別の政令指定都市の数",
        {"cities": {"北海道": ["札幌市"], "宮城": ["仙台市"], "埼玉": ["さいたま市"], "千葉": ["千葉市"],
                    "神奈川": ["横浜市", "川崎市", "相模原市"], "新潟": ["新潟市"], "静岡": ["静岡市", "浜松市"],
                    "愛知": ["名古屋市"], "京都": ["京都市"], "大阪": ["大阪市", "堺市"], "兵庫": ["神戸市"],
                    "岡山": ["岡山市"], "広島": ["広島市"], "福岡": ["北九州市", "福岡市"], "熊本": ["熊本市"]}},
        _cities_draw, "政令指定都市が2市以上ある府県はいくつあるか。",
        _cities_answer, "4つ", (Flag.COUNTING, Flag.VISUAL),
        source_title="指定都市一覧", source_publisher="総務省", source_url="https://www.soumu.go.jp/",
        source_license=None, data_origin="地方自治法第252条の19に基づく指定都市（20市、2012年の熊本市指定以降）",
        white_paper="地方自治制度（総務省）"),
    JaItem(
        "ja_map_02", ImageType.MAP, TopicGroup.SOCIETY, "人口500万人以上の都道府県",
        {"population": {"東京": 14_047_594, "神奈川": 9_237_337, "大阪": 8_837_685, "愛知": 7_542_415,
                        "埼玉": 7_344_765, "千葉": 6_284_480, "兵庫": 5_465_002, "北海道": 5_224_614,
                        "福岡": 5_135_214}},
        _census_map_draw, "人口500万人以上の都道府県のうち、関東地方に属するものの人口の合計はおよそ何万人か。",
        _census_map_answer, "約3,691万人", (Flag.EXTERNAL_KNOWLEDGE, Flag.MULTI_HOP),
        source_title="令和2年国勢調査 人口等基本集計", source_publisher="総務省統計局",
        source_url="https://www.stat.go.jp/data/kokusei/2020/index.html", source_license=None,
        data_origin="総務省統計局「令和2年国勢調査」確定値（都道府県別人口）", white_paper="国勢調査（総務省統計局）"),
    JaItem(
        "ja_map_03", ImageType.MAP, TopicGroup.INFRASTRUCTURE, "世界のデータセンター容量の地域別割合",
        {"shares": {"米国": 53, "欧州・中東・アフリカ": 16, "中国": 15, "中国以外のアジア・太平洋": 11}},
        _dc_draw, "アジア・太平洋地域（中国を含む）の割合の合計は、欧州・中東・アフリカ地域の割合の何倍か。小数第1位まで答えよ。",
        _dc_answer, "1.6倍", (Flag.MULTI_HOP,),
        ("世界のデータセンター容量に占める割合は、米国が53％と過半数を超えており、次いで欧州・中東・アフリカ地域（16％）、中国（15％）、"
         "中国以外のアジア・太平洋地域（11％）",),
        page="nd248100", data_origin="Synergy Research Group"),
]
