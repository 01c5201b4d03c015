"""The daily podcast: the turns the deterministic writer says, the index names, the speakers, the
chat summary of an episode, why a podcast cannot be made."""

WORDS: dict[str, dict[str, str]] = {
    # for the model, not the listener: the language its English instructions ask for
    "language": {
        "en": "English",
        "zh": "Simplified Chinese",
    },
    "speaker_host": {
        "en": "host",
        "zh": "主持人",
    },
    "speaker_analyst": {
        "en": "analyst",
        "zh": "分析师",
    },
    "no_tickers": {
        "en": "Name at least one ticker for the podcast, e.g. NVDA TSLA AAPL.",
        "zh": "请至少提供一个股票代码来制作播客，例如 NVDA TSLA AAPL。",
    },
    "none_known": {
        "en": "None of these is a security I know: {given}.",
        "zh": "无法识别这些代码：{given}。",
    },
    "index_^GSPC": {
        "en": "S&P 500",
        "zh": "标普500",
    },
    "index_000300": {
        "en": "CSI 300",
        "zh": "沪深300",
    },
    "index_^IXIC": {
        "en": "Nasdaq Composite",
        "zh": "纳斯达克综合指数",
    },
    "index_^DJI": {
        "en": "Dow Jones Industrial Average",
        "zh": "道琼斯工业平均指数",
    },
    "index_399006": {
        "en": "ChiNext",
        "zh": "创业板指",
    },
    "preparing": {
        "en": "Preparing the podcast: debates for {tickers}",
        "zh": "正在为 {tickers} 准备播客",
    },
    "summary_title": {
        "en": "🎙 **Daily podcast · {date}**",
        "zh": "🎙 **每日播客 · {date}**",
    },
    "no_verdict": {
        "en": "no verdict",
        "zh": "无结论",
    },
    "turns": {
        "en": "{n} turns",
        "zh": "{n} 段",
    },
    "notes": {
        "en": "Notes: {notes}",
        "zh": "备注：{notes}",
    },
    "no_audio": {
        "en": "(No audio this time: {error})",
        "zh": "（音频未生成：{error}）",
    },
    "offline": {
        "en": "This episode was made offline: the debates are scored from data by fixed rules "
              "and a deterministic writer wrote the script; no language model took part.",
        "zh": "本期为离线制作：辩论由固定规则根据数据打分，脚本由确定性程序撰写，"
              "没有使用语言模型。",
    },
    "hello": {
        "en": "Welcome to the Bullpen daily brief for {day}. On today's list: {names}.",
        "zh": "欢迎收听 Bullpen 每日简报，今天是 {day}。今天讨论的股票：{names}。",
    },
    "index_no_data": {
        "en": "{name}: no data ({error})",
        "zh": "{name}：没有数据（{error}）",
    },
    "index_move": {
        "en": "{name} closed at {close} on {day}{move}{latest}",
        "zh": "{name}在 {day} 收于 {close}{move}{latest}",
    },
    "index_change": {
        "en": ", {change} on the day",
        "zh": "，当日{change}",
    },
    "index_latest": {
        "en": " (the latest the data has)",
        "zh": "（数据中最新）",
    },
    "markets": {
        "en": "The markets: {moves}.",
        "zh": "市场方面：{moves}。",
    },
    "historical": {
        "en": "These are historical figures from the offline snapshot, not live.",
        "zh": "以上为离线快照中的历史数据，并非实时行情。",
    },
    "facts_sep": {
        "en": "; ",
        "zh": "，",
    },
    "no_names": {
        "en": "There is no name to discuss today.",
        "zh": "今天没有可以讨论的股票。",
    },
    "market_us": {
        "en": "US",
        "zh": "美股",
    },
    "market_cn": {
        "en": "A-share",
        "zh": "A股",
    },
    "market_hk": {
        "en": "Hong Kong",
        "zh": "港股",
    },
    "market_crypto": {
        "en": "crypto",
        "zh": "加密资产",
    },
    "market_fx": {
        "en": "currency",
        "zh": "外汇",
    },
    "kinds_stock": {
        "en": "stocks",
        "zh": "股票",
    },
    "kinds_index": {
        "en": "indexes",
        "zh": "指数",
    },
    "kinds_crypto": {
        "en": "assets",
        "zh": "资产",
    },
    "kinds_fx": {
        "en": "pairs",
        "zh": "货币对",
    },
    "kinds_fund": {
        "en": "funds",
        "zh": "基金",
    },
    "kind_stock": {
        "en": "stock",
        "zh": "股票",
    },
    "kind_index": {
        "en": "index",
        "zh": "指数",
    },
    "kind_crypto": {
        "en": "crypto",
        "zh": "加密资产",
    },
    "kind_fx": {
        "en": "pair",
        "zh": "货币对",
    },
    "kind_fund": {
        "en": "fund",
        "zh": "基金",
    },
    "all_are": {
        "en": "all {n} are {market} {kinds}",
        "zh": "{n}只都是{market}{kinds}",
    },
    "it_is": {
        "en": "it is {market} {kind}",
        "zh": "是{market}{kind}",
    },
    "mix_item": {
        "en": "{n} {market}",
        "zh": "{n}只{market}",
    },
    "mix": {
        "en": "a mix: {items}",
        "zh": "市场分布：{items}",
    },
    "listed_on": {
        "en": "listed on {exchange}",
        "zh": "都在 {exchange} 上市",
    },
    "same_sector": {
        "en": "in the same sector ({sector})",
        "zh": "同属{sector}行业",
    },
    "sectors": {
        "en": "sectors: {items}",
        "zh": "行业：{items}",
    },
    "members_all": {
        "en": "members of the {indexes}",
        "zh": "都是{indexes}成分股",
    },
    "members_one": {
        "en": "members of the {indexes}",
        "zh": "是{indexes}成分股",
    },
    "common_many": {
        "en": "What today's names have in common: {facts}.",
        "zh": "今天这几只股票的共同点：{facts}。",
    },
    "common_one": {
        "en": "One name today: {facts}.",
        "zh": "今天只有一只股票：{facts}。",
    },
    "idx_sp500": {
        "en": "S&P 500",
        "zh": "标普500",
    },
    "idx_nasdaq100": {
        "en": "Nasdaq-100",
        "zh": "纳斯达克100",
    },
    "idx_dow30": {
        "en": "Dow 30",
        "zh": "道琼斯30",
    },
    "idx_csi300": {
        "en": "CSI 300",
        "zh": "沪深300",
    },
    "idx_csi500": {
        "en": "CSI 500",
        "zh": "中证500",
    },
    "n_0": {
        "en": "zero",
        "zh": "零",
    },
    "n_1": {
        "en": "one",
        "zh": "一",
    },
    "n_2": {
        "en": "two",
        "zh": "两",
    },
    "n_3": {
        "en": "three",
        "zh": "三",
    },
    "n_4": {
        "en": "four",
        "zh": "四",
    },
    "n_5": {
        "en": "five",
        "zh": "五",
    },
    "n_6": {
        "en": "six",
        "zh": "六",
    },
    "n_7": {
        "en": "seven",
        "zh": "七",
    },
    "n_8": {
        "en": "eight",
        "zh": "八",
    },
    "n_9": {
        "en": "nine",
        "zh": "九",
    },
    "n_10": {
        "en": "ten",
        "zh": "十",
    },
    "action_BUY": {
        "en": "BUY",
        "zh": "买入（BUY）",
    },
    "action_HOLD": {
        "en": "HOLD",
        "zh": "持有（HOLD）",
    },
    "action_SELL": {
        "en": "SELL",
        "zh": "卖出（SELL）",
    },
    "verdict_item": {
        "en": "{action} for {codes}",
        "zh": "{action}：{codes}",
    },
    "lean_bullish": {
        "en": "On balance the panels lean bullish.",
        "zh": "总体来看，专家组偏多。",
    },
    "lean_bearish": {
        "en": "On balance the panels lean bearish.",
        "zh": "总体来看，专家组偏空。",
    },
    "lean_split": {
        "en": "Bulls and bears are evenly split.",
        "zh": "多空意见各半。",
    },
    "lean_wait": {
        "en": "The panels mostly wait and see.",
        "zh": "专家组整体观望。",
    },
    "verdicts": {
        "en": "Where the debates came out: {items}.",
        "zh": "辩论结果：{items}。",
    },
    "no_verdicts": {
        "en": "No debate reached a verdict today.",
        "zh": "今天没有任何辩论得出结论。",
    },
    "no_verdict_for": {
        "en": "No verdict today for {codes}.",
        "zh": "今天没有结论：{codes}。",
    },
    "recap": {
        "en": "To recap: {items}.",
        "zh": "回顾一下：{items}。",
    },
    "no_debate_for": {
        "en": "No debate today for {codes}.",
        "zh": "没有辩论：{codes}。",
    },
    "bye": {
        "en": "That's the Bullpen brief for {day}. Every figure was computed in code from the "
              "data named with it; this is research, not investment advice.",
        "zh": "以上就是 {day} 的 Bullpen 简报。所有数据均由代码根据所注明的数据源计算；"
              "本节目仅供研究参考，不构成投资建议。",
    },
    "bye_offline": {
        "en": "Made offline, without a language model.",
        "zh": "本期为离线制作，未使用语言模型。",
    },
    "reason_unknown": {
        "en": "not a security I know",
        "zh": "无法识别这个代码",
    },
    "reason_no_data": {
        "en": "there is no data for it",
        "zh": "没有它的数据",
    },
    "reason_no_verdict": {
        "en": "every expert's turn failed, so there is no verdict",
        "zh": "所有专家的发言都失败了，因此没有结论",
    },
    "reason_over_budget": {
        "en": "the token budget affords no new debate and no report of today is stored",
        "zh": "令牌预算不足以进行新的辩论，且没有今天的已存报告",
    },
    "reason_failed": {
        "en": "the debate could not run",
        "zh": "辩论无法进行",
    },
    "who": {
        "en": "{name} ({code})",
        "zh": "{name}（{code}）",
    },
    "detail": {
        "en": " ({detail})",
        "zh": "（{detail}）",
    },
    "honest": {
        "en": "No debate for {who} today: {reason}{detail}. We'll skip it.",
        "zh": "今天没有{who}的辩论：{reason}{detail}。我们跳过它。",
    },
    "intro_only": {
        "en": "Our name today",
        "zh": "今天的股票",
    },
    "intro_first": {
        "en": "First up",
        "zh": "首先",
    },
    "intro_last": {
        "en": "And finally",
        "zh": "最后",
    },
    "intro_next": {
        "en": "Next",
        "zh": "接下来",
    },
    "expert_fundamental": {
        "en": "fundamental",
        "zh": "基本面",
    },
    "expert_risk": {
        "en": "risk",
        "zh": "风险",
    },
    "expert_growth": {
        "en": "growth",
        "zh": "成长",
    },
    "expert_sentiment": {
        "en": "sentiment",
        "zh": "情绪",
    },
    "no_answer": {
        "en": "{expert} gave no answer",
        "zh": "{expert}未作答",
    },
    "conclusion": {
        "en": "The panel's conclusion: {action}. {text}",
        "zh": "专家组结论：{action}。{text}",
    },
    "consensus": {
        "en": " That is a consensus.",
        "zh": "这是一致意见。",
    },
    "no_intraday": {
        "en": "There are no intraday bars for {code} in the data, so no intraday read today.",
        "zh": "数据中没有 {code} 的日内K线，所以今天没有日内解读。",
    },
    "intraday": {
        "en": "Intraday on {day} ({interval} bars, {first} to {last}): opened at {open}, high "
              "{high}, low {low}, last {close}, {change} from the open.",
        "zh": "日内（{day}，{interval} K线，{first} 至 {last}）：开盘 {open}，最高 {high}，最低 "
              "{low}，最新 {close}，较开盘 {change}。",
    },
    "ticker_hello": {
        "en": "{intro}: {who}. {debated}",
        "zh": "{intro}：{who}。{debated}",
    },
    "debated_on": {
        "en": "The four experts debated it on data as of {day}.",
        "zh": "四位专家基于截至 {day} 的数据进行了辩论。",
    },
    "debated": {
        "en": "The four experts debated it.",
        "zh": "四位专家对它进行了辩论。",
    },
    "opening_positions": {
        "en": "Opening positions: {positions}.",
        "zh": "首轮立场：{positions}。",
    },
    "final_positions": {
        "en": "In the final round: {positions}.",
        "zh": "最后一轮：{positions}。",
    },
    "bull_case": {
        "en": "The bull case, from the {expert} expert: {text}",
        "zh": "看多理由（{expert}）：{text}",
    },
    "bear_case": {
        "en": "The bear case, from the {expert} expert: {text}",
        "zh": "看空理由（{expert}）：{text}",
    },
    "nobody_buy": {
        "en": "Nobody argued to buy.",
        "zh": "没有专家主张买入。",
    },
    "nobody_sell": {
        "en": "Nobody argued to sell.",
        "zh": "没有专家主张卖出。",
    },
    "key_figures": {
        "en": "Key figures: {items}.",
        "zh": "关键数据：{items}。",
    },
    "figure": {
        "en": "{label} {value}",
        "zh": "{label} {value}",
    },
    "metric_close": {
        "en": "Last close",
        "zh": "最新收盘价",
    },
    "metric_ret_1m": {
        "en": "Return 1M",
        "zh": "近1月回报",
    },
    "metric_ret_12m": {
        "en": "Return 12M",
        "zh": "近12月回报",
    },
    "metric_vol_ann": {
        "en": "Volatility (ann.)",
        "zh": "年化波动率",
    },
    "metric_max_drawdown_1y": {
        "en": "Max drawdown 1Y",
        "zh": "近1年最大回撤",
    },
    # what the chat shows while an episode is made
    "status_resolving": {
        "en": "Resolving {n} ticker(s)...",
        "zh": "正在识别 {n} 个代码……",
    },
    "status_reusing": {
        "en": "[{code}] reusing today's debate report",
        "zh": "[{code}] 沿用今天的辩论报告",
    },
    "status_debating": {
        "en": "[{code}] debating...",
        "zh": "[{code}] 辩论中……",
    },
    "status_writing": {
        "en": "[{code}] writing its section...",
        "zh": "[{code}] 正在撰写本段……",
    },
    "status_refining": {
        "en": "Refining the transitions...",
        "zh": "正在润色过渡语……",
    },
}
