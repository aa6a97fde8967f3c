"""``sample-ja`` items drawn as bar, line and stacked-area charts (numbers from 令和5年版 情報通信白書 and 国勢調査)."""

# ruff: noqa: E501 - verbatim Japanese quotes and captions; ruff counts each full-width character as two columns

from __future__ import annotations

from typing import Any

from matplotlib.figure import Figure

from zuhyo.schema import Flag, ImageType, TopicGroup
from zuhyo_samples import ja_plots as jp
from zuhyo_samples.common import PALETTE, comma, fixed, man_from_man
from zuhyo_samples.ja_items import JaItem

D = dict[str, Any]
ECO, SOC, INF = TopicGroup.ECONOMY, TopicGroup.SOCIETY, TopicGroup.INFRASTRUCTURE
MH, GL, CNT, EXT, VIS = Flag.MULTI_HOP, Flag.GLOBAL, Flag.COUNTING, Flag.EXTERNAL_KNOWLEDGE, Flag.VISUAL


def _researchers_draw(d: D) -> Figure:
    fig = jp.frame("図表　主要国の研究者数（各国の最新年）", "文部科学省科学技術・学術政策研究所「科学技術指標2022」")
    labels = [f"{c}\n({y}年)" for c, y in zip(d["countries"], d["years"], strict=True)]
    jp.bars(jp.body(fig), labels, d["values"], "万人", fmt="{:.1f}", highlight=d["countries"].index("日本"))
    return fig


def _researchers_answer(d: D) -> list[str]:
    jpn = d["values"][d["countries"].index("日本")]
    fewer = sum(v for v in d["values"] if v < jpn)
    diff = fixed(fewer - jpn, 1)
    return [f"{diff}万人", f"{int(round(float(diff) * 10_000)):,}人"]


def _ai_firms_draw(d: D) -> Figure:
    fig = jp.frame("図表　新たに資金調達を受けたAI企業数（国別・2022年）",
                   "Stanford University「Artificial Intelligence Index Report 2023」")
    labels = [f"{c}（{r}位）" for c, r in zip(d["countries"], d["ranks"], strict=True)]
    jp.bars(jp.body(fig, (0.2, 0.14, 0.74, 0.72)), labels, d["values"], "社", horizontal=True)
    return fig


def _ai_firms_answer(d: D) -> list[str]:
    v = dict(zip(d["countries"], d["values"], strict=True))
    return [f"{fixed((v['米国'] + v['中国']) / v['日本'], 1)}倍"]


def _streaming_draw(d: D) -> Figure:
    fig = jp.frame("図表　日本の動画配信・音楽配信・電子書籍の市場規模（2022年）",
                   "GEM Partners、日本レコード協会、全国出版協会・出版科学研究所の資料を基に作成")
    ax = jp.body(fig)
    jp.bars(ax, d["markets"], d["values"], "億円")
    for i, g in enumerate(d["growth"]):
        ax.text(i, d["values"][i] * 0.5, f"前年比\n+{g}%", ha="center", va="center", color="white", fontsize=9)
    return fig


def _streaming_answer(d: D) -> list[str]:
    hi = max(range(3), key=lambda i: d["growth"][i])
    lo = min(range(3), key=lambda i: d["growth"][i])
    return [f"{comma(abs(d['values'][hi] - d['values'][lo]))}億円"]


def _mvno_draw(d: D) -> Figure:
    fig = jp.frame("図表　移動系通信の契約数における事業者別シェア（2022年12月末）",
                   "総務省「電気通信サービスの契約数及びシェアに関する四半期データの公表（令和4年度第3四半期）」")
    jp.grouped_bars(jp.body(fig), d["carriers"], {"自社シェア": d["own"], "MVNOへの提供に係るものを含む": d["incl"]},
                    "％", fmt="{:.1f}")
    return fig


def _mvno_answer(d: D) -> list[str]:
    gaps = [b - a for a, b in zip(d["own"], d["incl"], strict=True)]
    i = max(range(len(gaps)), key=gaps.__getitem__)
    return [f"{d['carriers'][i]}（{fixed(gaps[i], 1)}ポイント）"]


