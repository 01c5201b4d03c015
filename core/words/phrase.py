"""The English phrases the data layer writes (sources, notes, errors) and how a Chinese reader
reads them: `core.localize.localize` replaces each, longest first."""

WORDS: dict[str, dict[str, str]] = {
    "one_day": {
        "en": "one day of {n} A-shares, unadjusted, CNY; the snapshot has no price history of "
              "{code}",
        "zh": "{n} 只A股的单日行情，不复权，人民币；快照没有 {code} 的历史行情",
    },
    "joinquant_1d": {
        "en": "JoinQuant 1d bars",
        "zh": "聚宽日线",
    },
    "joinquant_1h": {
        "en": "JoinQuant 1h bars",
        "zh": "聚宽小时线",
    },
    "joinquant_5m": {
        "en": "JoinQuant 5m bars",
        "zh": "聚宽5分钟线",
    },
    "joinquant_15m": {
        "en": "JoinQuant 15m bars",
        "zh": "聚宽15分钟线",
    },
    "joinquant_30m": {
        "en": "JoinQuant 30m bars",
        "zh": "聚宽30分钟线",
    },
    "forward_adjusted": {
        "en": "前复权 (forward-adjusted to {day})",
        "zh": "前复权（复权至 {day}）",
    },
    "unadjusted_zh": {
        "en": "unadjusted (不复权)",
        "zh": "不复权",
    },
    "unadjusted": {
        "en": "unadjusted",
        "zh": "不复权",
    },
    "split_adjusted": {
        "en": "split-adjusted",
        "zh": "拆股复权",
    },
    "hourly_session": {
        "en": "hourly (session hours, from 1-minute bars)",
        "zh": "小时线（交易时段，由1分钟线合成）",
    },
    "hourly_ask": {
        "en": "hourly ask",
        "zh": "小时线卖出价",
    },
    "close_only": {
        "en": "adjusted close only (open/high/low = close, no volume)",
        "zh": "仅复权收盘价（开盘、最高、最低价均为收盘价，无成交量）",
    },
    "yahoo_15m": {
        "en": "Yahoo Finance 15-minute",
        "zh": "雅虎财经15分钟线",
    },
    "yahoo_daily": {
        "en": "Yahoo Finance daily",
        "zh": "雅虎财经日线",
    },
    "quandl": {
        "en": "Quandl WIKI prices",
        "zh": "Quandl WIKI 行情",
    },
    "csi300_daily": {
        "en": "CSI 300 daily",
        "zh": "沪深300日线",
    },
    "index_points": {
        "en": "index points",
        "zh": "指数点位",
    },
    "one_minute": {
        "en": "1-minute",
        "zh": "1分钟线",
    },
    "daily": {
        "en": "daily",
        "zh": "日线",
    },
    "data_pack": {
        "en": "data pack",
        "zh": "数据包",
    },
    "eastmoney_statements": {
        "en": "EastMoney statements",
        "zh": "东方财富财务报表",
    },
    "statements_span": {
        "en": "statements {first}..{last}",
        "zh": "报表 {first} 至 {last}",
    },
    "offline_historical": {
        "en": "offline snapshot: historical data, not live",
        "zh": "离线快照：历史数据，非实时行情",
    },
    "em_holders": {
        "en": "EastMoney top-10 holders",
        "zh": "东方财富十大股东",
    },
    "em_dividends": {
        "en": "EastMoney dividends",
        "zh": "东方财富分红",
    },
    "no_report": {
        "en": "the offline data has no {period} report; this is the newest it holds",
        "zh": "离线数据没有 {period} 的报告，这是其中最新的一期",
    },
    "connect_totals": {
        "en": "JoinQuant Stock Connect daily totals",
        "zh": "聚宽沪深港通每日合计",
    },
    "connect_flows": {
        "en": "daily flows {first}..{last}",
        "zh": "每日资金 {first} 至 {last}",
    },
    "no_holdings": {
        "en": "top holdings are not in the offline data",
        "zh": "离线数据没有持股明细",
    },
    "no_data_for": {
        "en": "snapshot: the offline snapshot has no data for {code} {name}",
        "zh": "离线快照没有 {code} {name} 的历史行情",
    },
    "one_day_only": {
        "en": ", only the one day {day} (close {close} CNY)",
        "zh": "，只有 {day} 一天的行情（收盘 {close} 元）",
    },
    "it_holds": {
        "en": "; it holds",
        "zh": "；离线快照有：",
    },
    "pack_missing": {
        "en": "data pack '{name}' is not installed (run `bullpen data install`)",
        "zh": "数据包 '{name}' 未安装（请运行 `bullpen data install`）",
    },
    "looked_in": {
        "en": "; looked in {path}",
        "zh": "；查找位置：{path}",
    },
    "snapshot_says": {
        "en": "snapshot: ",
        "zh": "离线快照：",
    },
    "compared_over": {
        "en": "compared over the dates all series share, to {day}",
        "zh": "对比区间为所有标的共有的日期，截至 {day}",
    },
    "has_data_to": {
        "en": "{code} has data to {day}",
        "zh": "{code} 的数据截至 {day}",
    },
}
