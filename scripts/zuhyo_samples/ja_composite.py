"""``sample-ja`` items drawn as scatter/bubble charts, infographics and dashboards (令和5年版 情報通信白書)."""

# ruff: noqa: E501 - verbatim Japanese quotes and captions; ruff counts each full-width character as two columns

from __future__ import annotations

from typing import Any

from matplotlib.figure import Figure
from matplotlib.patches import FancyBboxPatch

from zuhyo.schema import Flag, ImageType, TopicGroup
from zuhyo_samples import ja_plots as jp
from zuhyo_samples.common import PALETTE, comma, fixed, man, oku_yen
from zuhyo_samples.ja_items import JaItem

D = dict[str, Any]
ECO, SOC, INF, SEC = TopicGroup.ECONOMY, TopicGroup.SOCIETY, TopicGroup.INFRASTRUCTURE, TopicGroup.SECURITY
MH, GL, CNT, VIS = Flag.MULTI_HOP, Flag.GLOBAL, Flag.COUNTING, Flag.VISUAL


def _markets_draw(caption: str, unit: str):  # type: ignore[no-untyped-def]
    def draw(d: D) -> Figure:
        fig = jp.frame(caption, "各社・各機関の市場調査（白書第4章掲載値）を基に作成", size=(7.6, 5.2))
        ax = jp.body(fig, (0.1, 0.14, 0.84, 0.72))
        jp.scatter_labeled(ax, [(n, s, g) for n, (s, g) in d["markets"].items()], xlog=True,
                           xlabel=f"市場規模（{unit}、対数目盛）", ylabel="前年比伸び率（％）")
        ax.axhline(0, color="#888888", linewidth=0.8)
        return fig
    return draw


def _count_over_20(d: D) -> list[str]:
    n = sum(1 for _s, g in d["markets"].values() if g > 20)
    return [f"{n}つ", f"{n}市場"]


def _fastest_under_10(d: D) -> list[str]:
    small = {n: g for n, (s, g) in d["markets"].items() if s < 10}
    return [max(small, key=small.__getitem__)]


def _forecast_draw(d: D) -> Figure:
    fig = jp.frame("図表　ICT関連市場の予測（基準年の市場規模と予測期間の拡大倍率）", "白書第4章掲載の各種予測を基に作成",
                   size=(7.6, 5.2))
    ax = jp.body(fig, (0.1, 0.14, 0.84, 0.72))
    pts, sizes = [], []
    for name, (y0, v0, y1, v1) in d["forecasts"].items():
        pts.append((f"{name}（{y0}→{y1}）", v0, v1 / v0))
        sizes.append(30 + 1500 * (v1 / 1_239_738) ** 0.5)
    jp.scatter_labeled(ax, pts, xlog=True, sizes=sizes, xlabel="基準年の市場規模（億円、対数目盛）",
                       ylabel="予測年の市場規模 ÷ 基準年の市場規模（倍）")
    ax.text(0.99, 0.02, "円の大きさは予測年の市場規模", transform=ax.transAxes, ha="right", fontsize=8)
    return fig


def _forecast_answer(d: D) -> list[str]:
    return [max(d["forecasts"], key=lambda n: d["forecasts"][n][3] / d["forecasts"][n][1])]


def _broadcast_bubble_draw(d: D) -> Figure:
    fig = jp.frame("図表　民間放送事業者の売上高・営業利益率・事業者数", "総務省資料を基に作成", size=(7.6, 5.0))
    ax = jp.body(fig, (0.1, 0.14, 0.84, 0.72))
    pts = [(n, s, r) for n, (s, r, _c) in d["groups"].items()]
    jp.scatter_labeled(ax, pts, sizes=[c * 4 for _s, _r, c in d["groups"].values()], xlabel="売上高（億円、2021年度）",
                       ylabel="売上高営業利益率（％、2021年度）")
    ax.set_xlim(0, 26_000)
    ax.set_ylim(5, 12)
    ax.text(0.99, 0.02, "円の大きさは事業者数（2022年度末、ケーブルテレビは2021年度末）", transform=ax.transAxes,
            ha="right", fontsize=8)
    return fig


def _broadcast_bubble_answer(d: D) -> list[str]:
    profit = {n: s * r / 100 for n, (s, r, _c) in d["groups"].items()}
    best = max(profit, key=profit.__getitem__)
    return [f"{best}（約{comma(int(fixed(profit[best], 0)))}億円）"]


def _cards_fig(caption: str, source: str, cards: list[tuple[str, str, str]], cols: int = 3,
               size: tuple[float, float] = (7.6, 3.8), height: float = 0.55) -> Figure:
    fig = jp.frame(caption, source, size=size)
    jp.cards(fig, cards, cols=cols, height=height, top=0.86)
    return fig