def _basestation_draw(d: D) -> Figure:
    fig = jp.frame("図表　世界の基地局市場の企業別シェア（2022年・出荷額）", "Omdia")
    jp.grouped_bars(jp.body(fig), d["vendors"], {"5G基地局（マクロセル）": d["g5"], "マクロセル基地局（5G含む）": d["macro"]},
                    "％", fmt="{:.1f}")
    return fig


def _basestation_answer(d: D) -> list[str]:
    gaps = [abs(a - b) for a, b in zip(d["g5"], d["macro"], strict=True)]
    i = max(range(len(gaps)), key=gaps.__getitem__)
    return [f"{d['vendors'][i]}（{fixed(gaps[i], 1)}ポイント）"]


def _platform_growth_draw(d: D) -> Figure:
    fig = jp.frame("図表　日米中の主なプラットフォーマーの売上高の伸び（2021年、2016年比）", "各社資料を基に作成")
    jp.bars(jp.body(fig), d["companies"], d["multiples"], "倍", fmt="{:.1f}倍")
    return fig


def _platform_growth_answer(d: D) -> list[str]:
    jp_vals = [m for c, m in zip(d["companies"], d["multiples"], strict=True) if d["country"][c] == "日本"]
    mean = sum(jp_vals) / len(jp_vals)
    return [f"{fixed(d['multiples'][d['companies'].index('Alibaba')] / mean, 1)}倍"]


def _services_draw(d: D) -> Figure:
    fig = jp.frame("図表　大手プラットフォーマーのサービスの利用経験（4か国全体、複数回答）",
                   "総務省（2023）「国内外における最新の情報通信技術の研究開発及びデジタル活用の動向に関する調査研究」")
    jp.bars(jp.body(fig, (0.22, 0.14, 0.72, 0.72)), d["services"], d["values"], "％", horizontal=True, fmt="{:.1f}")
    return fig


def _services_answer(d: D) -> list[str]:
    google = [v for s, v in zip(d["services"], d["values"], strict=True) if d["provider"][s] == "Google"]
    return [f"{fixed(sum(google) / len(google), 1)}%"]


def _ads_draw(d: D) -> Figure:
    fig = jp.frame("図表　GoogleとFacebookの広告収入（2022年）", "各社資料を基に作成")
    ax = jp.body(fig)
    jp.bars(ax, d["companies"], d["ad"], "億ドル")
    for i, s in enumerate(d["share"]):
        ax.text(i, d["ad"][i] * 0.5, f"売上高全体の\n{s}％", ha="center", va="center", color="white", fontsize=10)
    return fig


def _ads_answer(d: D) -> list[str]:
    non_ad = [a / (s / 100) - a for a, s in zip(d["ad"], d["share"], strict=True)]
    return [f"約{fixed(non_ad[0] / non_ad[1], 0)}倍"]


def _anxiety_draw(d: D) -> Figure:
    fig = jp.frame("図表　インターネット利用時に感じる不安の内容（上位3項目、複数回答）", "総務省「令和4年通信利用動向調査」")
    jp.bars(jp.body(fig, (0.36, 0.2, 0.58, 0.66)), d["items"], d["values"], "％", horizontal=True, fmt="{:.1f}")
    fig.text(0.36, 0.09, f"※インターネット利用者のうち不安を感じる人は約{d['anxious']}％。割合は不安を感じる人に占めるもの",
             fontsize=8)
    return fig


def _anxiety_answer(d: D) -> list[str]:
    v = d["values"][d["items"].index("コンピューターウイルスへの感染")]
    return [f"約{fixed(d['anxious'] * v / 100, 0)}%"]


def _census_draw(d: D) -> Figure:
    fig = jp.frame("図表　我が国の総人口の推移（国勢調査）", "総務省統計局「国勢調査」")
    vals = [round(p / 10_000, 1) for p in d["population"]]
    ax = jp.body(fig)
    jp.lines(ax, [f"{y}年" for y in d["years"]], {"総人口": vals}, "万人", fmt="{:,.1f}")
    ax.set_ylim(12_200, 12_900)
    return fig


def _census_answer(d: D) -> list[str]:
    diffs = [b - a for a, b in zip(d["population"], d["population"][1:], strict=False)]
    i = max(range(len(diffs)), key=diffs.__getitem__)
    year = d["years"][i + 1]
    return [f"{year}年", f"平成{year - 1988}年"]


