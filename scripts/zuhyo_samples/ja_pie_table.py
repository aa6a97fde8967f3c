"""``sample-ja`` items drawn as pie/donut charts and ruled tables (numbers from 令和5年版 情報通信白書)."""

# ruff: noqa: E501 - verbatim Japanese quotes and captions; ruff counts each full-width character as two columns

from __future__ import annotations

from typing import Any

from matplotlib.figure import Figure

from zuhyo.schema import Flag, ImageType, TopicGroup
from zuhyo_samples import ja_plots as jp
from zuhyo_samples.common import comma, fixed, man_from_man
from zuhyo_samples.ja_items import JaItem

D = dict[str, Any]
ECO, SOC, INF, DIP = TopicGroup.ECONOMY, TopicGroup.SOCIETY, TopicGroup.INFRASTRUCTURE, TopicGroup.DIPLOMACY
MH, GL, CNT, EXT, VIS = Flag.MULTI_HOP, Flag.GLOBAL, Flag.COUNTING, Flag.EXTERNAL_KNOWLEDGE, Flag.VISUAL


def _pie_fig(caption: str, source: str, labels: list[str], values: list[float], *, donut: bool = False,
             value_fmt: str | None = None, center: str | None = None) -> Figure:
    fig = jp.frame(caption, source, size=(6.4, 4.8))
    ax = fig.add_axes((0.1, 0.1, 0.8, 0.78))
    jp.pie(ax, labels, values, donut=donut, value_fmt=value_fmt, center_text=center)
    return fig


def _telecom_draw(d: D) -> Figure:
    other = 100 - d["data"] - d["voice"]
    return _pie_fig("図表　電気通信業の売上高構成比（2021年度）", "総務省「情報通信業基本調査」",
                    ["データ伝送", "音声伝送", "その他"], [d["data"], d["voice"], other], donut=True,
                    value_fmt="{:.1f}%", center=f"売上高合計\n約{d['total']}兆円")


def _telecom_answer(d: D) -> list[str]:
    return [f"約{fixed(d['total'] * (100 - d['data'] - d['voice']) / 100, 1)}兆円"]


def _primary_draw(d: D) -> Figure:
    return _pie_fig("図表　1次流通市場の内訳（2021年）", "総務省情報通信政策研究所「メディア・ソフトの制作及び流通の実態に関する調査」",
                    d["labels"], d["values"], value_fmt="{:,}億円")


def _share_answer(d: D) -> list[str]:
    i = d["labels"].index(d["target"])
    return [f"{fixed(d['values'][i] / sum(d['values']) * 100, 1)}%"]


def _multiuse_draw(d: D) -> Figure:
    return _pie_fig("図表　マルチユース市場の内訳（2021年）", "総務省情報通信政策研究所「メディア・ソフトの制作及び流通の実態に関する調査」",
                    d["labels"], d["values"], donut=True, value_fmt="{:,}億円", center="2兆9,034億円")


def _multiuse_answer(d: D) -> list[str]:
    return [f"{fixed(d['values'][0] / (d['values'][1] + d['values'][2]), 2)}倍"]


def _carrier_share_draw(d: D) -> Figure:
    labels = [f"{c}（{ch}）" for c, ch in zip(d["carriers"], d["change_label"], strict=True)]
    fig = _pie_fig("図表　移動系通信の契約数における事業者別シェア（2022年12月末）",
                   "総務省「電気通信サービスの契約数及びシェアに関する四半期データの公表」", labels, d["share"],
                   value_fmt="{:.1f}%")
    fig.text(0.5, 0.07, "（　）内は前年同期比", ha="center", fontsize=8)
    return fig


def _carrier_share_answer(d: D) -> list[str]:
    prev = {c: s - ch for c, s, ch in zip(d["carriers"], d["share"], d["change"], strict=True)}
    return [f"{fixed(prev['MVNO'] / prev['楽天モバイル'], 1)}倍"]


def _traffic_draw(d: D) -> Figure:
    labels = d["apps"] + ["その他"]
    return _pie_fig("図表　アプリケーション別モバイルインターネットトラヒックの割合（世界）", "SANDVINE",
                    labels, d["shares"] + [round(100 - sum(d["shares"]), 2)], value_fmt="{:.2f}%")


def _traffic_answer(d: D) -> list[str]:
    s = dict(zip(d["apps"], d["shares"], strict=True))
    return [f"{fixed((s['Facebook'] + s['Tiktok']) / s['Google'], 1)}倍"]


