"""How the two languages join words and sentences: Chinese runs sentences together and lists
with 、; English puts spaces and commas between them."""

WORDS: dict[str, dict[str, str]] = {
    "list_sep": {
        "en": ", ",
        "zh": "、",
    },
    "list_last": {
        "en": " and ",
        "zh": "、",
    },
    "clause_sep": {
        "en": "; ",
        "zh": "；",
    },
    "comma": {
        "en": ", ",
        "zh": "，",
    },
    "sentence_sep": {
        "en": " ",
        "zh": "",
    },
}
