"""Model and provider failures as a person reads them (issues 30 and 35): the runner and the
modes say why an answer could not be given, in the user's language."""

WORDS: dict[str, dict[str, str]] = {
    "llm_failed": {
        "en": "The model could not answer: {detail}",
        "zh": "模型无法回答：{detail}",
    },
    "all_profiles_failed": {
        "en": "every model profile failed ({count} tried): {why} Please try again in a moment.",
        "zh": "所有模型配置都失败了（共尝试 {count} 个）：{why}请稍后再试。",
    },
    "why_unreachable": {
        "en": "the model's server could not be reached.",
        "zh": "无法连接模型服务器。",
    },
    "why_timeout": {
        "en": "the model did not answer in time.",
        "zh": "模型没有按时回答。",
    },
    "why_rate_limited": {
        "en": "the model's provider is limiting requests.",
        "zh": "模型服务商正在限制请求频率。",
    },
    "why_too_long": {
        "en": "the conversation is too long for the model's context window (/new starts a "
              "fresh one).",
        "zh": "对话太长，超出了模型的上下文窗口（可用 /new 开始新对话）。",
    },
    "why_server": {
        "en": "the model's server returned an error (the log has its words).",
        "zh": "模型服务器返回了错误（详情已写入日志）。",
    },
    "llm_timeout": {
        "en": "The model did not answer in time ({seconds} s). Please try again, or use "
              "/mode fast.",
        "zh": "模型没有在规定时间内回答（{seconds} 秒）。请再试一次，或使用 /mode fast。",
    },
    "too_slow": {
        "en": "This model is too slow for a {what}: at its measured speed one model turn takes "
              "about {turn_s} s, so even the shortest {what} would take about {total_min} "
              "minutes, more than the {limit_min} minutes allowed. Use a faster model for it.",
        "zh": "当前模型太慢，无法完成{what}：按实测速度，模型每次发言约需 {turn_s} 秒，即使最短的"
              "{what}也要约 {total_min} 分钟，超过允许的 {limit_min} 分钟。请换用更快的模型。",
    },
    "paced": {
        "en": "A slow model: {rounds} round(s), about {total_min} minutes ({turn_s} s a turn).",
        "zh": "模型较慢：进行 {rounds} 轮，约需 {total_min} 分钟（每次发言约 {turn_s} 秒）。",
    },
    "debate_run": {"en": "debate", "zh": "辩论"},
    "podcast_run": {"en": "podcast", "zh": "播客"},
}
