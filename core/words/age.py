"""How old data is: a count of years, months or days."""

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
}