def _routers_draw(d: D) -> Figure:
    fig = jp.frame("図表　企業向けルーター市場のシェア（2022年・出荷金額）", "Omdia", size=(7.6, 4.6))
    for k, key in enumerate(("世界市場", "日本市場")):
        ax = fig.add_axes((0.02 + 0.5 * k, 0.08, 0.46, 0.74))
        names = list(d[key]) + ["その他"]
        vals = list(d[key].values())
        jp.pie(ax, names, vals + [round(100 - sum(vals), 1)], value_fmt="{:.1f}%")
        ax.set_title(key, fontsize=11)
    return fig


def _routers_answer(d: D) -> list[str]:
    only_jp = [v for n, v in d["日本市場"].items() if n not in d["世界市場"]]
    return [f"{fixed(sum(only_jp), 1)}%"]


def _table_fig(caption: str, source: str, header: list[str], rows: list[list[str]], size=(7.2, 3.6),
               col_widths: list[float] | None = None) -> Figure:
    fig = jp.frame(caption, source, size=size)
    jp.table(fig, header, rows, rect=(0.04, 0.14, 0.92, 0.7), col_widths=col_widths)
    return fig


def _post_draw(d: D) -> Figure:
    rows = [[n, comma(a), comma(b), comma(c)] for n, (a, b, c) in d["segments"].items()]
    return _table_fig("図表　日本郵便の事業別損益（2022年度、単位：億円）", "日本郵便（株）「決算の概要」を基に作成",
                      ["事業", "営業収益", "営業費用", "営業利益"], rows, col_widths=[0.34, 0.22, 0.22, 0.22])


def _post_answer(d: D) -> list[str]:
    ratios = {n: p / r * 100 for n, (r, _c, p) in d["segments"].items()}
    best = max(ratios, key=ratios.__getitem__)
    return [f"{best}（{fixed(ratios[best], 1)}%）"]


def _trade_draw(d: D) -> Figure:
    rows = [[n, f"{ex:.1f}", f"{im:.1f}"] for n, (ex, im) in d["rows"].items()]
    rows.append(["（参考）ICTの占める割合", f"{d['ict_share'][0]}%", f"{d['ict_share'][1]}%"])
    return _table_fig("図表　財・サービスの輸出入額（2021年、名目、単位：兆円）", "総務省「情報通信産業連関表」を基に作成",
                      ["区分", "輸出額", "輸入額"], rows, col_widths=[0.46, 0.27, 0.27])


def _trade_answer(d: D) -> list[str]:
    (ex_all, im_all), (ex_ict, im_ict) = d["rows"]["すべての財・サービス"], d["rows"]["ICT財・サービス"]
    return [f"{fixed((im_all - im_ict) - (ex_all - ex_ict), 1)}兆円"]


def _egov_draw(d: D) -> Figure:
    n = max(len(d["un"]), len(d["waseda"]))
    rows = [[f"{i + 1}位", d["un"][i] if i < len(d["un"]) else "", d["waseda"][i] if i < len(d["waseda"]) else ""]
            for i in range(n)]
    rows.append(["日本", f"{d['japan'][0]}位", f"{d['japan'][1]}位"])
    return _table_fig("図表　電子政府に関する国際ランキング（2022年）", "国連経済社会局（UNDESA）、早稲田大学電子政府・自治体研究所",
                      ["順位", "国連 世界電子政府ランキング", "早稲田大学 世界デジタル政府ランキング"], rows, size=(7.2, 4.2),
                      col_widths=[0.14, 0.43, 0.43])


def _egov_answer(d: D) -> list[str]:
    return [f"{sum(1 for c in d['un'] if c in d['nordic'])}か国"]


def _radio_draw(d: D) -> Figure:
    rows = [[n, comma(v), f"{s:+,}件"] for n, (v, s) in d["rows"].items()]
    return _table_fig("図表　電波監視の状況（2022年度）", "総務省作成", ["区分", "2022年度（件）", "前年度比"], rows,
                      col_widths=[0.5, 0.25, 0.25])


def _radio_answer(d: D) -> list[str]:
    prev = {n: v - s for n, (v, s) in d["rows"].items()}
    return [f"{fixed(prev['不法無線局の出現件数'] / prev['混信・妨害申告件数'], 1)}倍"]


def _stations_draw(d: D) -> Figure:
    rows = [[n, man_from_man(v, "局"), f"{g}%増"] for n, (v, g) in d["rows"].items()]
    return _table_fig("図表　無線局数（2022年度末）", "総務省作成", ["区分", "無線局数", "対前年度比"], rows,
                      col_widths=[0.44, 0.3, 0.26])


def _stations_answer(d: D) -> list[str]:
    r = d["rows"]
    return [man_from_man(r["無線局総数"][0] - r["うち携帯電話端末等の陸上移動局"][0] - r["うち簡易無線局"][0], "局")]


_CONTENT_ORIGIN = "総務省情報通信政策研究所「メディア・ソフトの制作及び流通の実態に関する調査」"

