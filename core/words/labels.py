"""Notices a mode attaches to an answer (`Done.label`); the renderer shows them in italics.
And the labels on a chart (tools/charts.py): its axes, legend and subtitle."""

WORDS: dict[str, dict[str, str]] = {
    "unverified": {
        "en": "Unverified: {figures} did not come from this answer's data tools.",
        "zh": "未经核实：{figures} 不是来自本次回答的数据工具。",
    },
    "no_tool": {
        "en": "Unverified: no data tool was used for this answer.",
        "zh": "未经核实：本次回答没有使用数据工具。",
    },
    "cut_off": {
        "en": "Cut off: the answer reached the model's length limit ({tokens} tokens) and is "
              "incomplete.",
        "zh": "回答不完整：已达到模型的长度上限（{tokens} 个 token）。",
    },
    "fast": {
        "en": "Fast mode: figures from the model's memory, not checked against data.",
        "zh": "快速模式：数字来自模型记忆，未经数据核对。",
    },
    "empty": {
        "en": "The model returned no answer text.",
        "zh": "模型没有给出回答内容。",
    },
    "as_of": {
        "en": "Data as of {dates}.",
        "zh": "数据日期：{dates}。",
    },
    "wrong_instrument": {
        "en": "Check the instrument: the data gives these figures to another one: {figures}.",
        "zh": "请注意标的：数据中这些数字属于另一个标的：{figures}。",
    },
    "units": {
        "en": "Check the units: {figures} is a price move in currency, not a percentage.",
        "zh": "请注意单位：{figures} 是以货币计的价格变动，不是百分比。",
    },
    "units_pct": {
        "en": "Check the units: {figures} is a percent change, not an amount of money.",
        "zh": "请注意单位：{figures} 是涨跌幅（百分比），不是金额。",
    },
    "currency": {
        "en": "Check the currency: the data gives {figures} in {currency}.",
        "zh": "请注意币种：数据中 {figures} 的币种是 {currency}。",
    },
    "wrong_language": {
        "en": "The model answered in another language than the question's.",
        "zh": "模型没有用提问的语言回答。",
    },
    "wrong_date": {
        "en": "Check the date: the data is as of {dates}, not {wrong}.",
        "zh": "请注意日期：数据日期为 {dates}，不是 {wrong}。",
    },
    "no_figure": {
        "en": "Unanswered: the answer gives none of the figures the data tools returned.",
        "zh": "未作答：回答没有给出数据工具返回的任何数字。",
    },
    "checking": {
        "en": "Writing the answer; it is shown once its figures are checked...",
        "zh": "正在撰写回答，数字核对后再显示……",
    },
    "turn_limit": {
        "en": "I reached the limit of tool calls for one question; here is what I found so far.",
        "zh": "本问题的工具调用次数已达上限，以上是目前找到的内容。",
    },
    # on a chart
    "chart_volume": {
        "en": "Vol",
        "zh": "成交量",
    },
    "chart_rebased": {
        "en": "rebased = 100",
        "zh": "首日 = 100",
    },
    "chart_rebased_to": {
        "en": "rebased to 100",
        "zh": "以首日为100",
    },
    "chart_versus": {
        "en": " vs ",
        "zh": " 对比 ",
    },
    "status_loading_bars": {"en": "Loading bars for {codes}", "zh": "正在加载 {codes} 的行情"},
}
