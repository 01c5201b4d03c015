"""Tools in the order they matter for a question, so a small context window keeps the right
ones: `core.llm.fit` drops tools from the end of the list when they do not all fit."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from core.tools import ToolRegistry

# tag -> words of a question that call for tools with that tag (English and Chinese)
FAMILIES: dict[str, re.Pattern[str]] = {tag: re.compile(words, re.IGNORECASE) for tag, words in {
    "quote": r"price|quote|close|latest|today|now|价|行情|收盘|现价|报价",
    "ohlcv": r"range|history|high|low|week|month|year|bars|since|between|区间|历史|最高|最低|走势",
    "indicators": r"rsi|macd|sma|ema|bollinger|kdj|atr|indicator|moving average|overbought|"
                  r"oversold|均线|指标|超买|超卖|布林",
    "ict": r"\bict\b|order block|fvg|fair value gap|smart money|liquidity|\bbos\b|choch|"
           r"structure|trade plan|订单块|流动性|结构",
    "fundamentals": r"revenue|profit|earnings|financial|dividend|shareholder|margin|cash flow|"
                    r"营收|利润|财报|分红|股东|现金流",
    "valuation": r"dcf|valuation|fair value|intrinsic|估值|内在价值",
    "flows": r"flow|northbound|capital|dragon|tiger|资金|北向|龙虎|主力",
    "funds": r"fund|etf|\bnav\b|13f|holdings|基金|净值|持仓",
    "news": r"news|headline|why did|新闻|消息|为什么",
    "sec": r"\bsec\b|10-k|10-q|8-k|filing|annual report|年报",
    "screener": r"screen|hotspot|market today|top gainers|选股|热点|涨幅榜",
    "web": r"search|web|website|网页|搜索",
    "chart": r"chart|plot|graph|图",
}.items()}
# what a question about a security needs first when it names no family
BASELINE = {"quote": 2, "market": 2, "ohlcv": 1, "indicators": 1}


def rank_schemas(question: str, registry: ToolRegistry) -> list[dict[str, Any]]:
    """The registry's schemas, most relevant to `question` first (registry order on ties)."""
    specs = registry.specs()
    wanted = {tag for tag, pattern in FAMILIES.items() if pattern.search(question)}

    def score(tags: Sequence[str]) -> int:
        return 10 * len(wanted.intersection(tags)) + max((BASELINE.get(t, 0) for t in tags),
                                                         default=0)

    order = sorted(range(len(specs)), key=lambda i: -score(sorted(specs[i].tags)))
    schemas = registry.schemas()
    by_name = {s["function"]["name"]: s for s in schemas}
    return [by_name[specs[i].name] for i in order if specs[i].name in by_name]
