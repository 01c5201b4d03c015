"""A data source as the answers name it: provider, what was read, as of when."""

WORDS: dict[str, dict[str, str]] = {
    "as_of": {
        "en": " as of {day}",
        "zh": "，截至 {day}",
    },
    "provider_snapshot": {
        "en": "snapshot",
        "zh": "快照",
    },
    "label": {
        "en": "{provider} ({dataset}){when}",
        "zh": "{provider}（{dataset}）{when}",
    },
    "line": {
        "en": "Source: {label}",
        "zh": "数据来源：{label}",
    },
    "line_snapshot": {
        "en": "Source: {label} (offline snapshot)",
        "zh": "数据来源：{label}（离线快照）",
    },
    "lines": {
        "en": "Sources: {labels}",
        "zh": "数据来源：{labels}",
    },
}
