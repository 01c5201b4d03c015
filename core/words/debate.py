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
    # the offline bull/bear record (debate/offline.py)
    "rebut": {
        "en": "The other side's strongest point here, {theirs}, weighs {their_weight}; ours, "
              "{ours}, weighs {our_weight}.",
        "zh": "对方在这里最有力的论据是{theirs}，权重 {their_weight}；我方的{ours}，"
              "权重 {our_weight}。",
    },
    "nothing_to_rebut": {
        "en": "Nothing to rebut here.",
        "zh": "这里没有需要反驳的论据。",
    },
    "nothing_to_answer": {
        "en": "No data point to answer with.",
        "zh": "没有可以用来回应的数据点。",
    },
    "average_score": {
        "en": "average factor score {score} across {n} factors",
        "zh": "{n} 个因子的平均评分为 {score}",
    },
    "horizon": {
        "en": "6-12 months",
        "zh": "6至12个月",
    },
    "bb_summary": {
        "en": "**{hypothesis}**\n\n**Verdict:** {verdict} ({action}, {confidence}/10), scored "
              "from data by fixed rules.",
        "zh": "**{hypothesis}**\n\n**结论：**{verdict}（{action}，信心 {confidence}/10），"
              "由数据按固定规则评分。",
    },
    # the default hypothesis when none was formed (the offline panel, or a planner that failed)
    "hypothesis": {
        "en": "{title} is worth buying now for the next 6-12 months",
        "zh": "{title} 值得现在买入并持有6至12个月",
    },
    "hypothesis_asked": {
        "en": " (question: {question})",
        "zh": "（问题：{question}）",
    },
    "verdict_supported": {
        "en": "supported",
        "zh": "成立",
    },
    "verdict_rejected": {
        "en": "rejected",
        "zh": "不成立",
    },
    "verdict_inconclusive": {
        "en": "inconclusive",
        "zh": "无定论",
    },
    # what the chat shows while a debate runs (Status lines and the streamed round lines)
    "gathering": {
        "en": "Gathering data for {name}...",
        "zh": "正在收集 {name} 的数据……",
    },
    "reusing": {
        "en": "Reusing the report of {date}",
        "zh": "沿用 {date} 的报告",
    },
    "report_from": {
        "en": "(report from {when} UTC)",
        "zh": "（世界标准时间 {when} 的报告）",
    },
    "offline_start": {
        "en": "No language model configured: offline experts score the data",
        "zh": "未配置语言模型：由离线专家根据数据评分",
    },
    "offline_stop": {
        "en": "offline experts run the minimum rounds",
        "zh": "离线专家只进行最少轮数",
    },
    "offline_bb_stop": {
        "en": "offline bull/bear: openings, rebuttals, scored verdict",
        "zh": "离线多空辩论：开场、反驳、评分结论",
    },
    "panel_start": {
        "en": "Debate on {title}: {n} experts, {low}-{high} rounds",
        "zh": "{title} 辩论：{n} 位专家，{low}至{high} 轮",
    },
    "round_start": {
        "en": "Round {round}: {n} experts arguing...",
        "zh": "第 {round} 轮：{n} 位专家辩论中……",
    },
    "round_line": {
        "en": "Round {round} - {name}: {action} {confidence}{extra}",
        "zh": "第 {round} 轮 - {name}：{action} {confidence}{extra}",
    },
    "round_failed": {
        "en": "Round {round} - {name}: failed ({error})",
        "zh": "第 {round} 轮 - {name}：失败（{error}）",
    },
    "round_dropped": {
        "en": " ({n} invented source(s) dropped)",
        "zh": "（剔除 {n} 个编造的来源）",
    },
    "round_all_failed": {
        "en": "Round {round}: every expert failed; stopping",
        "zh": "第 {round} 轮：所有专家均失败，停止",
    },
    "moderating": {
        "en": "Round {round} - Moderator deciding...",
        "zh": "第 {round} 轮 - 主持人正在裁定……",
    },
    "budget_note": {
        "en": "Budget: {note}",
        "zh": "预算：{note}",
    },
    "budget_stop": {
        "en": "Budget: stopping before round {round}",
        "zh": "预算用尽：第 {round} 轮之前停止",
    },
    "phase_hypothesis": {
        "en": "Phase 0 - forming a testable hypothesis...",
        "zh": "阶段 0 - 形成可检验的假设……",
    },
    "phase_collect": {
        "en": "Phase 1 - collecting data: {n} tool calls",
        "zh": "阶段 1 - 收集数据：{n} 次工具调用",
    },
    "phase_openings": {
        "en": "Phase 2 - opening arguments (2 bulls, 2 bears)...",
        "zh": "阶段 2 - 开场陈述（两位多方，两位空方）……",
    },
    "phase_rebuttals": {
        "en": "Phase 3 - rebuttals...",
        "zh": "阶段 3 - 反驳……",
    },
    "phase_judge": {
        "en": "Phase 4 - the judge weighs {n} anonymous arguments...",
        "zh": "阶段 4 - 裁判权衡 {n} 条匿名论据……",
    },
    "phase_summary": {
        "en": "Phase 5 - writing the executive summary...",
        "zh": "阶段 5 - 撰写执行摘要……",
    },
    "phase_opening": {
        "en": "Opening",
        "zh": "开场",
    },
    "phase_rebuttal": {
        "en": "Rebuttal",
        "zh": "反驳",
    },
    "argued": {
        "en": "{phase} - {name}: {n} source(s){extra}",
        "zh": "{phase} - {name}：{n} 个来源{extra}",
    },
    "argued_dropped": {
        "en": ", {n} invented dropped",
        "zh": "，剔除 {n} 个编造的来源",
    },
    "argue_failed": {
        "en": "{phase} - {name}: failed ({error})",
        "zh": "{phase} - {name}：失败（{error}）",
    },
    "hypothesis_line": {
        "en": "Hypothesis: {hypothesis}",
        "zh": "假设：{hypothesis}",
    },
    "verdict_line": {
        "en": "Verdict: {verdict} ({action}, {confidence}/10)",
        "zh": "结论：{verdict}（{action}，信心 {confidence}/10）",
    },
    "offline_verdict_line": {
        "en": "Verdict: {action} {confidence}",
        "zh": "结论：{action}（信心 {confidence}）",
    },
    # the label under the answer, and why a debate did not start
    "partial": {
        "en": "partial debate: {n} part(s) failed, confidence lowered accordingly",
        "zh": "辩论不完整：{n} 个部分失败，信心已相应降低",
    },
    "reused": {
        "en": "reused report from {when} UTC; ask with 'fresh' for a new debate",
        "zh": "沿用 {when}（UTC）的报告；如需重新辩论，请在问题后加一个空格和“重新”",
    },
    "unknown_symbol": {
        "en": "I don't know the security {query!r}.{hint} Try a code or ticker, e.g. /debate "
              "600519 or /debate NVDA.",
        "zh": "我不认识证券“{query}”。{hint}请改用股票代码或名称，例如 /debate 600519。",
    },
    "did_you_mean": {
        "en": " Did you mean: {names}?",
        "zh": "您是不是要找：{names}？",
    },
    "name_one": {
        "en": "Name a security to debate, e.g. /debate 600519 or /debate NVDA is it a buy?",
        "zh": "请指定要辩论的证券，例如 /debate 600519 值得买吗？",
    },
    "analyst_bull": {
        "en": "Bull #{n}",
        "zh": "多方 #{n}",
    },
    "analyst_bear": {
        "en": "Bear #{n}",
        "zh": "空方 #{n}",
    },
    # a debate that produced nothing: said instead of a verdict (the model's own error inside)
    "failed_experts": {
        "en": "The debate failed: none of the {n} expert turns got an answer from the model "
              "({why}). There is no verdict and no report is kept.",
        "zh": "辩论失败：{n} 次专家发言都没有得到模型的回答（{why}）。没有结论，也不保留报告。",
    },
    "failed_analysts": {
        "en": "The debate failed: none of the {n} analyst turns got an answer from the model "
              "({why}). There is no verdict and no report is kept.",
        "zh": "辩论失败：{n} 次分析师发言都没有得到模型的回答（{why}）。没有结论，也不保留报告。",
    },
    "failed_judge": {
        "en": "The debate failed: the judge could not answer ({why}). There is no verdict and no "
              "report is kept.",
        "zh": "辩论失败：裁判未能作答（{why}）。没有结论，也不保留报告。",
    },
    "no_reason": {
        "en": "no reason given",
        "zh": "未说明原因",
    },
    # why a turn failed, as the reader is told it (the raw detail goes to the log); model and
    # provider failures use the errors.why_* words
    "why_turn_timeout": {
        "en": "the turn took longer than {seconds} s",
        "zh": "发言超过 {seconds} 秒仍未完成",
    },
    "why_budget": {
        "en": "the debate's token budget ran out",
        "zh": "辩论的模型用量预算已用完",
    },
    "why_bad_json": {
        "en": "the model's answer was not valid JSON, even after one repair request",
        "zh": "即使要求修正一次，模型的回答仍不是有效的 JSON",
    },
    "reason_count": {
        "en": "{why} ({n} turns)",
        "zh": "{why}（{n} 次）",
    },
    # the notes a debate keeps (the report's Notes section)
    "note_hypothesis_failed": {
        "en": "hypothesis formation failed ({why}); a default hypothesis was used",
        "zh": "未能形成假设（{why}），使用了默认假设",
    },
    "note_plan_cut": {
        "en": "the data plan listed {n} calls; the first {kept} ran",
        "zh": "数据计划列出 {n} 次调用，只执行了前 {kept} 次",
    },
    "note_turn_failed": {
        "en": "{phase} - {name}: turn failed: {why}",
        "zh": "{phase} - {name}：发言失败：{why}",
    },
    "note_dropped": {
        "en": "{phase} - {name}: dropped {n} source(s) the debate never provided",
        "zh": "{phase} - {name}：剔除了 {n} 个辩论从未提供的来源",
    },
    "note_judge_failed": {
        "en": "the judge failed: {why}",
        "zh": "裁判失败：{why}",
    },
    "note_verdict_off": {
        "en": "the judge's verdict '{verdict}' is not one of the options; kept as written",
        "zh": "裁判的结论“{verdict}”不在给定选项之中，按原文保留",
    },
    "note_summary_failed": {
        "en": "the executive summary failed ({why}); written by code",
        "zh": "执行摘要生成失败（{why}），改由程序撰写",
    },
    "note_round_failed": {
        "en": "round {round} - {name}: turn failed: {why}",
        "zh": "第 {round} 轮 - {name}：发言失败：{why}",
    },
    "note_round_dropped": {
        "en": "round {round} - {name}: dropped {n} source(s) the debate never provided",
        "zh": "第 {round} 轮 - {name}：剔除了 {n} 个辩论从未提供的来源",
    },
    "note_round_repaired": {
        "en": "round {round} - {name}: answered after a repair request",
        "zh": "第 {round} 轮 - {name}：在要求修正后才给出有效回答",
    },
    "note_moderator_failed": {
        "en": "round {round} - the moderator failed: {why}",
        "zh": "第 {round} 轮 - 主持人失败：{why}",
    },
    "note_moderator_repaired": {
        "en": "round {round} - the moderator answered after a repair request",
        "zh": "第 {round} 轮 - 主持人在要求修正后才给出有效回答",
    },
    "note_moderator_overruled": {
        "en": "the moderator said {said}; the panel's consensus {agreed} stands",
        "zh": "主持人给出{said}，但专家组的共识{agreed}保持不变",
    },
    "missing_hypothesis": {
        "en": "the model's hypothesis (a default one was used)",
        "zh": "模型的假设（使用了默认假设）",
    },
    "missing_round": {
        "en": "round {round}: every expert failed",
        "zh": "第 {round} 轮：所有专家均失败",
    },
    "missing_moderator": {
        "en": "the moderator's conclusion (written by code from the positions)",
        "zh": "主持人的结论（改由程序根据各方立场写出）",
    },
    # the budget's cuts and refusals, and why a debate stopped (shown in chat and the report)
    "too_small_experts": {
        "en": "The debate budget of {total:,} tokens is too small for even one round of {n} "
              "experts (about {need:,} tokens at the cheapest settings). Raise "
              "BULLPEN_DEBATE_TOKEN_BUDGET.",
        "zh": "辩论的词元预算（{total:,}）太小，连 {n} 位专家辩论一轮都不够（最省的设置下约需 "
              "{need:,} 个词元）。请调高 BULLPEN_DEBATE_TOKEN_BUDGET。",
    },
    "too_small_bull_bear": {
        "en": "The debate budget of {total:,} tokens is too small for a bull/bear debate (about "
              "{need:,} tokens at the cheapest settings). Raise BULLPEN_DEBATE_TOKEN_BUDGET.",
        "zh": "辩论的词元预算（{total:,}）太小，不够进行一场多空辩论（最省的设置下约需 {need:,} "
              "个词元）。请调高 BULLPEN_DEBATE_TOKEN_BUDGET。",
    },
    "ran_out_after_hypothesis": {
        "en": "The debate budget of {total:,} tokens ran out after the hypothesis: {left:,} left, "
              "about {need:,} needed.",
        "zh": "辩论的词元预算（{total:,}）在提出假设后已不够：剩余 {left:,}，约需 {need:,}。",
    },
    "level_full": {"en": "full", "zh": "完整"},
    "level_shorter_context": {"en": "shorter context", "zh": "缩短上下文"},
    "level_cheaper_profiles": {"en": "cheaper profiles", "zh": "换用较便宜的模型"},
    "level_no_tool_rounds": {"en": "no tool rounds", "zh": "不再调用工具"},
    "deg_levels": {
        "en": "level {index}: {names}",
        "zh": "降到第 {index} 级：{names}",
    },
    "deg_levels_afford": {
        "en": "level {index}: {names} to afford {rounds} rounds within {total:,} tokens",
        "zh": "降到第 {index} 级：{names}，以便在 {total:,} 个词元内辩论 {rounds} 轮",
    },
    "deg_fewer_rounds": {
        "en": "level {index} ({name}) and only {rounds} round(s): the budget cannot pay for "
              "{wanted}",
        "zh": "降到第 {index} 级（{name}），只辩论 {rounds} 轮：预算不够 {wanted} 轮",
    },
    "deg_rounds_planned": {
        "en": "{rounds} of {max} rounds planned: the budget affords no more",
        "zh": "计划辩论 {rounds} 轮（最多 {max} 轮）：预算只够这么多",
    },
    "deg_round_degraded": {
        "en": "round {round}: degraded to level {index} ({name}) on spend",
        "zh": "第 {round} 轮：按已用词元降到第 {index} 级（{name}）",
    },
    "deg_bb_code_summary": {
        "en": "level {index} ({name}); the summary is written by code",
        "zh": "第 {index} 级（{name}）；总结由程序生成",
    },
    "deg_bb_no_rebuttal": {
        "en": "level {index} ({name}); no rebuttal round (fewer rounds); summary by code",
        "zh": "第 {index} 级（{name}）；不进行反驳轮（轮次更少）；总结由程序生成",
    },
    "stop_budget": {
        "en": "budget: no tokens left for round {round}",
        "zh": "预算：第 {round} 轮已没有可用的词元",
    },
    "stop_all_failed": {
        "en": "every expert failed in round {round}",
        "zh": "第 {round} 轮所有专家都未能作答",
    },
    "stop_consensus": {
        "en": "consensus on {action} after round {round}",
        "zh": "第 {round} 轮后就“{action}”达成一致",
    },
    "stop_moderator": {
        "en": "the moderator stopped after round {round}",
        "zh": "主持人在第 {round} 轮后结束了辩论",
    },
    "stop_moderator_why": {
        "en": "the moderator stopped after round {round}: {reason}",
        "zh": "主持人在第 {round} 轮后结束了辩论：{reason}",
    },
    "stop_last_round": {
        "en": "reached the last planned round ({planned})",
        "zh": "已到计划的最后一轮（第 {planned} 轮）",
    },
    "stop_phases": {
        "en": "{n} phases",
        "zh": "{n} 个阶段",
    },
    # the bull/bear executive summary written by code when the model's cannot be paid for
    "code_no_verdict": {
        "en": "No verdict: the judge did not answer.",
        "zh": "没有结论：裁判没有作答。",
    },
    "code_verdict": {
        "en": "**Verdict:** {verdict} ({action}, {confidence}/10, {horizon})",
        "zh": "**结论：**{verdict}（{action}，{confidence}/10，{horizon}）",
    },
    "code_horizon_na": {
        "en": "horizon n/a",
        "zh": "期限未说明",
    },
    "code_why": {
        "en": "**Why:** {reasons}",
        "zh": "**理由：**{reasons}",
    },
    "code_risks": {
        "en": "**Key risks:** {risks}",
        "zh": "**主要风险：**{risks}",
    },
    "code_opposing": {
        "en": "**Strongest opposing data point:** {point}",
        "zh": "**最有力的反方数据：**{point}",
    },
}