def _mobile_ratio_draw(d: D) -> Figure:
    fig = jp.frame("図表　人口に対する携帯電話の契約数の割合", "ITU統計を基に作成")
    jp.lines(jp.body(fig), ["2010年", "2021年"], d["series"], "％", fmt="{:.1f}")
    return fig


def _mobile_ratio_answer(d: D) -> list[str]:
    name = min(d["series"], key=lambda k: d["series"][k][1] - d["series"][k][0])
    return [f"{d['series'][name][0]}%"]


def _social_draw(d: D) -> Figure:
    fig = jp.frame("図表　ソーシャルメディア利用者数の推移及び予測", "Statista")
    for k, (key, title, unit) in enumerate((("world", "世界", "億人"), ("japan", "日本", "万人"))):
        ax = jp.body(fig, (0.08 + 0.48 * k, 0.14, 0.4, 0.66))
        s = d[key]
        fmt = "{:.1f}" if key == "world" else "{:,}"
        jp.lines(ax, [f"{y}年" for y in s["years"]], {title: s["values"]}, unit, fmt=fmt)
        ax.set_title(title, fontsize=10)
        ax.set_ylim(0, max(s["values"]) * 1.25)
    return fig


def _social_answer(d: D) -> list[str]:
    w = d["world"]["values"][1] / d["world"]["values"][0] - 1
    j = d["japan"]["values"][1] / d["japan"]["values"][0] - 1
    return [f"約{fixed(w / j, 1)}倍"]


def _vr_draw(d: D) -> Figure:
    fig = jp.frame("図表　世界のVRヘッドセットの出荷台数（実績及び予測）", "IDC資料を基に作成")
    ax = jp.body(fig)
    jp.lines(ax, ["2022年", "2026年（予測）"], {"出荷台数": d["values"]}, "万台")
    ax.set_ylim(0, 3_000)
    ax.text(0.5, 0.15, f"2026年の予測値は2019年の{d['multiple_vs_2019']}倍", transform=ax.transAxes, ha="center",
            fontsize=10, bbox={"facecolor": "#fff5e6", "edgecolor": PALETTE[1]})
    return fig


def _vr_answer(d: D) -> list[str]:
    return [f"約{fixed(d['values'][1] / d['multiple_vs_2019'], 0)}万台"]


def _mynumber_draw(d: D) -> Figure:
    fig = jp.frame("図表　マイナンバーカードの交付率", "総務省資料を基に作成")
    ax = jp.body(fig)
    jp.lines(ax, d["dates"], {"交付率": d["rates"]}, "％", fmt="{:.1f}")
    ax.set_ylim(0, 100)
    return fig


def _mynumber_answer(d: D) -> list[str]:
    step = d["rates"][1] - d["rates"][0]
    rate, year = d["rates"][1], d["last_year"]
    while rate <= 90:
        rate += step
        year += 1
    return [f"{year}年3月末", f"令和{year - 2018}年3月末"]


def _tv_draw(d: D) -> Figure:
    fig = jp.frame("図表　世界の4K・8K対応テレビの出荷金額", "富士キメラ総研「5G時代の映像伝送技術／8Kビジネスの将来展望2022」")
    jp.stacked_area(jp.body(fig), d["years"], d["layers"], "兆円", ["2021年（見込）", "2030年（予測）"], fmt="{:.2f}")
    return fig


def _tv_answer(d: D) -> list[str]:
    total = sum(v[1] for v in d["layers"].values())
    return [f"{fixed(d['layers']['8K以上'][1] / total * 100, 1)}%"]


def _phones_draw(d: D) -> Figure:
    fig = jp.frame("図表　世界のスマートフォン出荷台数（5G対応・非対応）", "矢野経済研究所「世界の携帯電話サービス契約数・スマートフォン出荷台数調査（2022年）」")
    ax = jp.body(fig)
    non5g = [t - g for t, g in zip(d["total"], d["g5"], strict=True)]
    ax.stackplot(d["years"], d["g5"], non5g, labels=["5G対応", "5G非対応"], colors=PALETTE[:2], alpha=0.85)
    ax.text(d["years"][0] + 0.2, d["g5"][0] / 2, man_from_man(d["g5"][0], "台"), color="white", fontsize=10)
    for x, t in zip(d["years"], d["total"], strict=True):
        ax.annotate(f"合計 {man_from_man(t, '台')}", (x, t), textcoords="offset points", xytext=(0, 6),
                    ha="left" if x == d["years"][0] else "right", fontsize=9)
    ax.set_xticks(d["years"], ["2021年", "2030年（予測）"])
    ax.set_xlim(d["years"][0], d["years"][-1])
    ax.set_ylim(0, max(d["total"]) * 1.2)
    ax.legend(frameon=False, loc="upper left", fontsize=9)
    jp.unit_label(ax, "万台")
    return fig


