"""Subscriptions, the watchlist and time zones: /subscribe, /subscriptions, /unsubscribe,
/watchlist, /tz, /report, /podcast, and what a schedule argument got wrong."""

WORDS: dict[str, dict[str, str]] = {
    "error_bad_time": {
        "en": "{text} is not a time of day: use HH:MM, 00:00-23:59",
        "zh": "{text} 不是有效的时间：请用 HH:MM，00:00-23:59",
    },
    "error_missing_time": {
        "en": "'at' needs a time after it, like: at 08:00",
        "zh": "at 后面需要一个时间，例如：at 08:00",
    },
    "error_two_times": {
        "en": "One time per subscription, please: {first} or {second}?",
        "zh": "每个订阅只能有一个时间：{first} 还是 {second}？",
    },
    "error_two_recurrences": {
        "en": "One schedule per subscription, please: {first} or {second}?",
        "zh": "每个订阅只能有一种频率：{first} 还是 {second}？",
    },
    "error_too_many_symbols": {
        "en": "{count} symbols is more than one report can hold ({max} at most)",
        "zh": "{count} 个标的太多了，一份报告最多 {max} 个",
    },
    "error_watchlist_and_symbols": {
        "en": "Subscribe to your watchlist or to symbols, not both ({symbols})",
        "zh": "请订阅自选股或指定标的，不能同时两者（{symbols}）",
    },
    "error_empty": {
        "en": "There is nothing to subscribe to in {text}: use /subscribe [SYMBOLS] [at HH:MM] "
              "[daily|weekdays|tradingdays|mon..sun] [pdf]",
        "zh": "{text} 里没有可订阅的内容：用法 /subscribe [SYMBOLS] [at HH:MM] "
              "[daily|weekdays|tradingdays|mon..sun] [pdf]",
    },
    "error_unknown_timezone": {
        "en": "{name} is not a time zone I know: use an IANA name such as Asia/Shanghai or "
              "America/New_York, or a city such as Beijing, Hong Kong, New York, London",
        "zh": "不认识时区 {name}：请用 IANA 名称，如 Asia/Shanghai、America/New_York，或城市名，"
              "如 北京、香港、纽约、伦敦",
    },
    "schedule": {
        "en": "{at} {tz}, {days}",
        "zh": "{days} {at}（{tz}）",
    },
    "days_daily": {
        "en": "every day",
        "zh": "每天",
    },
    "days_weekdays": {
        "en": "weekdays (Mon-Fri)",
        "zh": "每个工作日",
    },
    "days_crypto": {
        "en": "every day (crypto trades daily)",
        "zh": "每天",
    },
    "days_trading": {
        "en": "trading days ({calendar})",
        "zh": "每个{calendar}交易日",
    },
    "calendar_XSHG": {
        "en": "Shanghai",
        "zh": "",
    },
    "calendar_XHKG": {
        "en": "Hong Kong",
        "zh": "港股",
    },
    "calendar_XNYS": {
        "en": "New York",
        "zh": "美股",
    },
    "days_mon": {
        "en": "Mondays",
        "zh": "每周一",
    },
    "days_tue": {
        "en": "Tuesdays",
        "zh": "每周二",
    },
    "days_wed": {
        "en": "Wednesdays",
        "zh": "每周三",
    },
    "days_thu": {
        "en": "Thursdays",
        "zh": "每周四",
    },
    "days_fri": {
        "en": "Fridays",
        "zh": "每周五",
    },
    "days_sat": {
        "en": "Saturdays",
        "zh": "每周六",
    },
    "days_sun": {
        "en": "Sundays",
        "zh": "每周日",
    },
    "weekday_0": {
        "en": "Mon",
        "zh": "周一",
    },
    "weekday_1": {
        "en": "Tue",
        "zh": "周二",
    },
    "weekday_2": {
        "en": "Wed",
        "zh": "周三",
    },
    "weekday_3": {
        "en": "Thu",
        "zh": "周四",
    },
    "weekday_4": {
        "en": "Fri",
        "zh": "周五",
    },
    "weekday_5": {
        "en": "Sat",
        "zh": "周六",
    },
    "weekday_6": {
        "en": "Sun",
        "zh": "周日",
    },
    "not_a_symbol": {
        "en": "{token}: not a symbol I know",
        "zh": "{token}：找不到这个股票",
    },
    "ambiguous": {
        "en": "{token} is ambiguous: {options}",
        "zh": "{token} 有多个可能：{options}",
    },
    "did_you_mean": {
        "en": "{token}: did you mean {options}?",
        "zh": "{token}：你是指 {options}？",
    },
    "watchlist_usage": {
        "en": "Usage: /watchlist add|remove SYMBOLS",
        "zh": "用法：/watchlist add|remove 股票",
    },
    "watchlist_full": {
        "en": "a watchlist holds {n} symbols at most",
        "zh": "自选最多 {n} 个",
    },
    "watchlist_is": {
        "en": "Watchlist: {codes}",
        "zh": "自选：{codes}",
    },
    "watchlist_empty": {
        "en": "Watchlist: empty. Add with /watchlist add NVDA AAPL",
        "zh": "自选：空。用 /watchlist add 茅台 NVDA 添加",
    },
    "tz_is": {
        "en": "Time zone: {zone}",
        "zh": "时区：{zone}",
    },
    "tz_set": {
        "en": "Time zone set to {zone}. New subscriptions use it.",
        "zh": "时区已设为 {zone}，新的订阅将使用它。",
    },
    "not_subscribed": {
        "en": "Not subscribed:",
        "zh": "未订阅：",
    },
    "too_many": {
        "en": "{n} symbols is more than one report holds ({max} at most)",
        "zh": "{n} 个股票超过一份报告的上限（{max}）",
    },
    "your_watchlist": {
        "en": "your watchlist",
        "zh": "你的自选",
    },
    "watchlist": {
        "en": "watchlist",
        "zh": "自选",
    },
    "podcast_tag": {
        "en": " (podcast)",
        "zh": "（播客）",
    },
    "paused_tag": {
        "en": " (paused)",
        "zh": "（已暂停）",
    },
    "subscribed_report": {
        "en": "Subscribed (#{id}): a report on {what}, {schedule}{pdf}. Next: {next}.",
        "zh": "已订阅（#{id}）：{what} 的报告，{schedule}{pdf}。下次：{next}。",
    },
    "subscribed_podcast": {
        "en": "Subscribed (#{id}): a podcast on {what}, {schedule}{pdf}. Next: {next}.",
        "zh": "已订阅（#{id}）：{what} 的播客，{schedule}{pdf}。下次：{next}。",
    },
    "with_pdf": {
        "en": ", with PDF",
        "zh": "，附 PDF",
    },
    "none": {
        "en": "No subscriptions in this chat. Try /subscribe NVDA at 08:00",
        "zh": "本聊天没有订阅。试试 /subscribe 茅台 at 08:00",
    },
    "never_delivered": {
        "en": "nothing delivered yet",
        "zh": "尚未推送",
    },
    "last": {
        "en": "last: {status} {when}",
        "zh": "上次：{status} {when}",
    },
    "next": {
        "en": "next {when}",
        "zh": "下次 {when}",
    },
    "at_time": {
        "en": "{weekday} {day} {time}",
        "zh": "{day}（{weekday}） {time}",
    },
    "unsubscribe_usage": {
        "en": "Usage: /unsubscribe ID|all",
        "zh": "用法：/unsubscribe 编号|all",
    },
    "not_a_number": {
        "en": "{arg} is not a subscription number",
        "zh": "{arg} 不是订阅编号",
    },
    "no_such": {
        "en": "No such subscription in this chat.",
        "zh": "本聊天没有这个订阅。",
    },
    "unsubscribed": {
        "en": "Unsubscribed {ids}.",
        "zh": "已取消订阅 {ids}。",
    },
    "report_usage": {
        "en": "Usage: /report SYMBOLS (or fill /watchlist first)",
        "zh": "用法：/report 股票（或先添加 /watchlist）",
    },
    "podcast_first": {
        "en": "{n} tickers: the first {max} are read",
        "zh": "{n} 个股票：只读取前 {max} 个",
    },
    "podcast_usage": {
        "en": "Usage: /podcast SYMBOLS (or fill /watchlist first)",
        "zh": "用法：/podcast 股票（或先添加 /watchlist）",
    },
    "paused_owner": {
        "en": "Subscription #{id} ({what}) is paused: I can no longer post in {where} (removed "
              "from the chat or blocked). /unsubscribe {id} to remove it, or add me back and "
              "/subscribe again.",
        "zh": "订阅 #{id}（{what}）已暂停：我无法再向 {where} 发送消息（被移出或屏蔽）。"
              "用 /unsubscribe {id} 删除它，或把我加回去后重新 /subscribe。",
    },
    "empty_watchlist_report": {
        "en": "Your scheduled report has no symbols: your watchlist is empty. Add some with "
              "/watchlist add NVDA AAPL.",
        "zh": "定时报告没有股票：你的自选为空。用 /watchlist add 茅台 NVDA 添加。",
    },
    "skipped_report": {
        "en": "Your scheduled report ({names}) was skipped: you have used your {which}. It "
              "resets at {when}; the next ones come as usual after that.",
        "zh": "你的定时报告（{names}）本次已跳过：你的{which}已用完，将于 {when} 重置，"
              "之后照常推送。",
    },
    "skipped_podcast": {
        "en": "Your scheduled podcast ({names}) was skipped: you have used your {which}. It "
              "resets at {when}; the next ones come as usual after that.",
        "zh": "你的定时播客（{names}）本次已跳过：你的{which}已用完，将于 {when} 重置，"
              "之后照常推送。",
    },
    # a zone as the reader says it (jobs.schedule.zone_name): English keeps the IANA name
    "zone_beijing": {
        "en": "Asia/Shanghai",
        "zh": "北京时间",
    },
    "zone_hong_kong": {
        "en": "Asia/Hong_Kong",
        "zh": "香港时间",
    },
    "zone_taipei": {
        "en": "Asia/Taipei",
        "zh": "台北时间",
    },
    "zone_tokyo": {
        "en": "Asia/Tokyo",
        "zh": "东京时间",
    },
    "zone_singapore": {
        "en": "Asia/Singapore",
        "zh": "新加坡时间",
    },
    "zone_new_york": {
        "en": "America/New_York",
        "zh": "美东时间",
    },
    "zone_chicago": {
        "en": "America/Chicago",
        "zh": "美中时间",
    },
    "zone_los_angeles": {
        "en": "America/Los_Angeles",
        "zh": "美西时间",
    },
    "zone_london": {
        "en": "Europe/London",
        "zh": "伦敦时间",
    },
    "zone_sydney": {
        "en": "Australia/Sydney",
        "zh": "悉尼时间",
    },
    "zone_utc": {
        "en": "UTC",
        "zh": "UTC 时间",
    },
}
