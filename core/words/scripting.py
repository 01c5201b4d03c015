"""/ta (a user's calculation script in the sandbox) and /tools (the generated tools)."""

WORDS: dict[str, dict[str, str]] = {
    "usage": {
        "en": "Usage: /ta SYMBOL [INTERVAL] [BARS], then the script as a python code block on "
              "the next lines, or on the same line between triple backticks. It gets df (open, "
              "high, low, close, volume) and must set result; import pandas_ta as ta for "
              "indicators; fig.savefig('x.png') for a chart.",
        "zh": "用法：/ta 代码 [周期] [K线数]，下一行起写 python 代码块，"
              "或在同一行用三个反引号括起脚本。脚本可用 df（open/high/low/close/volume），"
              "须把结果赋给 result；指标用 import pandas_ta as ta；图表用 fig.savefig('x.png')。",
    },
    "cut": {
        "en": "\n... (cut)",
        "zh": "\n……（已截断）",
    },
    "printed": {
        "en": "Printed:",
        "zh": "输出：",
    },
    "charts_dropped": {
        "en": "({n} more charts not sent: 3 at most)",
        "zh": "（另有 {n} 张图未发送：最多 3 张）",
    },
    "no_tools": {
        "en": "No generated tools yet. `bullpen tools synth \"TASK\"` has the model write one "
              "(it needs a model).",
        "zh": "还没有自动生成的工具。用 `bullpen tools synth \"任务\"` 让模型编写（需要配置模型）"
              "。",
    },
    "tools_head": {
        "en": "Generated tools (verified, sandboxed, calculation only):",
        "zh": "自动生成的工具（已验证，沙箱运行，仅计算）：",
    },
    "other_versions": {
        "en": "Other versions: {items}",
        "zh": "其他版本：{items}",
    },
}
