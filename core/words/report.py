"""The daily report (jobs/report.py): its chat text, its PDF, the offline template's narrative and
the summarizer's instructions."""

WORDS: dict[str, dict[str, str]] = {
    "title": {
        "en": "Daily report",
        "zh": "每日报告",
    },
    "title_date": {
        "en": "Daily report · data as of {date}",
        "zh": "每日报告 · 数据截至 {date}",
    },
    "offline": {
        "en": "_Offline snapshot: historical data, not live; each symbol's figures are as of its "
              "own date._",
        "zh": "_离线快照：历史数据，非实时；各标的数据以其自身日期为准。_",
    },
    "offline_short": {
        "en": " (offline snapshot)",
        "zh": "（离线快照）",
    },
    "row_head": {
        "en": "**{label}** · close **{price}** on {date}",
        "zh": "**{label}** · 收盘 **{price}**（{date}）",
    },
    "changes": {
        "en": "1D {d1} · 5D {d5} · 1M {m1}",
        "zh": "1日 {d1} · 5日 {d5} · 1月 {m1}",
    },
    "range": {
        "en": "52-week range {low} – {high} · at {pos} of it",
        "zh": "52周区间 {low} – {high} · 位于 {pos}",
    },
    "rsi": {
        "en": "RSI(14) {v}",
        "zh": "RSI(14) {v}",
    },
    "ma_item": {
        "en": "{side} MA{n}",
        "zh": "{side}MA{n}",
    },
    "above": {
        "en": "above",
        "zh": "高于",
    },
    "below": {
        "en": "below",
        "zh": "低于",
    },
    "ict": {
        "en": "ICT daily bias: {bias} · grade {grade} ({score}/100{missing})",
        "zh": "ICT 日线偏向：{bias} · 等级 {grade}（{score}/100{missing}）",
    },
    "ict_missing": {
        "en": "; no {tfs} data",
        "zh": "；缺少 {tfs} 数据",
    },
    "ict_none": {
        "en": "ICT daily bias: n/a ({error})",
        "zh": "ICT 日线偏向：无（{error}）",
    },
    "source": {
        "en": "Source: {label}",
        "zh": "数据来源：{label}",
    },
    "offline_tag": {
        "en": " (offline snapshot)",
        "zh": "（离线快照）",
    },
    "not_reported": {
        "en": "**Not reported:**",
        "zh": "**未能报告：**",
    },
    "notes": {
        "en": "**Notes:**",
        "zh": "**备注：**",
    },
    "unknown": {
        "en": "{q}: unknown symbol",
        "zh": "{q}：找不到该标的",
    },
    "suggest": {
        "en": "; did you mean {s}?",
        "zh": "，你是不是想找：{s}？",
    },
    "no_data": {
        "en": "{q}: no data ({error})",
        "zh": "{q}：无法获取数据（{error}）",
    },
    "label_llm": {
        "en": "_Narrative: LLM, from the computed figures above_",
        "zh": "_叙述：大模型根据上方计算数据撰写_",
    },
    "label_template": {
        "en": "_Narrative: offline template_",
        "zh": "_叙述：离线模板_",
    },
    "label_fallback": {
        "en": "_Narrative: offline template (the LLM failed: {why})_",
        "zh": "_叙述：离线模板（大模型调用失败：{why}）_",
    },
    "empty_answer": {
        "en": "empty answer",
        "zh": "返回内容为空",
    },
    "unverified": {
        "en": "Unverified: the narrative mentions figures not in the computed data: {figures}",
        "zh": "未经核实：叙述中出现了计算数据以外的数字：{figures}",
    },
    "disclaimer": {
        "en": "_Not investment advice._",
        "zh": "_不构成投资建议。_",
    },
    "chart_out": {
        "en": "{code} is not in the chart: its data ends {last}, with too few dates in the chart "
              "window ({span}).",
        "zh": "{code} 未纳入图表：其数据截至 {last}，在图表区间（{span}）内的日期太少。",
    },
    "chart_full": {
        "en": "{code} is not in the chart: it shows at most {n} series.",
        "zh": "{code} 未纳入图表：图表最多显示 {n} 个标的。",
    },
    "chart_end": {
        "en": "The chart ends {date}, the last date all charted series share.",
        "zh": "图表截至 {date}，即所有入图标的共有的最后日期。",
    },
    "no_chart": {
        "en": "No chart: the series share too few dates in the window {span}.",
        "zh": "无图表：各标的在区间 {span} 内的共同日期太少。",
    },
    "rebased": {
        "en": " · rebased to 100",
        "zh": " · 以首日为100",
    },
    "nothing": {
        "en": "No symbol could be reported.",
        "zh": "没有可报告的标的。",
    },
    "leader": {
        "en": "Over 5 days {best} led ({b}) and {worst} lagged ({w}).",
        "zh": "5日表现最强的是 {best}（{b}），最弱的是 {worst}（{w}）。",
    },
    "s_close": {
        "en": "{code} closed at {price} on {date}, {d1} on the day",
        "zh": "{code} 收于 {price}（{date}），较前一日 {d1}",
    },
    "s_5d": {
        "en": "{v} over 5 days",
        "zh": "5日 {v}",
    },
    "s_1m": {
        "en": "{v} over a month",
        "zh": "近一月 {v}",
    },
    "s_range": {
        "en": "it sits at {pct}% of its 52-week range",
        "zh": "处于52周区间的 {pct}%",
    },
    "s_rsi": {
        "en": "RSI(14) is {v} ({zone})",
        "zh": "RSI(14) 为 {v}（{zone}）",
    },
    "overbought": {
        "en": "overbought",
        "zh": "超买",
    },
    "oversold": {
        "en": "oversold",
        "zh": "超卖",
    },
    "neutral_rsi": {
        "en": "neutral",
        "zh": "中性",
    },
    "ma_above": {
        "en": "above {mas}",
        "zh": "位于{mas}之上",
    },
    "ma_below": {
        "en": "below {mas}",
        "zh": "位于{mas}之下",
    },
    "s_ict": {
        "en": "the daily ICT bias is {bias}{grade}",
        "zh": "ICT 日线偏向{bias}{grade}",
    },
    "s_grade": {
        "en": " (grade {grade})",
        "zh": "（等级 {grade}）",
    },
    "sep_clause": {
        "en": ", ",
        "zh": "，",
    },
    "sep_part": {
        "en": "; ",
        "zh": "；",
    },
    "stop": {
        "en": ".",
        "zh": "。",
    },
    "bullish": {
        "en": "bullish",
        "zh": "看涨",
    },
    "bearish": {
        "en": "bearish",
        "zh": "看跌",
    },
    "neutral": {
        "en": "neutral",
        "zh": "中性",
    },
    "points": {
        "en": "pts",
        "zh": "点",
    },
    "na": {
        "en": "n/a",
        "zh": "无",
    },
    "h_symbol": {
        "en": "Symbol",
        "zh": "代码",
    },
    "h_close": {
        "en": "Close",
        "zh": "收盘",
    },
    "h_date": {
        "en": "Date",
        "zh": "日期",
    },
    "h_52w": {
        "en": "52w pos",
        "zh": "52周位置",
    },
    "h_ma": {
        "en": "MA20/50/200",
        "zh": "MA20/50/200",
    },
    "h_ict": {
        "en": "ICT (grade)",
        "zh": "ICT（等级）",
    },
    "h_narrative": {
        "en": "Narrative",
        "zh": "叙述",
    },
    "h_sources": {
        "en": "Sources",
        "zh": "数据来源",
    },
    "system": {
        "en": "You write the short narrative of a daily market report sent to a chat. The user "
              "message holds the report's rows as JSON; every figure in them was computed in "
              "code from daily bars and is dated. In 3 to 5 plain sentences of English, explain "
              "what the figures show and how the symbols compare. Use only figures that appear "
              "in the rows and add no numbers of your own; no forecasts, price targets or advice.",
        "zh": "你为推送到聊天中的每日行情报告撰写简短叙述。用户消息是报告各行的 JSON，"
              "其中每个数字都由代码根据日线数据计算得出并注明日期。请用 3 到 5 "
              "句简体中文说明这些数据显示了什么、各标的之间如何比较。只使用 JSON 中出现的数字，"
              "不要添加任何新的数字；不要预测、不要给出目标价或投资建议。",
    },
}
