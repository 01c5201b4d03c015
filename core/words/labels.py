"""Notices a mode attaches to an answer (`Done.label`); the renderer shows them in italics."""

WORDS: dict[str, dict[str, str]] = {
    "unverified": {
        "en": "Unverified: {figures} did not come from this answer's data tools.",
        "zh": "未经核实：{figures} 不是来自本次回答的数据工具。",
    },
    "no_tool": {
        "en": "Unverified: no data tool was used for this answer.",
        "zh": "未经核实：本次回答没有使用数据工具。",
    },
    "cut_off": {
        "en": "Cut off: the answer reached the model's length limit ({tokens} tokens) and is "
              "incomplete.",
        "zh": "回答不完整：已达到模型的长度上限（{tokens} 个 token）。",
    },
    "fast": {
        "en": "Fast mode: figures from the model's memory, not checked against data.",
        "zh": "快速模式：数字来自模型记忆，未经数据核对。",
    },
    "empty": {
        "en": "The model returned no answer text.",
        "zh": "模型没有给出回答内容。",
    },
}
