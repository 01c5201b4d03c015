"""The debate's own sentences about its inputs, in English and Chinese.

`debate/` may not import `bot/` (where the bot's catalogue lives), so the few sentences the
debate says to a user about what it could not use (a debate that cannot run, fundamentals
much older than the price, the window beta was measured over) are kept here, one entry per
sentence with both languages side by side. `say(key, lang, **values)` picks the language:
any `zh*` tag is Chinese, everything else English.
"""

from __future__ import annotations

from typing import Any

WORDS: dict[str, dict[str, str]] = {
    # a debate that cannot run: one short sentence, the reason first-hand
    "no_data": {
        "en": "No debate on {title}: {why}.",
        "zh": "无法对 {title} 进行辩论：{why}。",
    },
    "why_one_day": {
        "en": "the offline data has only one day of its prices ({day}) and no financial "
              "statements, and a debate needs a price history",
        "zh": "离线数据只有它一天的价格（{day}），没有财务报表，而辩论需要一段价格历史",
    },
    "why_nothing": {
        "en": "no price history and no financial statements are available for it",
        "zh": "没有可用的价格历史和财务报表",
    },
    "why_nothing_live": {
        "en": "its price history and financial statements could not be loaded",
        "zh": "无法加载它的价格历史和财务报表",
    },
    # a debate that runs without an input
    "no_financials": {
        "en": "No financial statements were available, so valuation and growth are judged "
              "from prices alone.",
        "zh": "没有可用的财务报表，估值和成长只能根据价格判断。",
    },
    "no_prices": {
        "en": "No price history was available: only the financial statements are judged.",
        "zh": "没有可用的价格历史，只根据财务报表判断。",
    },
    # fundamentals older than the price
    "stale_lowered": {
        "en": "The latest financial statements ({period}, period ended {end}) are {age} "
              "older than the price ({as_of}): confidence lowered.",
        "zh": "最新财务报表（{period}，截至 {end}）比价格数据（{as_of}）早 {age}，"
              "已降低信心。",
    },
    "stale_withheld": {
        "en": "No BUY/SELL verdict: the latest financial statements ({period}, period ended "
              "{end}) are {age} older than the price ({as_of}), past the {limit}-month limit; "
              "HOLD here means insufficient data.",
        "zh": "不给出买入/卖出结论：最新财务报表（{period}，截至 {end}）比价格数据"
              "（{as_of}）早 {age}，超过 {limit} 个月的上限；此处的“持有”表示数据不足。",
    },
    "panel_said": {
        "en": "The panel's own reading ({action}):",
        "zh": "专家组本身的判断（{action}）：",
    },
    # beta
    "beta_window": {
        "en": "Beta vs {bench} measured over {start} to {end} ({days} common trading days).",
        "zh": "相对 {bench} 的贝塔按 {start} 至 {end} 计算（{days} 个共同交易日）。",
    },
    "beta_none": {
        "en": "Beta unavailable: the {bench} prices here run {bench_start} to {bench_end} and "
              "share {days} trading days with the stock's last year ({start} to {end}); at "
              "least 60 are needed.",
        "zh": "无法计算贝塔：这里的 {bench} 价格从 {bench_start} 到 {bench_end}，与该股最近一年"
              "（{start} 至 {end}）只有 {days} 个共同交易日，至少需要 60 个。",
    },
    "beta_no_bench": {
        "en": "Beta unavailable: no {bench} prices could be loaded.",
        "zh": "无法计算贝塔：无法加载 {bench} 的价格。",
    },
}

_UNITS = {"en": ("month", "months", "year", "years"), "zh": ("个月", "个月", "年", "年")}


def is_zh(lang: str) -> bool:
    return lang.lower().startswith("zh")


def say(key: str, lang: str = "en", **values: Any) -> str:
    """The sentence `key` in `lang` (English unless `lang` is Chinese), filled in."""
    table = WORDS[key]
    return table["zh" if is_zh(lang) else "en"].format(**values)


def age_text(months: float, lang: str = "en") -> str:
    """'4.4 years' / '4.4 年' from 18 months up, else '11 months' / '11 个月'."""
    m1, mn, y1, yn = _UNITS["zh" if is_zh(lang) else "en"]
    if months >= 18:
        years = round(months / 12, 1)
        return f"{years:g} {y1 if years == 1 else yn}"
    n = max(1, round(months))
    return f"{n} {m1 if n == 1 else mn}"


__all__ = ["WORDS", "age_text", "is_zh", "say"]