def _postal_draw(d: D) -> Figure:
    return _cards_fig("図表　ゆうちょ銀行・かんぽ生命の規模の推移", "ゆうちょ銀行・かんぽ生命 有価証券報告書を基に作成",
                      [(n, now, f"比較時点：{then}") for n, (now, then, _a, _b) in d["indicators"].items()])


def _postal_answer(d: D) -> list[str]:
    rate = {n: 1 - now_v / then_v for n, (_s, _t, now_v, then_v) in d["indicators"].items()}
    return [max(rate, key=rate.__getitem__)]


def _researcher_cards_draw(d: D) -> Figure:
    return _cards_fig("図表　我が国の研究者数（2021年度末）", "総務省「令和4年科学技術研究調査」",
                      [("研究者数（合計）", man(d["total"], "人"), "企業・非営利団体・公的機関・大学等"),
                       ("うち企業", man(d["firms"], "人"), ""),
                       ("うち情報通信産業", man(d["ict"], "人"), f"企業の研究者数の{d['ict_share']}％")])


def _rd_cards_draw(d: D) -> Figure:
    return _cards_fig("図表　我が国の科学技術研究費（2021年度）", "総務省「令和4年科学技術研究調査」",
                      [("研究費（総額）", oku_yen(d["total"]), "企業・非営利団体・公的機関・大学等"),
                       ("うち企業", oku_yen(d["firms"]), ""),
                       ("うち情報通信産業", oku_yen(d["ict"]), f"企業の研究費の{d['ict_share']}％")])


def _shinsho_draw(d: D) -> Figure:
    return _cards_fig("図表　特定信書便事業の概況", "総務省資料を基に作成",
                      [("参入事業者数（2022年度末）", f"{d['entrants']}者", "1号役務への参入者が増加"),
                       ("売上高（2021年度）", f"{d['sales']}億円", f"前年度比{d['sales_change']}％減"),
                       ("引受信書便物数（2021年度）", f"{comma(d['items'])}万通", f"前年度比{d['items_change']}％減")])


def _shinsho_answer(d: D) -> list[str]:
    return [f"約{comma(int(fixed(d['items'] / (1 - d['items_change'] / 100), 0)))}万通"]


def _group_draw(d: D) -> Figure:
    fig = jp.frame("図表　日本郵政グループの組織（議決権保有割合、2023年3月末）", "日本郵政（株）資料を基に作成", size=(7.4, 4.4))
    ax = fig.add_axes((0.02, 0.08, 0.96, 0.8))
    ax.axis("off")
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1)
    ax.add_patch(FancyBboxPatch((0.36, 0.72), 0.28, 0.16, boxstyle="round,pad=0.01", facecolor=PALETTE[0]))
    ax.text(0.5, 0.8, "日本郵政（持株会社）", ha="center", va="center", color="white", fontsize=12)
    for k, (name, share) in enumerate(d["subsidiaries"].items()):
        x = 0.06 + 0.32 * k
        ax.plot([0.5, x + 0.12], [0.72, 0.4], color="#555555")
        ax.text((0.5 + x + 0.12) / 2 + 0.02, 0.56, f"{share}％", fontsize=11, color=PALETTE[1])
        ax.add_patch(FancyBboxPatch((x, 0.22), 0.24, 0.16, boxstyle="round,pad=0.01", facecolor="#eef3f8",
                                    edgecolor=PALETTE[0]))
        ax.text(x + 0.12, 0.3, name, ha="center", va="center", fontsize=11)
    return fig


def _group_answer(d: D) -> list[str]:
    v = d["subsidiaries"].values()
    return [f"{fixed(max(v) - min(v), 1)}ポイント"]


