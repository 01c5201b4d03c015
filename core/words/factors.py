"""The offline experts' factors (debate/offline.py): the name of each measure an expert scores
and the units its figure is written in. The debate report, the chat summary and the podcast
quote them as the experts said them, so they are said in the reader's language."""

# P/E, P/B, RSI(14) and the debt ratio are the metrics' own names (report_pdf.m_pe, m_pb,
# m_rsi14, offline.line_debt_ratio_pct): one entry each, used from here too.
WORDS: dict[str, dict[str, str]] = {
    # fundamental: valuation and quality from the statements
    "roe": {"en": "ROE", "zh": "净资产收益率"},
    "net_margin": {"en": "net margin", "zh": "净利率"},
    # fundamental without statements: the price's place in its range
    "range_52w": {"en": "52-week range position", "zh": "52周区间位置"},
    "vs_ma200": {"en": "price vs MA200", "zh": "股价相对MA200"},
    "stability": {"en": "price stability (quality proxy)", "zh": "价格稳定性（质量替代指标）"},
    # risk
    "vol_ann": {"en": "annualised volatility", "zh": "年化波动率"},
    "max_drawdown": {"en": "1-year max drawdown", "zh": "近一年最大回撤"},
    "beta": {"en": "beta vs {bench}", "zh": "相对{bench}的贝塔"},
    # growth
    "revenue_yoy": {"en": "revenue growth YoY", "zh": "营收同比增长"},
    "profit_yoy": {"en": "net profit growth YoY", "zh": "净利润同比增长"},
    "momentum_12_1": {"en": "12-1 month momentum", "zh": "12-1个月动量"},
    "ret_6m": {"en": "6-month return", "zh": "6个月收益率"},
    # sentiment
    "ret_1m": {"en": "1-month return", "zh": "1个月收益率"},
    "vs_ma50": {"en": "price vs MA50", "zh": "股价相对MA50"},
    "up_volume": {"en": "volume on up days (20D)", "zh": "上涨日成交量占比（20日）"},
    # how a figure is written
    "times": {"en": "{value}x", "zh": "{value}倍"},
    "vol_of": {"en": "{value}% vol", "zh": "波动率{value}%"},
    # one factor in an expert's list: its name, figure and score
    "item": {"en": "{label} {display} ({score})", "zh": "{label} {display}（{score}）"},
    # one other expert's stance in round 2
    "view": {"en": "{name} {action} {confidence}", "zh": "{name}{action}（信心 {confidence}）"},
    # a factor as a key point of a bull/bear argument
    "point": {"en": "{label}: {display}", "zh": "{label}：{display}"},
    # the offline bull/bear conclusion: the verdict and the factors behind it
    "verdict_because": {"en": "{verdict}: {reasons}", "zh": "{verdict}：{reasons}"},
}
