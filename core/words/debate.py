"""The debate's own sentences about its inputs: a debate that cannot run, fundamentals much older
than the price, the window beta was measured over, the panel's own reading."""

WORDS: dict[str, dict[str, str]] = {
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
    "no_financials": {
        "en": "No financial statements were available, so valuation and growth are judged from "
              "prices alone.",
        "zh": "没有可用的财务报表，估值和成长只能根据价格判断。",
    },
    "no_prices": {
        "en": "No price history was available: only the financial statements are judged.",
        "zh": "没有可用的价格历史，只根据财务报表判断。",
    },
    "stale_lowered": {
        "en": "The latest financial statements ({period}, period ended {end}) are {age} older "
              "than the price ({as_of}): confidence lowered.",
        "zh": "最新财务报表（{period}，截至 {end}）比价格数据（{as_of}）早 {age}，已降低信心。",
    },
    "stale_withheld": {
        "en": "No BUY/SELL verdict: the latest financial statements ({period}, period ended {end}"
              ") are {age} older than the price ({as_of}), past the {limit}-month limit; HOLD "
              "here means insufficient data.",
        "zh": "不给出买入/卖出结论：最新财务报表（{period}，截至 {end}）比价格数据（{as_of}）早 "
              "{age}，超过 {limit} 个月的上限；此处的“持有”表示数据不足。",
    },
    "panel_said": {
        "en": "The panel's own reading ({action}):",
        "zh": "专家组本身的判断（{action}）：",
    },
    "beta_window": {
        "en": "Beta vs {bench} measured over {start} to {end} ({days} common trading days).",
        "zh": "相对 {bench} 的贝塔按 {start} 至 {end} 计算（{days} 个共同交易日）。",
    },
    "beta_none": {
        "en": "Beta unavailable: the {bench} prices here run {bench_start} to {bench_end} and "
              "share {days} trading days with the stock's last year ({start} to {end}); at least "
              "60 are needed.",
        "zh": "无法计算贝塔：这里的 {bench} 价格从 {bench_start} 到 {bench_end}，"
              "与该股最近一年（{start} 至 {end}）只有 {days} 个共同交易日，至少需要 60 个。",
    },
    "beta_no_bench": {
        "en": "Beta unavailable: no {bench} prices could be loaded.",
        "zh": "无法计算贝塔：无法加载 {bench} 的价格。",
    },
    "action_BUY": {
        "en": "BUY",
        "zh": "买入",
    },
    "action_HOLD": {
        "en": "HOLD",
        "zh": "持有",
    },
    "action_SELL": {
        "en": "SELL",
        "zh": "卖出",
    },
    # for the model, not the reader: the debate's prompts are English
    "write_in": {
        "en": "Write all text in English.",
        "zh": "Write all text in Simplified Chinese.",
    },
    "no_score": {
        "en": "Not enough data to score; holding by default.",
        "zh": "数据不足，无法评分；维持观望。",
    },
    "opening": {
        "en": "{name} score {score} -> {action}. Factors: {factors}.",
        "zh": "{name} 评分 {score} → {action}。依据：{factors}。",
    },
    "others": {
        "en": "The others: {views}. {stance}",
        "zh": "其他专家：{views}。{stance}",
    },
    "disagree": {
        "en": "{names} disagree; the data has not changed, so I keep {action} with less "
              "conviction.",
        "zh": "{names} 与我观点不同，数据未变，我维持{action}但降低信心。",
    },
    "agree": {
        "en": "The panel largely agrees with my reading.",
        "zh": "多数专家意见一致。",
    },
    "consensus_on": {
        "en": "consensus on {action}",
        "zh": "达成共识：{action}",
    },
    "plurality": {
        "en": "no consensus; the largest group says {action}",
        "zh": "未达成共识，多数意见为 {action}",
    },
    "split": {
        "en": "split with no majority, so {action}",
        "zh": "意见分歧且无多数，结论为 {action}",
    },
    "final_votes": {
        "en": "Offline panel, final votes: {tally}: {verdict}. Scored from data by fixed rules; "
              "no language model was used.",
        "zh": "离线专家组最终投票：{tally}。{verdict}。结论由数据评分确定，未使用语言模型。",
    },
    "factor": {
        "en": "{label} {display} (score {score})",
        "zh": "{label} {display}（评分 {score}）",
    },
    "no_support": {
        "en": "No data point supports this side.",
        "zh": "没有支持该方的数据点。",
    },
    "expert_fundamental": {
        "en": "Fundamental",
        "zh": "基本面",
    },
    "expert_risk": {
        "en": "Risk",
        "zh": "风险",
    },
    "expert_growth": {
        "en": "Growth",
        "zh": "成长",
    },
    "expert_sentiment": {
        "en": "Sentiment",
        "zh": "情绪",
    },
}