ITEMS: list[JaItem] = [
    JaItem(
        "ja_pie_01", ImageType.PIE, INF, "電気通信業の売上高構成比",
        {"data": 65.0, "voice": 19.2, "total": 15},
        _telecom_draw, "「その他」に当たる売上高はおよそ何兆円か。小数第1位まで答えよ。",
        _telecom_answer, "約2.4兆円", (MH,),
        ("2021年度の電気通信業に係る売上高の合計は、約15兆円と推計される。内訳をみると、データ伝送（固定及び移動）が約9.6兆円（65%）、"
         "音声伝送（同）が約2.8兆円（19.2%）",),
        page="nd242210", data_origin="総務省「情報通信業基本調査」"),
    JaItem(
        "ja_pie_02", ImageType.PIE, SOC, "1次流通市場の内訳",
        {"labels": ["映像系ソフト", "テキスト系ソフト", "音声系ソフト"], "values": [56004, 33056, 6626],
         "target": "テキスト系ソフト"},
        _primary_draw, "1次流通市場全体に占めるテキスト系ソフトの割合は何%か。小数第1位まで答えよ。",
        _share_answer, "34.5%", (MH, GL),
        ("2021年の1次流通市場の規模は9兆5,686億円", "映像系ソフトが5兆6,004億円、テキスト系ソフトが3兆3,056億円、音声系ソフトが6,626億円"),
        page="nd243210", data_origin=_CONTENT_ORIGIN),
    JaItem(
        "ja_pie_03", ImageType.PIE, SOC, "マルチユース市場の内訳",
        {"labels": ["映像系ソフト", "テキスト系ソフト", "音声系ソフト"], "values": [17732, 9910, 1391]},
        _multiuse_draw, "映像系ソフトの市場規模は、テキスト系ソフトと音声系ソフトの合計の何倍か。小数第2位まで答えよ。",
        _multiuse_answer, "1.57倍", (MH,),
        ("マルチユース市場の規模は2兆9,034億円", "映像系ソフトが1兆7,732億円、テキスト系ソフトが9,910億円、音声系ソフトが1,391億円"),
        page="nd243210", data_origin=_CONTENT_ORIGIN),
    JaItem(
        "ja_pie_04", ImageType.PIE, INF, "移動系通信の事業者別シェア",
        {"carriers": ["NTTドコモ", "KDDIグループ", "ソフトバンク", "楽天モバイル", "MVNO"],
         "share": [36.1, 27.0, 20.9, 2.2, 13.8], "change": [-0.5, -0.1, 0.0, -0.1, 0.6],
         "change_label": ["0.5ポイント減", "0.1ポイント減", "±0ポイント", "0.1ポイント減", "0.6ポイント増"]},
        _carrier_share_draw, "前年同期（2021年12月末）におけるMVNOのシェアは、同時期の楽天モバイルのシェアの何倍か。小数第1位まで答えよ。",
        _carrier_share_answer, "5.7倍", (MH,),
        ("楽天モバイルが2.2％（同0.1ポイント減）、MVNOが13.8％（同0.6ポイント増）",
         "NTTドコモが36.1％（前年同期比0.5ポイント減"),
        page="nd242260", data_origin="総務省「電気通信サービスの契約数及びシェアに関する四半期データの公表（令和4年度第3四半期（12月末））」"),
    JaItem(
        "ja_pie_05", ImageType.PIE, INF, "アプリケーション別モバイルインターネットトラヒック",
        {"apps": ["Facebook", "Google", "Tiktok", "Netflix"], "shares": [27.82, 19.09, 13.76, 2.41]},
        _traffic_draw, "FacebookとTiktokの割合の合計は、Googleの割合の何倍か。小数第1位まで答えよ。",
        _traffic_answer, "2.2倍", (MH,),
        ("Facebook（27.82%）が最も大きく、Google（19.09%）、Tiktok（13.76%）、Netflix（2.41%）が続いている",),
        page="nd122100", data_origin="SANDVINE「The Mobile Internet Phenomena Report」"),
    JaItem(
        "ja_pie_06", ImageType.PIE, INF, "企業向けルーター市場のシェア",
        {"世界市場": {"Cisco": 66.3, "H3C": 9.0, "Huawei": 6.0}, "日本市場": {"Cisco": 35.1, "NEC": 26.6, "Yamaha": 23.3}},
        _routers_draw, "日本市場の上位3社のうち、世界市場の上位3社に入っていない企業の日本市場でのシェアの合計は何%か。",
        _routers_answer, "49.9%", (MH, VIS),
        ("首位がCisco(66.3％)、2位がH3C(9.0％)、3位がHuawei(6.0％)", "首位がCisco(35.1％)、2位がNEC(26.6％)、3位がYamaha(23.3％)"),
        page="nd245120", data_origin="Omdia"),
    JaItem(
        "ja_table_01", ImageType.TABLE, ECO, "日本郵便の事業別損益",
        {"segments": {"郵便・物流事業": (19978, 19649, 328), "郵便局窓口事業": (10740, 10247, 493)}},
        _post_draw, "営業収益に対する営業利益の比率が高いのはどちらの事業か。また、その比率は何%か（小数第1位まで）。",
        _post_answer, "郵便局窓口事業（4.6%）", (MH,),
        ("郵便・物流事業の営業収益は1兆9,978億円、営業費用は1兆9,649億円、営業利益は前期比693億円減の328億円",
         "郵便局窓口事業の営業収益は1兆740億円、営業費用は1兆247億円、営業利益は前期比247億円増の493億円"),
        page="nd24c120", data_origin="日本郵便（株）決算資料"),
    JaItem(
        "ja_table_02", ImageType.TABLE, ECO, "財・サービスの輸出入額",
        {"rows": {"すべての財・サービス": (91.2, 111.2), "ICT財・サービス": (12.0, 19.2)}, "ict_share": (13.2, 17.3)},
        _trade_draw, "ICT財・サービス以外の財・サービスについて、輸入額から輸出額を引いた輸入超過額は何兆円か。",
        _trade_answer, "12.8兆円", (MH,),
        ("すべての財・サービスでは輸出額が91.2兆円、輸入額が111.2兆円",
         "輸出額は12兆円（全輸出額の13.2%）、輸入額は19.2兆円（全輸入額の17.3％）"),
        page="nd241400", data_origin="総務省「情報通信産業連関表」"),
    JaItem(
        "ja_table_03", ImageType.TABLE, DIP, "電子政府に関する国際ランキング",
        {"un": ["デンマーク", "フィンランド", "韓国", "ニュージーランド", "スウェーデン"],
         "waseda": ["デンマーク", "ニュージーランド", "カナダ"], "japan": (14, 10),
         "nordic": ["デンマーク", "フィンランド", "スウェーデン", "ノルウェー", "アイスランド"]},
        _egov_draw, "国連の世界電子政府ランキングの上位5か国のうち、北欧の国は何か国か。",
        _egov_answer, "3か国", (EXT, CNT),
        ("デンマークが1位であり、2位がフィンランド、3位が韓国、4位がニュージーランド、5位がスウェーデンと続く。日本は14位",
         "1位：デンマーク、2位：ニュージーランド、3位：カナダで、日本は前回から一つランクを下げ10位"),
        page="nd24b310", data_origin="国連経済社会局（UNDESA）「世界電子政府ランキング」、早稲田大学「世界デジタル政府ランキング」"),
    JaItem(
        "ja_table_04", ImageType.TABLE, INF, "電波監視の状況",
        {"rows": {"混信・妨害申告件数": (2432, 13), "うち重要無線通信妨害": (385, 87), "混信・妨害申告の措置件数": (2466, 0),
                  "不法無線局の出現件数": (4481, -4053), "不法無線局の措置件数": (1098, 297)}},
        lambda d: _radio_draw({"rows": {k: v for k, v in d["rows"].items() if k != "混信・妨害申告の措置件数"}}),
        "2021年度の不法無線局の出現件数は、同年度の混信・妨害申告件数の何倍か。小数第1位まで答えよ。",
        _radio_answer, "3.5倍", (MH,),
        ("2022年度の混信・妨害申告などの件数は2,432件で、前年度に比べ13件増となっており、そのうち重要無線通信妨害の件数は385件で、"
         "前年度に比べ87件増",
         "2022年度の不法無線局の出現件数は4,481件で、前年度に比べ4,053件減", "措置件数 3 は1,098件で、前年度に比べ297件増"),
        page="nd244400", data_origin="総務省作成"),
    JaItem(
        "ja_table_05", ImageType.TABLE, INF, "無線局数",
        {"rows": {"無線局総数": (30567, 4.7), "うち携帯電話端末等の陸上移動局": (30219, 4.7), "うち簡易無線局": (143, 0.9)}},
        _stations_draw, "陸上移動局と簡易無線局のいずれにも当たらない無線局は何局か。",
        _stations_answer, "205万局", (MH,),
        ("無線局数（無線LAN端末等の免許を要しない無線局を除く）は、3億567万局（対前年度比4.7%増）、そのうち携帯電話端末等の陸上移動局は"
         "3億219万局（対前年度比4.7%増）", "簡易無線局も143万局（対前年度比0.9%増）"),
        page="nd244200", data_origin="総務省作成"),
]
