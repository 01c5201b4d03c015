"""Organisations a Mandarin question names that are not listed companies: regulators, central
banks, ministries, the mainland exchanges (港交所 is listed: 0388). A transcript's sound-alike
pass never rewrites them into a stock (中国证监会 sounds, by two shared characters and a near
syllable, like 中国能建), nor the words that sound exactly like them (中国政见会), and no symbol
is read inside them.
"""

from __future__ import annotations

import re
from functools import lru_cache

from bot.voice.soundalike import syllables
from tools.symbols.normalize import is_cjk_char

# longest first, so that 中国证监会 is one span, not 证监会 inside it
INSTITUTIONS = tuple(sorted({
    "中国证券监督管理委员会", "中国证监会", "证监会", "银保监会", "银监会", "保监会",
    "国家金融监督管理总局", "金融监管总局", "中国人民银行", "人民银行", "人行", "央行",
    "美联储", "欧洲央行", "日本央行", "英国央行", "国务院", "国家发改委", "发改委", "财政部",
    "商务部", "国家统计局", "统计局", "外汇局", "国家外汇管理局", "国资委", "证券交易所",
    "上交所", "深交所", "北交所", "中金所", "上海证券交易所", "深圳证券交易所",
    "证券业协会", "基金业协会", "社保基金", "中央汇金", "国家队", "世界银行",
    "国际货币基金组织", "交易所", "监管层", "金融委", "政治局",
}, key=len, reverse=True))
# ... and any name ending as an organisation's does (上海交通大学, 中国共产党, 中山公园): its
# first characters can sound like a company's (中国共产 / 中国巨石) but it names none
ORGANISATION_ENDINGS = ("大学", "学院", "委员会", "协会", "政协", "共产党", "国民党", "公园",
                        "研究院", "研究所")
_PATTERN = re.compile("|".join(map(re.escape, INSTITUTIONS)) + "|[\u4e00-\u9fff]{0,4}(?:"
                      + "|".join(map(re.escape, ORGANISATION_ENDINGS)) + ")")


@lru_cache(maxsize=1)
def _by_sound() -> dict[tuple[str, ...], int]:
    """Toneless pinyin of the organisations of three characters or more -> their length."""
    return {syllables(name): len(name) for name in INSTITUTIONS if len(name) >= 3}


def institution_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) of each organisation of :data:`INSTITUTIONS` named in ``text``, written
    as such or as characters that sound the same (中国政见会 is how 中国证监会 was heard)."""
    spans = [m.span() for m in _PATTERN.finditer(text)]
    sounds = _by_sound()
    for size in sorted(set(sounds.values()), reverse=True):
        for i in range(len(text) - size + 1):
            window = text[i:i + size]
            if (all(is_cjk_char(ch) for ch in window) and not overlaps((i, i + size), spans)
                    and sounds.get(syllables(window)) == size):
                spans.append((i, i + size))
    return sorted(spans)


def overlaps(span: tuple[int, int], spans: list[tuple[int, int]]) -> bool:
    """Whether ``span`` shares a character with any of ``spans``."""
    return any(a < span[1] and span[0] < b for a, b in spans)
