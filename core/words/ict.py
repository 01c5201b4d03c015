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
        "zh": "不在杀伤时段",
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
}
