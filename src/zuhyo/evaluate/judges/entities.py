"""Closed sets of names the ``rules`` judge can compare without an LLM (zuhyo's own rule, issue 21).

White-paper answers are often a prefecture or a country (HakushoBench §3.2 names knowledge of Japanese geography
among its difficulty flags). Within such a set two names are the same entity exactly when they map to one
canonical name (東京 = 東京都, アメリカ = 米国 = USA), and two different members are different answers — so
北海道 against 青森県 is *incorrect*, not a possible synonym. Names outside the sets stay for the LLM judge.

Input is normalised text (NFKC, lower case).
"""

from __future__ import annotations

import re

_PREFECTURES = (
    "北海道 青森県 岩手県 宮城県 秋田県 山形県 福島県 茨城県 栃木県 群馬県 埼玉県 千葉県 東京都 神奈川県 新潟県 富山県 "
    "石川県 福井県 山梨県 長野県 岐阜県 静岡県 愛知県 三重県 滋賀県 京都府 大阪府 兵庫県 奈良県 和歌山県 鳥取県 島根県 "
    "岡山県 広島県 山口県 徳島県 香川県 愛媛県 高知県 福岡県 佐賀県 長崎県 熊本県 大分県 宮崎県 鹿児島県 "
    "沖縄県").split()

#: canonical country name → other names (Japanese short and long forms, English, common abbreviations).
_COUNTRIES: dict[str, tuple[str, ...]] = {
    "日本": ("japan", "日本国"),
    "米国": ("アメリカ", "アメリカ合衆国", "合衆国", "united states", "united states of america", "the united states",
           "us", "u.s.", "usa", "u.s.a.", "america"),
    "中国": ("中華人民共和国", "china", "prc"),
    "韓国": ("大韓民国", "south korea", "korea", "republic of korea"),
    "北朝鮮": ("朝鮮民主主義人民共和国", "north korea", "dprk"),
    "台湾": ("taiwan",),
    "英国": ("イギリス", "連合王国", "united kingdom", "uk", "u.k.", "britain", "great britain"),
    "ドイツ": ("独", "germany", "ドイツ連邦共和国"),
    "フランス": ("仏", "france", "フランス共和国"),
    "イタリア": ("italy",),
    "カナダ": ("canada",),
    "ロシア": ("ロシア連邦", "russia", "russian federation"),
    "インド": ("india",),
    "オーストラリア": ("豪州", "australia"),
    "ブラジル": ("brazil",),
    "メキシコ": ("mexico",),
    "インドネシア": ("indonesia",),
    "タイ": ("thailand",),
    "ベトナム": ("vietnam", "viet nam"),
    "フィリピン": ("philippines", "the philippines"),
    "マレーシア": ("malaysia",),
    "シンガポール": ("singapore",),
    "スペイン": ("spain",),
    "オランダ": ("netherlands", "the netherlands"),
    "スウェーデン": ("sweden",),
    "スイス": ("switzerland",),
    "ニュージーランド": ("new zealand",),
    "サウジアラビア": ("saudi arabia",),
    "トルコ": ("turkey", "türkiye", "トルコ共和国"),
    "南アフリカ": ("south africa", "南アフリカ共和国"),
}

_NAMES: dict[str, tuple[str, str]] = {}
for _p in _PREFECTURES:
    _NAMES[_p] = ("prefecture", _p)
    if _p != "北海道":
        _NAMES[_p[:-1]] = ("prefecture", _p)
for _c, _aliases in _COUNTRIES.items():
    for _name in (_c, *_aliases):
        _NAMES[_name] = ("country", _c)
_JA_NAMES = sorted((n for n in _NAMES if not n.isascii() and len(n) >= 2), key=len, reverse=True)
_IN_TEXT = re.compile("(?:" + "|".join(re.escape(n) for n in _JA_NAMES) + ")"
                      r"(?!地方|地域|エリア|ブロック|四国|方面|市|区|町|村|郡|人|語|系|産|製|側)")
"""A name in text, not a region, city or adjective (中国地方, 大阪市, 中国製)."""


def entity_of(text: str) -> tuple[str, str] | None:
    """``(kind, canonical name)`` when the whole text names a prefecture or country, else None."""
    return _NAMES.get(text.strip())


def entities_in(text: str) -> set[tuple[str, str]]:
    """Prefectures and countries named (in Japanese) anywhere in ``text``: 東京都 in 東京都で最も多い."""
    return {_NAMES[m.group(0)] for m in _IN_TEXT.finditer(text)}