def _phones_answer(d: D) -> list[str]:
    return [man_from_man(d["total"][0] - d["g5"][0], "台")]


def _jp5g_draw(d: D) -> Figure:
    fig = jp.frame("図表　日本の5G対応スマートフォンの出荷台数", "CIAJ「通信機器中期需要予測[2022年度～2027年度]」")
    ax = jp.body(fig)
    ax.fill_between(d["years"], d["values"], color=PALETTE[2], alpha=0.7)
    ax.plot(d["years"], d["values"], color=PALETTE[2], marker="o")
    for x, v in zip(d["years"], d["values"], strict=True):
        ax.annotate(f"{v:,}", (x, v), textcoords="offset points", xytext=(0, 6), ha="center")
    ax.set_xticks(d["years"], ["2021年", "2027年度（予測）"])
    ax.set_ylim(0, 3_800)
    ax.text(0.03, 0.9, f"2021年は前年比{d['growth_2021']}％増", transform=ax.transAxes, fontsize=10)
    jp.unit_label(ax, "万台")
    return fig


def _jp5g_answer(d: D) -> list[str]:
    return [f"約{comma(int(fixed(d['values'][0] / (1 + d['growth_2021'] / 100), 0)))}万台"]


CENSUS_URL = "https://www.stat.go.jp/data/kokusei/2020/index.html"

