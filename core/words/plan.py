"""Trade-plan mode on the model path (analyst/plan_mode.py): its progress, the plan's title, a
wait, a rejected plan."""

WORDS: dict[str, dict[str, str]] = {
    "analysing": {
        "en": "Running the ICT analysis…",
        "zh": "正在进行 ICT 分析…",
    },
    "drafting": {
        "en": "Drafting the trade plan…",
        "zh": "正在起草交易计划…",
    },
    "repairing": {
        "en": "The plan failed validation; asking for one correction…",
        "zh": "计划未通过校验，正在请求一次修正…",
    },
    "title": {
        "en": "**Trade plan · {label} · {tf}** · {horizon}",
        "zh": "**交易计划 · {label} · {tf}** · {horizon}",
    },
    "wait": {
        "en": "**No trade now: wait** – {reason}",
        "zh": "**暂不交易：等待** – {reason}",
    },
    "rejected": {
        "en": "**Plan rejected.** The model's plan failed validation after one correction, so no "
              "plan is given:",
        "zh": "**计划被拒绝。**模型给出的计划在一次修正后仍未通过校验，因此不提供计划：",
    },
    "overrides": {
        "en": "Timeframe enforced: {notes}",
        "zh": "已强制使用对话周期：{notes}",
    },
    "footer": {
        "en": "_{source}_ · data as of {date}. Not investment advice.",
        "zh": "_{source}_ · 数据截至 {date}。不构成投资建议。",
    },
}
