"""The data answers' sentences (analyst/format.py): quotes, bars, charts, an unknown symbol."""

WORDS: dict[str, dict[str, str]] = {
    "no_symbol": {
        "en": "I couldn't find a stock in your question. Name one by ticker, code or name, e.g. "
              "\"NVDA latest close\" or \"600519 last month\".",
        "zh": "我没有在问题里找到股票代码或名称。请写出代码或名称，例如“600519 "
              "最新收盘价”或“NVDA 最近一个月走势”。",
    },
    "unknown_symbol": {
        "en": "I don't know the symbol \"{query}\".{hint}",
        "zh": "找不到“{query}”。{hint}",
    },
    "did_you_mean": {
        "en": " Did you mean: {names}?",
        "zh": "你是不是想找：{names}？",
    },
    "up": {
        "en": "up",
        "zh": "上涨",
    },
    "down": {
        "en": "down",
        "zh": "下跌",
    },
    "quote": {
        "en": "**{name}** closed at **{close}** on {date}, {move} {change} ({pct}) from the "
              "previous close.",
        "zh": "**{name}** 在 {date} 收于 **{close}**，较前一交易日{move} {change}（{pct}）。",
    },
    "range_volume": {
        "en": "52-week range: {low} – {high}; volume {volume}.",
        "zh": "52周区间：{low} – {high}；成交量：{volume}。",
    },
    "volume": {
        "en": "Volume {volume}.",
        "zh": "成交量：{volume}。",
    },
    "fx_quote": {
        "en": "**{name}** was at **{rate}** on {date}, {move} {change} ({pct}) from the previous "
              "close.",
        "zh": "**{name}** 在 {date} 的汇率为 **{rate}**，较前值{move} {change}（{pct}）。",
    },
    "fx_range": {
        "en": "52-week range: {low} – {high}.",
        "zh": "52周区间：{low} – {high}。",
    },
    "quotes_head": {
        "en": "| Symbol | Name | Close | Change | Date |",
        "zh": "| 代码 | 名称 | 收盘 | 涨跌幅 | 日期 |",
    },
    "bars": {
        "en": "**{name}** from {first} to {last} ({bars} {interval} bars): {open} → {close} "
              "({pct}); high {high}, low {low}.",
        "zh": "**{name}** {first} 至 {last}（{bars} 根{interval}K线）：从 {open} 到 {close}，"
              "涨跌 {pct}；最高 {high}，最低 {low}。",
    },
    "chart_series": {
        "en": "{name}: {first} to {last}, {bars} bars, {pct} over the range, last {close}.",
        "zh": "{name}：{first} 至 {last}，{bars} 根K线，区间涨跌 {pct}，最新 {close}。",
    },
    "chart_attached": {
        "en": "Chart attached.",
        "zh": "已生成图表（见图片）。",
    },
    "sentence": {
        "en": "{text}.",
        "zh": "{text}。",
    },
    # what the agent is doing, in the progress line (the person's language)
    "status_planning": {"en": "Planning...", "zh": "正在规划……"},
    "status_continuing": {"en": "Continuing a cut-off answer...", "zh": "回答被截断，正在续写……"},
    "status_checking": {"en": "Checking the figures with a tool...", "zh": "正在用工具核对数字……"},
    "status_tool": {"en": "Running {name}...", "zh": "正在运行 {name}……"},
}