ITEMS: list[JaItem] = [
    JaItem(
        "ja_scatter_01", ImageType.SCATTER, ECO, "日本のICT関連市場の規模と伸び率",
        {"markets": {"データセンターサービス": (20275, 15.3), "パブリッククラウド": (21594, 29.8),
                     "AIシステム": (3883.67, 35.5), "動画配信": (5305, 15.0), "音楽配信": (1050, 17.3),
                     "電子書籍": (5013, 7.5), "ネットワーク機器生産": (6607, -14.7), "情報端末生産": (9567, -7.7),
                     "半導体": (10145, 36.9), "5G基地局": (3035, 6.2), "メタバース（年度）": (1825, 145.3)}},
        _markets_draw("図表　日本のICT関連市場の規模と前年比伸び率（2022年）", "億円"),
        "前年比の伸び率が20%を超えている市場はいくつあるか。", _count_over_20, "4つ", (CNT, GL, VIS),
        ("2022年に2兆275億円（前年比15.3％増）", "2022年は2兆1,594億円（前年比29.8％増）",
         "2022年に3,883億6,700万円（前年比35.5％増）", "2022年は6,607億円（前年比14.7％減）",
         "2022年には9,567億円（前年比7.7％減 9 ）", "2022年には1兆145億円（前年比36.9％増）",
         "日本では3,035億円（前年比6.2％増 7 ）", "2022年度に1,825億円（前年度比145.3％増）"),
        page="nd248100", data_origin="IDC、経済産業省「生産動態統計調査」、GEM Partners、矢野経済研究所ほか（白書第4章）"),
    JaItem(
        "ja_scatter_02", ImageType.SCATTER, ECO, "世界のICT関連市場の規模と伸び率",
        {"markets": {"ICT市場（支出額）": (578.9, 19.8), "ネットワーク機器": (15.3287, 27.6), "情報端末": (92.2574, 15.8),
                     "半導体": (12.5493, 32.1), "データセンターシステム": (27.5081, 32.3), "AI": (18.7148, 78.4),
                     "サイバーセキュリティ": (9.3495, 38.7), "5G基地局": (3.9876, 23.5),
                     "動画・音楽配信・電子書籍": (19.0865, 37.3), "EC": (751.8, 31.4)}},
        _markets_draw("図表　世界のICT関連市場の規模と前年比伸び率（2022年）", "兆円"),
        "市場規模が10兆円未満の市場のうち、前年比の伸び率が最も高い市場はどれか。", _fastest_under_10, "サイバーセキュリティ",
        (MH, VIS),
        ("2022年は578.9兆円 2 （前年比19.8％増 3 ）", "2022年は15兆3,287億円（前年比27.6％増）",
         "2022年には92兆2,574億円（前年比15.8％増）", "2022年には12兆5,493億円（前年比32.1％増）",
         "2022年に27兆5,081億円（前年比32.3％増）", "前年比78.4％増の18兆7,148億円", "2022年には9兆3,495億円38.7％増）",
         "3兆9,876億円（前年比23.5％増）", "2022年には合計で19兆865億円（前年比37.3％増）", "2022年には751.8兆円（前年比31.4％増）"),
        page="nd241100", data_origin="Statista、Omdia、Canalys、IDCほか（白書第4章）"),
    JaItem(
        "ja_bubble_01", ImageType.BUBBLE, ECO, "ICT関連市場の予測",
        {"forecasts": {"世界のメタバース": (2022, 86144, 2030, 1239738), "世界のデジタルツイン": (2020, 2830, 2025, 39142),
                       "世界のエッジコンピューティング": (2020, 163000, 2025, 360000),
                       "日本のエッジインフラ": (2021, 4295, 2026, 7293), "日本のAIシステム": (2022, 3883.67, 2027, 11034.77),
                       "日本のメタバース": (2022, 1825, 2026, 10042), "日本の位置・地図情報": (2020, 1527, 2025, 1906)}},
        _forecast_draw, "予測期間中の拡大倍率（予測年の市場規模÷基準年の市場規模）が最も大きい市場はどれか。",
        _forecast_answer, "世界のメタバース", (VIS, GL),
        ("2022年の8兆6,144億円から、2030年には123兆9,738億円", "2020年の2,830億円から2025年には3兆9,142億円",
         "2020年時点で16.3兆円であり、2025年には36.0兆円", "2021年に4,295億円であり、2026年には7,293億円",
         "2027年には1兆1,034億7,700万円", "2026年度には1兆42億円", "2020年度に1,527億円、2025年度には1,906億円"),
        page="nd247520", data_origin="Statista、IDC、矢野経済研究所ほか（白書第4章）"),
    JaItem(
        "ja_bubble_02", ImageType.BUBBLE, SOC, "民間放送事業者の売上高と営業利益率",
        {"groups": {"地上系民間基幹放送": (21701, 7.3, 534), "衛星系民間放送": (3418, 9.1, 42),
                    "ケーブルテレビ": (4990, 10.1, 464)}},
        _broadcast_bubble_draw, "営業利益の額（売上高×営業利益率）が最も大きい区分はどれか。また、その額はおよそ何億円か。",
        _broadcast_bubble_answer, "地上系民間基幹放送（約1,584億円）", (MH, VIS),
        ("地上系民間基幹放送事業者の売上高総計が2兆1,701億円", "衛星系民間放送事業者の売上高総計が3,418億円",
         "ケーブルテレビ事業者の売上高総計が4,990億円",
         "地上系民間基幹放送事業者（2021年度の売上高営業利益率7.3%）、衛星系民間放送事業者（同9.1%）及びケーブルテレビ事業者（同10.1%）",
         "地上系民間基幹放送事業者が534社", "衛星系民間放送事業者が42社", "ケーブルテレビ事業者数は、464者"),
        page="nd243110", data_origin="総務省「民間放送事業者の収支状況」「ケーブルテレビの現状」"),
    JaItem(
        "ja_info_01", ImageType.INFOGRAPHIC, ECO, "ゆうちょ銀行・かんぽ生命の規模",
        {"indicators": {"ゆうちょ銀行の貯金残高": ("193.4兆円", "1999年度末 260.0兆円", 193.4, 260.0),
                        "かんぽ生命の保有契約件数": ("2,280万件", "1996年度末 8,432万件", 2280, 8432),
                        "かんぽ生命の年換算保険料": ("3.5兆円", "2008年度末 7.7兆円", 3.5, 7.7)}},
        _postal_draw, "3つの指標のうち、比較時点から2021年度末までの減少率が最も大きいものはどれか。",
        _postal_answer, "かんぽ生命の保有契約件数", (MH, GL),
        ("2021年度末で193.4兆円であり、1999年度末のピーク時（260.0兆円）", "2021年度末で2,280万件であり、1996年度末のピーク時（8,432万件）",
         "2021年度末で3.5兆円であり、2008年度末（7.7兆円）"),
        page="nd24c130", data_origin="ゆうちょ銀行・かんぽ生命 有価証券報告書"),
    JaItem(
        "ja_info_02", ImageType.INFOGRAPHIC, ECO, "我が国の研究者数",
        {"total": 908330, "firms": 529053, "ict": 157219, "ict_share": 29.7},
        _researcher_cards_draw, "企業以外（非営利団体・公的機関及び大学等）の研究者数は何人か。",
        lambda d: [man(d["total"] - d["firms"], "人"), f"{comma(d['total'] - d['firms'])}人"], "37万9,277人", (MH,),
        ("研究者数 15 （企業、非営利団体・公的機関及び大学等の研究者数の合計）は90万8,330人、そのうち企業の研究者数は52万9,053人",
         "情報通信産業の研究者数は15万7,219人（29.7％）"),
        page="nd241520", data_origin="総務省「令和4年科学技術研究調査」"),
    JaItem(
        "ja_info_03", ImageType.INFOGRAPHIC, ECO, "我が国の科学技術研究費",
        {"total": 197408, "firms": 142244, "ict": 34420, "ict_share": 24.2},
        _rd_cards_draw, "情報通信産業以外の企業の研究費はいくらか。",
        lambda d: [oku_yen(d["firms"] - d["ict"])], "10兆7,824億円", (MH,),
        ("総額（企業、非営利団体・公的機関及び大学等の研究費の合計）は19兆7,408億円、そのうち企業の研究費は14兆2,244億円",
         "情報通信産業 11 の研究費は3兆4,420億円（24.2%）"),
        page="nd241510", data_origin="総務省「令和4年科学技術研究調査」"),
    JaItem(
        "ja_info_04", ImageType.INFOGRAPHIC, INF, "特定信書便事業の概況",
        {"entrants": 583, "sales": 183, "sales_change": 7.6, "items": 2006, "items_change": 4.7},
        _shinsho_draw, "2020年度の引受信書便物数はおよそ何万通か。整数で答えよ。",
        _shinsho_answer, "約2,105万通", (MH,),
        ("特定信書便事業の売上高は、183億円となっており、前年度から7.6％の減少", "2022年度末現在で583者が参入",
         "2021年度の引受信書便物数は、2,006万通となっており、前年度から4.7％の減少"),
        page="nd24c210", data_origin="総務省資料"),
    JaItem(
        "ja_info_05", ImageType.INFOGRAPHIC, ECO, "日本郵政グループの組織",
        {"subsidiaries": {"日本郵便": 100.0, "ゆうちょ銀行": 60.6, "かんぽ生命": 49.8}},
        _group_draw, "日本郵政の議決権保有割合が最も高い会社と最も低い会社の差は何ポイントか。",
        _group_answer, "50.2ポイント", (MH, VIS),
        ("日本郵便の発行済株式を100％保有するとともに、ゆうちょ銀行株式の議決権保有割合の60.6％、かんぽ生命株式の議決権保有割合の49.8％を保有",),
        page="nd24c110", data_origin="日本郵政（株）決算資料"),
]
