"""How long: how old data is (years, months, days) and how long to wait (seconds to days)."""

WORDS: dict[str, dict[str, str]] = {
    "year": {
        "en": "{n} year",
        "zh": "{n} 年",
    },
    "years": {
        "en": "{n} years",
        "zh": "{n} 年",
    },
    "month": {
        "en": "{n} month",
        "zh": "{n} 个月",
    },
    "months": {
        "en": "{n} months",
        "zh": "{n} 个月",
    },
    "day": {
        "en": "{n} day",
        "zh": "{n} 天",
    },
    "days": {
        "en": "{n} days",
        "zh": "{n} 天",
    },
    "seconds": {
        "en": "{n} s",
        "zh": "{n} 秒",
    },
    "minutes": {
        "en": "{m} min",
        "zh": "{m} 分钟",
    },
    "hours_minutes": {
        "en": "{h} h {m} min",
        "zh": "{h} 小时 {m} 分",
    },
    "days_hours": {
        "en": "{d} d {h} h",
        "zh": "{d} 天 {h} 小时",
    },
}
