"""Organisations a Mandarin question names that are not listed companies: regulators, central
banks, ministries, the mainland exchanges (港交所 is listed: 0388). A transcript's sound-alike
pass never rewrites them into a stock (中国证监会 sounds, by two shared characters and a near
syllable, like 中国能建), and no symbol is read inside them.
"""

from __future__ import annotations

import re

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
_PATTERN = re.compile("|".join(map(re.escape, INSTITUTIONS)))


def institution_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) of each organisation of :data:`INSTITUTIONS` named in ``text``."""
    return [m.span() for m in _PATTERN.finditer(text)]


def overlaps(span: tuple[int, int], spans: list[tuple[int, int]]) -> bool:
    """Whether ``span`` shares a character with any of ``spans``."""
    return any(a < span[1] and span[0] < b for a, b in spans)
