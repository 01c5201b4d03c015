"""ICT words: horizons (`h_`), intervals (`iv_`), the checklist's details and sessions (`d_`,
localized from the English `ict` writes) and the answer's lines (`a_`)."""

WORDS: dict[str, dict[str, str]] = {
    "h_scalp": {
        "en": "scalp (≈1 hour)",
        "zh": "超短线（约1小时）",
    },
    "h_session": {
        "en": "session (≈6 hours)",
        "zh": "日内时段（约6小时）",
    },
    "h_intraday": {
        "en": "intraday (≈3 days)",
        "zh": "日内（约3天）",
    },
    "h_short": {
        "en": "short swing (≈14 days)",
        "zh": "短波段（约14天）",
    },
    "h_medium": {
        "en": "medium swing (≈30 days)",
        "zh": "中波段（约30天）",
    },
    "h_daily": {
        "en": "daily (≈1 year)",
        "zh": "日线（约1年）",
    },
    "h_weekly": {
        "en": "weekly (≈3 months)",
        "zh": "周线（约3个月）",
    },
    "h_monthly": {
        "en": "monthly (≈6 months)",
        "zh": "月线（约6个月）",
    },
    "iv_daily": {
        "en": "daily",
        "zh": "日",
    },
    "iv_weekly": {
        "en": "weekly",
        "zh": "周",
    },
    "iv_monthly": {
        "en": "monthly",
        "zh": "月",
    },
    "iv_60min": {
        "en": "60min",
        "zh": "60分钟",
    },
    "iv_15min": {
        "en": "15min",
        "zh": "15分钟",
    },
    "iv_5min": {
        "en": "5min",
        "zh": "5分钟",
    },
    "iv_1min": {
        "en": "1min",
        "zh": "1分钟",
    },
    "iv_4h": {
        "en": "4h",
        "zh": "4小时",
    },
    "d_premium_at": {
        "en": "premium ({p}% of the range)",
        "zh": "溢价区（区间的 {p}%）",
    },
    "d_discount_at": {
        "en": "discount ({p}% of the range)",
        "zh": "折价区（区间的 {p}%）",
    },
    "d_equilibrium_at": {
        "en": "equilibrium ({p}% of the range)",
        "zh": "均衡区（区间的 {p}%）",
    },
    "d_bullish": {
        "en": "bullish",
        "zh": "看涨",
    },
    "d_bearish": {
        "en": "bearish",
        "zh": "看跌",
    },
    "d_neutral": {
        "en": "neutral",
        "zh": "中性",
    },
    "d_draw": {
        "en": "draw",
        "zh": "目标",
    },
    "d_from": {
        "en": "from",
        "zh": "来自",
    },
    "d_up": {
        "en": "up",
        "zh": "向上",
    },
    "d_down": {
        "en": "down",
        "zh": "向下",
    },
    "d_premium": {
        "en": "premium",
        "zh": "溢价区",
    },
    "d_discount": {
        "en": "discount",
        "zh": "折价区",
    },
    "d_equilibrium": {
        "en": "equilibrium",
        "zh": "均衡区",
    },
    "d_order_block": {
        "en": "order_block",
        "zh": "订单块",
    },
    "d_fvg": {
        "en": "fvg",
        "zh": "FVG",
    },
    "d_confirmed": {
        "en": "confirmed",
        "zh": "已确认",
    },
    "d_not_confirmed": {
        "en": "not confirmed",
        "zh": "未确认",
    },
    "d_no_zone": {
        "en": "no aligned zone",
        "zh": "没有一致的区域",
    },
    "d_no_kill_zone": {
        "en": "no kill zone",
        "zh": "不在关键交易时段",
    },
    "d_no_5m": {
        "en": "no 5m analysis",
        "zh": "没有5分钟分析",
    },
    "d_london": {
        "en": "london",
        "zh": "伦敦",
    },
    "d_ny_am": {
        "en": "ny_am",
        "zh": "纽约上午",
    },
    "d_ny_pm": {
        "en": "ny_pm",
        "zh": "纽约下午",
    },
    "d_cn_am": {
        "en": "morning session",
        "zh": "上午盘",
    },
    "d_cn_pm": {
        "en": "afternoon session",
        "zh": "下午盘",
    },
    "d_asia": {
        "en": "asia",
        "zh": "亚洲",
    },
    "d_acceptable": {
        "en": "acceptable",
        "zh": "可接受",
    },
    "d_preferred": {
        "en": "preferred",
        "zh": "首选",
    },
    "d_off": {
        "en": "off",
        "zh": "不在时段内",
    },
    "d_15m": {
        "en": "15m",
        "zh": "15分钟",
    },
    "d_5m": {
        "en": "5m",
        "zh": "5分钟",
    },
    "d_1m": {
        "en": "1m",
        "zh": "1分钟",
    },
    "a_title": {
        "en": "**ICT analysis · {label} · {tf}** · {horizon}",
        "zh": "**ICT 分析 · {label} · {tf}** · {horizon}",
    },
    "a_span": {
        "en": "{bars} {interval} bars, last closed bar {last}; last close {close}",
        "zh": "{bars} 根{interval}K线，最后收盘K线 {last}；最新收盘价 {close}",
    },
    "a_structure": {
        "en": "**Structure:** {bias} bias",
        "zh": "**市场结构：**{bias}",
    },
    "a_event": {
        "en": "last {kind} {direction} through {level} at {time}",
        "zh": "最近一次 {kind} {direction}，突破 {level}，时间 {time}",
    },
    "a_displaced": {
        "en": " (displaced {x}×)",
        "zh": "（位移 {x} 倍）",
    },
    "a_range": {
        "en": "**Dealing range:** {low} – {high}, equilibrium {eq}; price in {zone} ({pct}% of "
              "the range)",
        "zh": "**交易区间：**{low} – {high}，均衡价 {eq}；价格处于{zone}（区间的 {pct}%）",
    },
    "a_obs": {
        "en": "**Order blocks** (live, best score first):",
        "zh": "**订单块**（有效，按评分排序）：",
    },
    "a_ob": {
        "en": "{side} {zone_type} {bottom} – {top} from a {kind}, score {score}, {state}",
        "zh": "{side} {zone_type} {bottom} – {top}，来自 {kind}，评分 {score}，{state}",
    },
    "a_fvgs": {
        "en": "**Fair value gaps:** {open} of {total} unfilled",
        "zh": "**公允价值缺口（FVG）：**{total} 个中 {open} 个未回补",
    },
    "a_fvg_last": {
        "en": "; latest {side} {bottom} – {top} (CE {ce})",
        "zh": "；最新 {side} {bottom} – {top}（CE {ce}）",
    },
    "a_liquidity": {
        "en": "**Liquidity:** {items}",
        "zh": "**流动性：**{items}",
    },
    "a_eqh": {
        "en": "equal highs {levels}",
        "zh": "等高点 {levels}",
    },
    "a_eql": {
        "en": "equal lows {levels}",
        "zh": "等低点 {levels}",
    },
    "a_ext_high": {
        "en": "external high {price}",
        "zh": "外部高点 {price}",
    },
    "a_ext_low": {
        "en": "external low {price}",
        "zh": "外部低点 {price}",
    },
    "a_swept": {
        "en": " (swept)",
        "zh": "（已扫）",
    },
    "a_none": {
        "en": "no unswept pools",
        "zh": "无未被扫的流动性池",
    },
    "a_levels": {
        "en": "**Key levels:** {items}",
        "zh": "**关键价位：**{items}",
    },
    "a_session_cn": {
        "en": "**Session ({template}):** last bar {time} Shanghai, {zone} (session fit: {fit})",
        "zh": "**时段（{template}）：**最后K线为北京时间 {time}，{zone}（时段匹配：{fit}）",
    },
    "a_session": {
        "en": "**Session ({template}):** last bar {time} New York, kill zone {zone} (session "
              "fit: {fit})",
        "zh": "**时段（{template}）：**最后K线为纽约时间 {time}，关键交易时段 {zone}"
              "（时段匹配：{fit}）",
    },
    "a_fit": {
        "en": "{zone} ({fit})",
        "zh": "{zone}（{fit}）",
    },
    "a_stack": {
        "en": "**Bias stack:** {bias}, grade {grade} ({score}/100), {status}",
        "zh": "**多周期偏向：**{bias}，等级 {grade}（{score}/100），{status}",
    },
    "a_no_data": {
        "en": "Not graded (no data, or data ending too early): {tfs}.",
        "zh": "未计入评级（无数据或数据过早结束）：{tfs}。",
    },
    "a_plan_head": {
        "en": "**Trade plan** (computed from the analysis, not by a model):",
        "zh": "**交易计划**（由分析程序计算，非大模型生成）：",
    },
    "a_wait": {
        "en": "**No plan: wait** – {reason}.",
        "zh": "**暂无计划：等待** – {reason}。",
    },
    "a_chart": {
        "en": "Annotated chart attached.",
        "zh": "已附带标注图表。",
    },
    "a_notes": {
        "en": "Notes: {notes}",
        "zh": "备注：{notes}",
    },
    "a_footer": {
        "en": "Data as of {date}. Not investment advice.",
        "zh": "数据截至 {date}。不构成投资建议。",
    },
    "a_long": {
        "en": "Long",
        "zh": "做多",
    },
    "a_short": {
        "en": "Short",
        "zh": "做空",
    },
    "a_entry": {
        "en": "Entry",
        "zh": "入场",
    },
    "a_stop": {
        "en": "Stop",
        "zh": "止损",
    },
    "a_targets": {
        "en": "Targets",
        "zh": "目标",
    },
    "a_rr": {
        "en": "Reward/risk {rr} to the first target; risk {risk} per unit",
        "zh": "至第一目标的盈亏比 {rr}；每单位风险 {risk}",
    },
    "a_risk_pct": {
        "en": "; risk at most {pct:g}% of equity",
        "zh": "；风险不超过权益的 {pct:g}%",
    },
    "a_confluence": {
        "en": "Confluence",
        "zh": "共振依据",
    },
    "a_wait_s": {
        "en": "wait",
        "zh": "等待",
    },
    "a_ready": {
        "en": "ready",
        "zh": "就绪",
    },
    "a_main": {
        "en": "main",
        "zh": "主",
    },
    "a_sub": {
        "en": "sub",
        "zh": "次",
    },
    "a_valid": {
        "en": "valid",
        "zh": "有效",
    },
    "a_mitigated": {
        "en": "mitigated",
        "zh": "已回踩",
    },
    "a_broken": {
        "en": "broken",
        "zh": "已失效",
    },
    "check_htf_draw": {
        "en": "Daily/4H draw agrees with the idea",
        "zh": "日线/4小时流动性方向与思路一致",
    },
    "check_session_bias": {
        "en": "15m displaced BOS/ChoCH sets the bias",
        "zh": "15分钟带位移的 BOS/ChoCH 设定偏向",
    },
    "check_dealing_range": {
        "en": "15m premium/discount fits the direction",
        "zh": "15分钟溢价/折价与方向匹配",
    },
    "check_entry_zone": {
        "en": "5m OB/FVG aligned with the bias",
        "zh": "5分钟 OB/FVG 与偏向一致",
    },
    "check_five_minute_structure": {
        "en": "5m structure agrees",
        "zh": "5分钟结构一致",
    },
    "check_one_minute_mss": {
        "en": "1m MSS inside the 5m zone",
        "zh": "1分钟 MSS 位于5分钟区域内",
    },
    "check_session_fit": {
        "en": "Inside a preferred kill zone",
        "zh": "处于首选交易时段",
    },
    "status_chart": {"en": "Drawing the ICT chart of {code}", "zh": "正在绘制 {code} 的 ICT 图"},
}
