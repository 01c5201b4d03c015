"""Bars and indicators as the offline analyst's tables say them: intervals, columns, indicator
names and the signals `tools.indicators` writes (localized by prefix)."""

WORDS: dict[str, dict[str, str]] = {
    "interval_1d": {
        "en": "1d",
        "zh": "日",
    },
    "interval_1w": {
        "en": "1w",
        "zh": "周",
    },
    "interval_1mo": {
        "en": "1mo",
        "zh": "月",
    },
    "interval_1h": {
        "en": "1h",
        "zh": "60分钟",
    },
    "interval_1m": {
        "en": "1m",
        "zh": "1分钟",
    },
    "interval_5m": {
        "en": "5m",
        "zh": "5分钟",
    },
    "interval_15m": {
        "en": "15m",
        "zh": "15分钟",
    },
    "interval_30m": {
        "en": "30m",
        "zh": "30分钟",
    },
    "col_date": {
        "en": "date",
        "zh": "日期",
    },
    "col_time": {
        "en": "time",
        "zh": "时间",
    },
    "col_close": {
        "en": "close",
        "zh": "收盘",
    },
    "col_volume": {
        "en": "volume",
        "zh": "成交量",
    },
    "col_ma5": {
        "en": "ma5",
        "zh": "MA5",
    },
    "col_ma20": {
        "en": "ma20",
        "zh": "MA20",
    },
    "ind_rsi": {
        "en": "rsi",
        "zh": "RSI",
    },
    "ind_macd": {
        "en": "macd",
        "zh": "MACD",
    },
    "ind_signal": {
        "en": "signal",
        "zh": "信号线",
    },
    "ind_hist": {
        "en": "hist",
        "zh": "柱",
    },
    "ind_lower": {
        "en": "lower",
        "zh": "下轨",
    },
    "ind_middle": {
        "en": "middle",
        "zh": "中轨",
    },
    "ind_upper": {
        "en": "upper",
        "zh": "上轨",
    },
    "ind_percent_b": {
        "en": "percent_b",
        "zh": "%B",
    },
    "ind_bandwidth_pct": {
        "en": "bandwidth_pct",
        "zh": "带宽%",
    },
    "ind_k": {
        "en": "k",
        "zh": "K",
    },
    "ind_d": {
        "en": "d",
        "zh": "D",
    },
    "ind_j": {
        "en": "j",
        "zh": "J",
    },
    "ind_atr": {
        "en": "atr",
        "zh": "ATR",
    },
    "ind_atr_pct_of_close": {
        "en": "atr_pct_of_close",
        "zh": "ATR占收盘价%",
    },
    "ind_obv": {
        "en": "obv",
        "zh": "OBV",
    },
    "ind_name_bollinger": {
        "en": "Bollinger",
        "zh": "布林带",
    },
    "ind_sma": {
        "en": "sma",
        "zh": "SMA",
    },
    "ind_ema": {
        "en": "ema",
        "zh": "EMA",
    },
    "sig_overbought_rsi": {
        "en": "overbought (>70)",
        "zh": "超买（>70）",
    },
    "sig_oversold_rsi": {
        "en": "oversold (<30)",
        "zh": "超卖（<30）",
    },
    "sig_macd_cross_up": {
        "en": "MACD crossed above signal in the last {n} bars",
        "zh": "MACD 在最近 {n} 根K线内上穿信号线",
    },
    "sig_macd_cross_down": {
        "en": "MACD crossed below signal in the last {n} bars",
        "zh": "MACD 在最近 {n} 根K线内下穿信号线",
    },
    "sig_macd_above": {
        "en": "MACD above zero",
        "zh": "MACD 位于零轴上方",
    },
    "sig_macd_below": {
        "en": "MACD below zero",
        "zh": "MACD 位于零轴下方",
    },
    "sig_close_above_band": {
        "en": "close above upper band",
        "zh": "收盘价高于上轨",
    },
    "sig_close_below_band": {
        "en": "close below lower band",
        "zh": "收盘价低于下轨",
    },
    "sig_kdj_golden": {
        "en": "K crossed above D in the last {n} bars (golden cross)",
        "zh": "K 在最近 {n} 根K线内上穿 D（金叉）",
    },
    "sig_kdj_dead": {
        "en": "K crossed below D in the last {n} bars (dead cross)",
        "zh": "K 在最近 {n} 根K线内下穿 D（死叉）",
    },
    "sig_j_overbought": {
        "en": "J above 100 (overbought)",
        "zh": "J 高于 100（超买）",
    },
    "sig_j_oversold": {
        "en": "J below 0 (oversold)",
        "zh": "J 低于 0（超卖）",
    },
    "sig_obv_rising": {
        "en": "OBV rising over 20 bars",
        "zh": "OBV 近 20 根K线上升",
    },
    "sig_obv_falling": {
        "en": "OBV falling over 20 bars",
        "zh": "OBV 近 20 根K线下降",
    },
    "sig_close_above_ma": {
        "en": "close above {ma}",
        "zh": "收盘价高于 {ma}",
    },
    "sig_close_below_ma": {
        "en": "close below {ma}",
        "zh": "收盘价低于 {ma}",
    },

    "indicators_head": {
        "en": "**{name}** indicators ({interval}, as of {day}, close {close}):",
        "zh": "**{name}** 技术指标（{interval}线，截至 {day}，收盘 {close}）：",
    },
    "status_script": {
        "en": "Running the script over {n} {interval} bars of {code}",
        "zh": "正在对 {code} 的 {n} 根{interval}线运行脚本",
    },
}