ITEMS: list[JaItem] = [
    JaItem(
        "ja_bar_01", ImageType.BAR, ECO, "主要国の研究者数",
        {"countries": ["中国", "米国", "日本", "ドイツ", "韓国", "フランス", "英国"],
         "values": [228.1, 158.6, 69.0, 45.2, 44.7, 32.2, 31.6], "years": [2020, 2019, 2021, 2020, 2020, 2020, 2019]},
        _researchers_draw,
        "グラフ中で日本より研究者数が少ない国すべての研究者数の合計は、日本の研究者数より何万人多いか。",
        _researchers_answer, "84.7万人", (MH, GL),
        ("日本の研究者数は2021年において69.0万人であり、中国（2020年：228.1万人）、米国（2019年：158.6万人）に次ぐ第3位",
         "ドイツ（2020年：45.2万人）、韓国（2020年：44.7万人）、フランス（2020年：32.2万人）、英国（2019年：31.6万人）"),
        page="nd241520", data_origin="文部科学省科学技術・学術政策研究所「科学技術指標2022」"),
    JaItem(
        "ja_bar_02", ImageType.BAR, ECO, "新たに資金調達を受けたAI企業数",
        {"countries": ["米国", "中国", "日本"], "ranks": [1, 2, 10], "values": [542, 160, 32]},
        _ai_firms_draw, "米国と中国の社数の合計は、日本の社数の何倍か。小数第1位まで答えよ。",
        _ai_firms_answer, "21.9倍", (MH,),
        ("米国が542社で1位、中国が160社で2位、日本が32社で10位",),
        page="nd249200", data_origin="Stanford University「Artificial Intelligence Index Report 2023」"),
    JaItem(
        "ja_bar_03", ImageType.BAR, SOC, "日本の動画配信・音楽配信・電子書籍の市場規模",
        {"markets": ["動画配信", "音楽配信", "電子書籍"], "values": [5305, 1050, 5013], "growth": [15.0, 17.3, 7.5]},
        _streaming_draw, "前年比の伸び率が最も高い市場と最も低い市場について、2022年の市場規模の差は何億円か。",
        _streaming_answer, "3,963億円", (MH, VIS),
        ("2022年の日本の動画配信市場は5,305億円（前年比15.0％増）、音楽配信市場は1,050億円（前年比17.3％増）、"
         "電子書籍市場は5,013億円（前年比7.5％増）",),
        page="nd247400", data_origin="GEM Partners、日本レコード協会「日本のレコード産業2023」、全国出版協会・出版科学研究所「出版月報」"),
    JaItem(
        "ja_bar_04", ImageType.BAR, INF, "移動系通信の事業者別シェア（MVNOへの提供分の有無）",
        {"carriers": ["NTTドコモ", "KDDIグループ", "ソフトバンク"], "own": [36.1, 27.0, 20.9], "incl": [41.7, 30.4, 25.7]},
        _mvno_draw, "MVNOへの提供に係るものを含めたシェアと含めないシェアの差が最も大きい事業者はどこか。また、その差は何ポイントか。",
        _mvno_answer, "NTTドコモ（5.6ポイント）", (MH, GL),
        ("NTTドコモが36.1％（前年同期比0.5ポイント減、MVNOへの提供に係るものを含めると41.7％）、KDDIグループが27.0％"
         "（同0.1ポイント減、同30.4％）、ソフトバンクが20.9％（同±0ポイント、同25.7％）",),
        page="nd242260", data_origin="総務省「電気通信サービスの契約数及びシェアに関する四半期データの公表（令和4年度第3四半期（12月末））」"),
    JaItem(
        "ja_bar_05", ImageType.BAR, INF, "世界の基地局市場の企業別シェア",
        {"vendors": ["Huawei", "Ericsson", "Nokia"], "g5": [29.8, 25.1, 15.3], "macro": [31.6, 25.3, 17.5]},
        _basestation_draw, "5G基地局とマクロセル基地局（5G含む）とでシェアの差が最も大きい企業はどこか。その差は何ポイントか。",
        _basestation_answer, "Nokia（2.2ポイント）", (MH, GL),
        ("首位がHuawei（29.8％）、2位がEricsson（25.1％）、3位がNokia（15.3%）",
         "首位がHuawei（31.6％）、2位がEricsson（25.3％）、3位がNokia（17.5％）"),
        page="nd245120", data_origin="Omdia"),
    JaItem(
        "ja_bar_06", ImageType.BAR, ECO, "プラットフォーマーの売上高の伸び",
        {"companies": ["Amazon", "Alibaba", "楽天", "Zホールディングス", "ソニー", "富士通"],
         "multiples": [3.5, 7.3, 2.1, 1.8, 1.3, 0.8],
         "country": {"Amazon": "米国", "Alibaba": "中国", "楽天": "日本", "Zホールディングス": "日本", "ソニー": "日本",
                     "富士通": "日本"}},
        _platform_growth_draw, "Alibabaの売上高の伸び（倍率）は、グラフ中の日本企業の倍率の平均の何倍か。小数第1位まで答えよ。",
        _platform_growth_answer, "4.9倍", (MH, EXT),
        ("最も大きいのはAmazon（約51兆5,648億円）で2016年比3.5倍", "中国のAlibaba（12兆2,080億円）は2016年比で7.3倍",
         "楽天2.1倍、Zホールディングス1.8倍、ソニー1.3倍、富士通0.8倍"),
        page="nd246100", data_origin="各企業の公開資料（白書図表4-6-1-2）"),
    JaItem(
        "ja_bar_07", ImageType.BAR, SOC, "大手プラットフォーマーのサービスの利用経験",
        {"services": ["Google Map", "YouTube", "amazon（オンラインショッピング）", "Gmail", "Google Search", "Facebook"],
         "values": [66.5, 63.8, 61.3, 56.1, 55.3, 50.2],
         "provider": {"Google Map": "Google", "YouTube": "Google", "amazon（オンラインショッピング）": "Amazon",
                      "Gmail": "Google", "Google Search": "Google", "Facebook": "Meta"}},
        _services_draw, "グラフ中のサービスのうち、Google社が提供するものの利用率の平均は何%か。小数第1位まで答えよ。",
        _services_answer, "60.4%", (EXT, MH, CNT),
        ("「Google Map」（66.5%）、「YouTube」（63.8%）、「amazon（オンラインショッピング）」（61.3%）、「Gmail」（56.1%）、"
         "「Google Search」（55.3%）、「Facebook」（50.2%）",),
        page="nd122320", data_origin="総務省（2023）「国内外における最新の情報通信技術の研究開発及びデジタル活用の動向に関する調査研究」"),
    JaItem(
        "ja_bar_08", ImageType.BAR, ECO, "GoogleとFacebookの広告収入",
        {"companies": ["Google", "Facebook"], "ad": [2245, 1136], "share": [79.4, 97.5]},
        _ads_draw, "広告以外の収入（売上高全体から広告収入を除いた額）は、GoogleがFacebookの約何倍か。整数で答えよ。",
        _ads_answer, "約20倍", (MH,),
        ("2022年のGoogleの広告収入は、約2,245億ドル（売上高全体の79.4％）、Facebookの広告収入は、約1,136億ドル（売上高全体の97.5％）",),
        page="nd122310", data_origin="各社の年次報告書"),
    JaItem(
        "ja_bar_09", ImageType.BAR, SOC, "インターネット利用時に感じる不安の内容",
        {"items": ["個人情報やインターネット利用履歴の漏洩", "コンピューターウイルスへの感染", "架空請求やインターネットを利用した詐欺"],
         "values": [88.7, 64.3, 53.8], "anxious": 70},
        _anxiety_draw, "インターネット利用者全体のうち、「コンピューターウイルスへの感染」に不安を感じる人はおよそ何%か。整数で答えよ。",
        _anxiety_answer, "約45%", (MH,),
        ("インターネットを利用している者の約70％がインターネットの利用時に何らかの不安を感じており",
         "「個人情報やインターネット利用履歴の漏洩」の割合が88.7％と最も高く、次いで「コンピューターウイルスへの感染」（64.3％）、"
         "「架空請求やインターネットを利用した詐欺」（53.8%）"),
        page="nd24b110", data_origin="総務省「通信利用動向調査」"),
    JaItem(
        "ja_bar_10", ImageType.BAR, SOC, "2022年のネット広告とマスコミ4媒体広告",
        {"companies": ["インターネット広告費", "マスコミ4媒体広告費"], "ad": [30912, 23985], "share": [None, None]},
        lambda d: _ad_media_draw(d),
        "2022年のインターネット広告費は、マスコミ4媒体広告費の何倍か。小数第2位まで答えよ。",
        lambda d: [f"{fixed(d['ad'][0] / d['ad'][1], 2)}倍"], "1.29倍", (MH,),
        ("2022年にはインターネット広告が3兆912億円、マスコミ4媒体 8 広告が2兆3,985億円",),
        page="nd243220", data_origin="電通「2022年 日本の広告費」"),
    JaItem(
        "ja_line_01", ImageType.LINE, SOC, "我が国の総人口の推移（国勢調査）",
        {"years": [1990, 1995, 2000, 2005, 2010, 2015, 2020],
         "population": [123_611_167, 125_570_246, 126_925_843, 127_767_994, 128_057_352, 127_094_745, 126_146_099]},
        _census_draw, "前回調査からの人口の増加数が最も大きかったのは何年の調査か。",
        _census_answer, "1995年", (MH, GL),
        source_title="国勢調査（総人口の推移）", source_publisher="総務省統計局", source_url=CENSUS_URL, source_license=None,
        data_origin="総務省統計局「国勢調査」各回の確定値（総人口）", white_paper="国勢調査（総務省統計局）"),
    JaItem(
        "ja_line_02", ImageType.LINE, INF, "人口に対する携帯電話の契約数の割合",
        {"series": {"日本": [96.2, 159.7], "米国": [91.6, 107.3], "中国": [63.7, 121.5]}},
        _mobile_ratio_draw, "2010年から2021年にかけての増加幅が最も小さい国について、2010年の値は何%か。",
        _mobile_ratio_answer, "91.6%", (MH, GL),
        ("日本は159.7％（2010年差63.5ポイント増）、米国は107.3％（2010年差15.7ポイント増）、中国は121.5％（2010年差57.8ポイント増）",),
        page="nd242100", data_origin="ITU統計（2010年の値は白書の記述「2010年差」から算出）"),
    JaItem(
        "ja_line_03", ImageType.LINE, SOC, "ソーシャルメディア利用者数の推移及び予測",
        {"world": {"years": [2022, 2028], "values": [45.9, 60.3]}, "japan": {"years": [2022, 2027], "values": [10200, 11300]}},
        _social_draw, "2022年から予測最終年までの利用者数の増加率について、世界の増加率は日本の増加率の約何倍か。小数第1位まで答えよ。",
        _social_answer, "約2.9倍", (MH,),
        ("2022年の45億9,000万人から2028年には60億3,000万人に増加すると予測",
         "日本のソーシャルメディア利用者数は、2022年の1億200万人から2027年には1億1,300万人に増加すると予測"),
        page="nd247100", data_origin="Statista"),
    JaItem(
        "ja_line_04", ImageType.LINE, SOC, "世界のVRヘッドセットの出荷台数",
        {"values": [1253, 2598], "multiple_vs_2019": 4.2},
        _vr_draw, "2019年の世界のVRヘッドセットの出荷台数はおよそ何万台か。整数で答えよ。",
        _vr_answer, "約619万台", (MH,),
        ("2022年には1,253万台（前年比0.3％増）となっており、2026年には、2019年から4.2倍増の2,598万台まで増加すると予測",),
        page="nd245220", data_origin="IDC"),
    JaItem(
        "ja_line_05", ImageType.LINE, SOC, "マイナンバーカードの交付率",
        {"dates": ["2022年3月末", "2023年3月末"], "rates": [42.4, 67.0], "last_year": 2023},
        _mynumber_draw,
        "この1年間と同じ上昇幅（ポイント）で毎年上昇が続くと仮定すると、交付率が初めて90%を超えるのは何年の3月末か。",
        _mynumber_answer, "2024年3月末", (MH,),
        ("2023年3月末時点のマイナンバーカードの交付率は67.0％であり、2022年3月末の42.4％から大きく向上している",),
        page="nd24b310", data_origin="総務省「マイナンバーカード交付状況」"),
    JaItem(
        "ja_area_01", ImageType.AREA, ECO, "世界の4K・8K対応テレビの出荷金額",
        {"years": [2021, 2030], "layers": {"4K未満": [3.17, 0.77], "4K以上8K未満": [13.9, 19.0], "8K以上": [0.14, 5.2]}},
        _tv_draw, "2030年の出荷金額の合計に占める8K以上の割合は何%か。小数第1位まで答えよ。",
        _tv_answer, "20.8%", (MH, GL),
        ("4K以上8K未満が13兆9,000億円と大きく、2030年には19兆円まで拡大",
         "4K未満は、2021年見込みで3兆1,700億円だが、2030年には7,700億円まで縮小",
         "8K以上は、2021年見込みは1,400億円と小さいが、2030年には5兆2,000億円までの拡大"),
        page="nd245220", data_origin="富士キメラ総研「5G時代の映像伝送技術／8Kビジネスの将来展望2022」"),
    JaItem(
        "ja_area_02", ImageType.AREA, ECO, "世界のスマートフォン出荷台数",
        {"years": [2021, 2030], "g5": [58452, 155000], "total": [127634, 155000]},
        _phones_draw, "2021年の5G非対応スマートフォンの出荷台数は何台か。",
        _phones_answer, "6億9,182万台", (MH, VIS),
        ("2021年は5憶8,452万台であり、スマートフォン全体（12億7,634万台）の46％", "2030年には15億5,000万台まで拡大"),
        page="nd245220", data_origin="矢野経済研究所「世界の携帯電話サービス契約数・スマートフォン出荷台数調査（2022年）」"),
    JaItem(
        "ja_area_03", ImageType.AREA, ECO, "日本の5G対応スマートフォンの出荷台数",
        {"years": [2021, 2027], "values": [1753, 3218], "growth_2021": 67.7},
        _jp5g_draw, "2020年の5G対応スマートフォンの出荷台数はおよそ何万台か。整数で答えよ。",
        _jp5g_answer, "約1,045万台", (MH,),
        ("国内の5G対応スマートフォンの出荷台数は、2021年で1,753万台（前年比67.7％増）",
         "2027年度には3,218万台まで拡大"),
        page="nd245220", data_origin="CIAJ「通信機器中期需要予測[2022年度～2027年度]」"),
]


def _ad_media_draw(d: D) -> Figure:
    fig = jp.frame("図表　日本の媒体別広告費（2022年）", "電通「2022年 日本の広告費」")
    jp.bars(jp.body(fig), d["companies"], d["ad"], "億円")
    return fig
