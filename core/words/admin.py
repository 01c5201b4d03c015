"""/usage (a person's spend, budget and reset times) and /admin."""

WORDS: dict[str, dict[str, str]] = {
    "cached": {
        "en": ", {n} of them from the model's cache",
        "zh": "，其中 {n} 来自模型缓存",
    },
    "usage": {
        "en": "This conversation: {tokens} tokens{cached} (${cost}) in {calls} model calls.\n"
              "Today: {day_tokens} tokens (${day_usd}) of {day_limit}; resets {day_reset} UTC.\n"
              "This month: {month_tokens} tokens (${month_usd}) of {month_limit}; resets "
              "{month_reset} UTC.",
        "zh": "本对话：{tokens} tokens{cached}（${cost}），{calls} 次模型调用。\n今日："
              "{day_tokens} tokens（${day_usd}），预算 {day_limit}；{day_reset} UTC 重置。\n"
              "本月：{month_tokens} tokens（${month_usd}），预算 {month_limit}；{month_reset} "
              "UTC 重置。",
    },
    "admins_only": {
        "en": "Only the bot's admins may use /admin.",
        "zh": "只有管理员可以使用 /admin。",
    },
    "not_platform_id": {
        "en": "{arg} is not PLATFORM:ID (e.g. telegram:12345).",
        "zh": "{arg} 不是 PLATFORM:ID 格式（例如 telegram:12345）。",
    },
    "allowed": {
        "en": "{who}: allowed.",
        "zh": "{who}：已允许。",
    },
    "blocked": {
        "en": "{who}: blocked.",
        "zh": "{who}：已屏蔽。",
    },
    "bad_limits": {
        "en": "DAILY and MONTHLY are token counts, $amounts or -: got {daily} {monthly}.",
        "zh": "DAILY 和 MONTHLY 应为 token 数、$金额或 -：收到 {daily} {monthly}。",
    },
    "budget_set": {
        "en": "{who}: daily {daily}, monthly {monthly} (from now on).",
        "zh": "{who}：每日 {daily}，每月 {monthly}（立即生效）。",
    },
    "cmd_usage": {
        "en": "Your spend, budget and reset times",
        "zh": "你的用量、预算与重置时间",
    },
    "cmd_admin": {
        "en": "Admins: top spenders, allow, block, budget",
        "zh": "管理员：用量排行、允许、禁止、预算",
    },
    "use_admin": {
        "en": "/admin usage | allow PLATFORM:ID | block PLATFORM:ID | budget PLATFORM:ID DAILY "
              "MONTHLY",
        "zh": "/admin usage | allow 平台:ID | block 平台:ID | budget 平台:ID 每日 每月",
    },
    "limits_are": {
        "en": "DAILY and MONTHLY: a number of tokens, $ and an amount in US dollars, or - for the "
              "default.",
        "zh": "每日、每月：token 数量；$ 加美元金额；或 - 表示默认。",
    },
}
