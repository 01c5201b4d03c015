"""The bot's own replies in a chat: commands, limits, budgets, links, the offline analyst's
sentences."""

WORDS: dict[str, dict[str, str]] = {
    "working": {
        "en": "⏳ Working on it…",
        "zh": "⏳ 正在分析…",
    },
    "failed": {
        "en": "⚠️ {error}",
        "zh": "⚠️ {error}",
    },
    "stopped": {
        "en": "⏹ Stopped.",
        "zh": "⏹ 已停止。",
    },
    "sorry": {
        "en": "⚠️ Sorry, something went wrong with this message and I could not answer it. I "
              "will not retry it: please rephrase it or try again later.",
        "zh": "⚠️ 抱歉，处理这条消息时出错，无法回答，也不会自动重试。请换个说法或稍后再试。",
    },
    "bad_input": {
        "en": "⚠️ I can't use that input: a number or value in it is out of range or of the "
              "wrong kind. Please check it and send it again.",
        "zh": "⚠️ 无法使用这条输入：其中的数字或数值超出范围或格式不对。请检查后重新发送。",
    },
    "interrupted": {
        "en": "⚠️ I am restarting: I will finish this answer when I am back.",
        "zh": "⚠️ 服务正在重启，恢复后会继续完成这个回答。",
    },
    "db_unavailable": {
        "en": "⚠️ My database is briefly unavailable. I have your message and will answer it as "
              "soon as it is back.",
        "zh": "⚠️ 数据库暂时不可用。你的消息我已收到，恢复后会立即回答。",
    },
    "restarted_resend": {
        "en": "⚠️ I restarted before I could answer “{text}”. Please send it again.",
        "zh": "⚠️ 服务重启，没来得及回答“{text}”，请再发一次。",
    },
    "stopped_none": {
        "en": "Nothing is running.",
        "zh": "当前没有正在运行的任务。",
    },
    "mode_set": {
        "en": "Mode set to *{mode}*.",
        "zh": "模式已切换为 *{mode}*。",
    },
    "mode_now": {
        "en": "Current mode: *{mode}*. Choose: {choices}",
        "zh": "当前模式：*{mode}*。可选：{choices}",
    },
    "mode_bad": {
        "en": "Unknown mode {mode!r}. Choose one of: {choices}.",
        "zh": "未知模式 {mode!r}。可选：{choices}。",
    },
    "new": {
        "en": "Started a new conversation (mode: {mode}).",
        "zh": "已开始新的对话（模式：{mode}）。",
    },

    "lang_set": {
        "en": "Language set to English.",
        "zh": "语言已设置为中文。",
    },
    "lang_bad": {
        "en": "Use /lang en or /lang zh.",
        "zh": "请使用 /lang en 或 /lang zh。",
    },
    "link_issued": {
        "en": "Your link code is {code}. Within 10 minutes, send /link {code} from your other "
              "chat app to join the accounts.",
        "zh": "你的绑定码是 {code}。请在 10 分钟内在另一个聊天应用中发送 /link {code}。",
    },
    "link_ok": {
        "en": "Linked. Your accounts now share one profile: {platforms}.",
        "zh": "绑定成功。已关联：{platforms}。",
    },
    "link_private": {
        "en": "Link codes are only given and taken in a private chat with me: message me "
              "directly.",
        "zh": "绑定码只能在与我的私聊中获取和使用，请直接私信我。",
    },
    "link_used": {
        "en": "Your link code was just used by the {platform} account {who}: the two accounts "
              "are now one profile. If that was not you, send /unlink from that account.",
        "zh": "你的绑定码刚被 {platform} 账号 {who} 使用，两个账号已合并为一个资料。"
              "如果不是你本人，请在该账号发送 /unlink。",
    },
    "link_failed": {
        "en": "That code did not work ({reason}).",
        "zh": "绑定失败（{reason}）。",
    },
    "unlink_ok": {
        "en": "This account is unlinked and has its own profile again.",
        "zh": "已解除绑定。",
    },
    "unlink_none": {
        "en": "This account is not linked to another one.",
        "zh": "此账号没有绑定其他账号。",
    },
    "unlink_limited": {
        "en": "Accounts can be unlinked {n} times a day: try again in {wait}. (What you spent "
              "today stays counted either way.)",
        "zh": "每天最多解除绑定 {n} 次，请在 {wait} 后再试。（今天已用的额度无论如何都会计入。）",
    },
    "subscribe_duplicate": {
        "en": "This chat already has that subscription: #{id} ({what}). /subscriptions lists "
              "them.",
        "zh": "本聊天已有相同的订阅：#{id}（{what}）。用 /subscriptions 查看。",
    },
    "subscribe_owner_cap": {
        "en": "You have {n} subscriptions, the most one person may have. /unsubscribe ID one "
              "first.",
        "zh": "你已有 {n} 个订阅，已达每人上限。请先 /unsubscribe 编号 删除一个。",
    },
    "subscribe_chat_cap": {
        "en": "This chat has {n} subscriptions, the most one chat may have. /unsubscribe ID one "
              "first.",
        "zh": "本聊天已有 {n} 个订阅，已达每个聊天的上限。请先 /unsubscribe 编号 删除一个。",
    },
    "needs_arg": {
        "en": "Usage: {usage}",
        "zh": "用法：{usage}",
    },
    "access_denied": {
        "en": "This bot is private. Ask its admin to allow your account {who}.",
        "zh": "这是私有机器人。请联系管理员允许你的账号 {who}。",
    },
    "rate_limited": {
        "en": "Too many requests ({what}): please try again in {wait}.",
        "zh": "请求太频繁（{what}），请在 {wait}后再试。",
    },
    "rate_message": {
        "en": "messages per minute",
        "zh": "每分钟消息数",
    },
    "rate_voice": {
        "en": "voice notes per hour",
        "zh": "每小时语音数",
    },
    "rate_heavy": {
        "en": "debates and podcasts per day",
        "zh": "每日辩论和播客数",
    },
    "queued_person": {
        "en": "Queued: I'm still answering your other question; this one comes next.",
        "zh": "已排队：你的另一个问题还在回答中，之后处理这个。",
    },
    "budget_refused": {
        "en": "You have used your {which}. It resets at {at}.",
        "zh": "你的{which}已用完，将于 {at} 重置。",
    },
    "budget_level_fewer_turns": {
        "en": "Over half of your budget is used ({left} left): this answer takes fewer tool "
              "steps.",
        "zh": "预算已用过半（剩余 {left}）：本次回答减少工具调用轮数。",
    },
    "budget_level_cheaper_profile": {
        "en": "Your budget is running low ({left} left): this answer uses the cheaper model and "
              "fewer tool steps.",
        "zh": "预算不多了（剩余 {left}）：本次使用更便宜的模型，并减少工具调用轮数。",
    },
    "budget_level_fast_mode": {
        "en": "Your budget is nearly used ({left} left): answering in fast mode (one model call, "
              "no tools).",
        "zh": "预算即将用完（剩余 {left}）：本次以快速模式回答（一次模型调用，不调用工具）。",
    },
    "budget_daily_tokens": {
        "en": "daily token budget",
        "zh": "每日 token 预算",
    },
    "budget_daily_usd": {
        "en": "daily spending budget",
        "zh": "每日费用预算",
    },
    "budget_monthly_tokens": {
        "en": "monthly token budget",
        "zh": "每月 token 预算",
    },
    "budget_monthly_usd": {
        "en": "monthly spending budget",
        "zh": "每月费用预算",
    },
    "conversation_closed": {
        "en": "That conversation reached its budget ({used:,} tokens) and is closed. I started a "
              "new one carrying its summary.",
        "zh": "上一个对话已达到预算（{used:,} tokens）并已关闭。已开始新对话，"
              "并带上了之前的摘要。",
    },
    "group_admins_only": {
        "en": "In a group, only its admins can use {command} to change the chat's mode or "
              "subscriptions.",
        "zh": "在群组中，只有群管理员可以用 {command} 更改本聊天的模式或订阅。",
    },
    "group_admin_unchecked": {
        "en": "I could not check this group's admins just now: please try again in a moment. "
              "Nothing was changed.",
        "zh": "暂时无法确认本群的管理员，请稍后再试。未做任何更改。",
    },
    "bad_timeframe": {
        "en": "I don't know the timeframe \"{tf}\". Use 1m, 5m, 15m, 30m, 1h, 4h, 1d, 1w or 1mo "
              "(or 1H, 4H, 1D, 3M, 6M, 1Y, Max).",
        "zh": "不支持的周期“{tf}”。可用：1m、5m、15m、30m、1h、4h、1d、1w、1mo（或 1H、4H、1D、"
              "3M、6M、1Y、Max）。",
    },
    "web_off": {
        "en": "The web page is not set up on this Bullpen: its operator starts it with WEB_PORT "
              "(and WEB_BASE_URL for the links).",
        "zh": "此 Bullpen 未开启网页版：需由管理员设置 WEB_PORT（以及链接地址 WEB_BASE_URL）。",
    },
    "web_link": {
        "en": "Your sign-in link to the web page: open it and press Sign in (it works once, for "
              "10 minutes; do not share it):\n{url}",
        "zh": "你的网页版登录链接：打开后点击“登录”（10 分钟内有效，只能使用一次，请勿转发）：\n"
              "{url}",
    },
    "web_sent_private": {
        "en": "I sent you a sign-in link in a private message.",
        "zh": "登录链接已通过私聊发送给你。",
    },
    "web_private": {
        "en": "A sign-in link is only given in a private chat with me: message me directly and "
              "send /web there.",
        "zh": "登录链接只在与我的私聊中发放：请私信我并发送 /web。",
    },
    "web_logout": {
        "en": "Signed out of the web page ({n} session(s) ended).",
        "zh": "已退出网页版（结束了 {n} 个会话）。",
    },
    "web_logout_none": {
        "en": "No web session was open.",
        "zh": "没有已登录的网页会话。",
    },
    "web_usage": {
        "en": "Usage: /web (a sign-in link to the web page) or /web logout",
        "zh": "用法：/web（获取网页版登录链接）或 /web logout（退出）",
    },
    "share_off": {
        "en": "Share links need the web page, which is not set up on this Bullpen (WEB_PORT / "
              "WEB_BASE_URL).",
        "zh": "分享链接需要网页版，此 Bullpen 未开启（WEB_PORT / WEB_BASE_URL）。",
    },
    "share_empty": {
        "en": "Nothing to share yet: this conversation has no questions or answers.",
        "zh": "暂无可分享的内容：本对话还没有问答。",
    },
    "share_ok": {
        "en": "This conversation is published read-only at:\n{url}\nAnyone with the link can "
              "read its questions, answers and charts (no tool internals). /unshare revokes it.",
        "zh": "本对话已以只读方式发布：\n{url}\n"
              "任何拿到链接的人都能看到问答和图表（不含工具调用细节）。发送 /unshare 撤销。",
    },
    "unshare_ok": {
        "en": "Revoked {n} share link(s) of this chat: they no longer work.",
        "zh": "已撤销本聊天的 {n} 个分享链接，它们已失效。",
    },
    "unshare_none": {
        "en": "Nothing of this chat is shared.",
        "zh": "本聊天没有分享中的对话。",
    },
    "period_partial": {
        "en": "⚠️ You asked about {asked_start} to {asked_end}; the data has {name} only from "
              "{data_first} to {data_last}, so this covers part of it.",
        "zh": "⚠️ 所问区间为 {asked_start} 至 {asked_end}；{name} 的数据只有 {data_first} 至 "
              "{data_last}，以上只覆盖其中一部分。",
    },
    "period_none": {
        "en": "⚠️ {name}: no bars from {asked_start} to {asked_end}; the data runs {data_first} "
              "to {data_last}.",
        "zh": "⚠️ {name}：{asked_start} 至 {asked_end} 没有K线数据；现有数据为 {data_first} 至 "
              "{data_last}。",
    },
    "no_bars": {
        "en": "{name}: no trading days in the asked range.",
        "zh": "{name}：所问区间内没有交易日。",
    },
    "unsupported": {
        "en": "I can read text and voice notes; this kind of message ({kind}) isn't something I "
              "can analyse.",
        "zh": "我可以处理文字和语音消息；暂不支持这种消息（{kind}）。",
    },
    "admin_cut_rows": {
        "en": "cut at {limit} rows: the statement returned more",
        "zh": "已截断：只显示前 {limit} 行",
    },
    "admin_cut_bytes": {
        "en": "cut at {size} ({limit} bytes): the statement returned more",
        "zh": "已截断：结果超过 {size}（{limit} 字节）",
    },
    "admin_off": {
        "en": "The admin console is off: {reason}. It runs SQL only as its own role "
              "bullpen_console, never as a stronger one (see the README, 'Database roles').",
        "zh": "管理控制台已关闭：{reason}。它只以专用角色 bullpen_console 执行 SQL，"
              "不会改用权限更高的角色（详见 README）。",
    },
    "stale_data": {
        "en": "⏳ {name}: data from {date}, {age} old (the offline data has nothing newer).",
        "zh": "⏳ {name}：数据为 {date}，已是 {age}前（离线数据没有更新的）。",
    },
    "stale_period": {
        "en": "⏳ {name}: the period is counted back from the last bar, {date} ({age} ago), not "
              "from today.",
        "zh": "⏳ {name}：区间从最后一根K线 {date}（{age}前）往回算，而不是从今天。",
    },
    "no_prediction": {
        "en": "Bullpen does not predict prices or give investment advice: past prices cannot "
              "tell whether {what} will rise or fall. Below is what the data shows; I can also "
              "give its history over a period, indicators (RSI, MACD), a chart or an ICT "
              "analysis.",
        "zh": "Bullpen 不预测价格，也不提供投资建议：历史行情无法告诉我们{what}会涨还是会跌。"
              "以下是数据显示的情况；我还可以给出某段时间的走势、技术指标（RSI、MACD）、图表或 "
              "ICT 分析。",
    },
    "what_market": {
        "en": "the market",
        "zh": "市场",
    },
    "no_advice": {
        "en": "Bullpen does not give investment advice or pick stocks to buy. What I can do: "
              "quotes and price history of a stock or index you name, comparisons, indicators, "
              "charts, ICT analysis, and the statements of some A-shares; for example “CSI 300 "
              "last 3 months” or “compare NVDA and AMD”.",
        "zh": "Bullpen 不提供投资建议，也不替你选股。我可以做的："
              "你点名的股票或指数的报价和历史走势、对比、技术指标、图表、ICT 分析，"
              "以及部分A股的财务报表；例如“沪深300最近3个月”或“对比英伟达和AMD”。",
    },
    "market_head": {
        "en": "The main indexes in the offline data (the market as a whole):",
        "zh": "离线数据中的主要指数（大盘概况）：",
    },
    "sector_offline": {
        "en": "A sector screen needs a live data provider: the screener reads the latest quotes "
              "of every A-share, and the offline data has no sector quotes or screens.",
        "zh": "板块筛选需要在线数据源：筛选器读取全部A股的最新行情，"
              "离线数据没有板块行情或筛选结果。",
    },
    "hk_offline": {
        "en": "{name}: no Hong Kong prices offline. The offline data has A-shares, US stocks, "
              "indexes, crypto and FX; Hong Kong quotes need a live data provider.",
        "zh": "{name}：离线数据没有港股行情（只有A股、美股、指数、加密货币和外汇），"
              "港股行情需要在线数据源。",
    },
    "fund_offline": {
        "en": "Fund NAVs need a live data provider: no package ships China fund NAVs, so the "
              "offline data has none.",
        "zh": "基金净值需要在线数据源：没有任何数据包提供中国基金净值，离线数据里没有。",
    },
    "no_multiple": {
        "en": "No {metric} offline for {name}: {why}.",
        "zh": "离线数据无法给出 {name} 的{metric}：{why}。",
    },
    "why_one_day": {
        "en": "the offline data has one day of its prices ({day}) and no statements",
        "zh": "离线数据只有它一天的行情（{day}），没有财务报表",
    },
    "why_no_statements": {
        "en": "the offline data has its prices to {day} but no statements (statements offline: "
              "{codes})",
        "zh": "离线数据有它截至 {day} 的行情，但没有财务报表（离线有报表的：{codes}）",
    },
    "why_us": {
        "en": "the offline data has no statements of US companies (SEC filing text only)",
        "zh": "离线数据没有美股公司的财务报表（只有 SEC 文件文本）",
    },
    "why_not_stock": {
        "en": "it is not a company's share, so it has no earnings or book value",
        "zh": "它不是公司股票，没有盈利或净资产",
    },
    "why_no_inputs": {
        "en": "the offline data has no share count or per-share dividends to compute it from",
        "zh": "离线数据没有计算所需的总股本或每股分红",
    },
    "currency_CNY": {
        "en": "CNY",
        "zh": "元",
    },
    "currency_USD": {
        "en": "USD",
        "zh": "美元",
    },
    "currency_HKD": {
        "en": "HKD",
        "zh": "港元",
    },
    "metric_pe": {
        "en": "P/E",
        "zh": "市盈率",
    },
    "metric_pb": {
        "en": "P/B",
        "zh": "市净率",
    },
    "metric_market_cap": {
        "en": "market cap",
        "zh": "市值",
    },
    "metric_dividend_yield": {
        "en": "dividend yield",
        "zh": "股息率",
    },
    "multiples_pe": {
        "en": "**{name}** P/E **{pe}x** on {date}: close {price} {cur} over {period} EPS {eps} "
              "(static).",
        "zh": "**{name}** {date} 市盈率 **{pe} 倍**：收盘价 {price} {cur} ÷ {period}每股收益 "
              "{eps} {cur}（静态）。",
    },
    "multiples_pe_ttm": {
        "en": "TTM P/E {pe}x (EPS {eps} over the four quarters to {period}).",
        "zh": "滚动市盈率（TTM）{pe} 倍（截至 {period} 的四个季度每股收益 {eps} 元）。",
    },
    "multiples_pb": {
        "en": "P/B {pb}x (book value per share {bvps}, {period}).",
        "zh": "市净率 {pb} 倍（每股净资产 {bvps} 元，{period}）。",
    },
    "multiples_later": {
        "en": "The prices run to {last}, but the statements stop at {period}: the multiples use "
              "the close of {date}, when those statements were the newest.",
        "zh": "行情数据到 {last}，但报表只到 {period}：以上倍数用 {date} 的收盘价，"
              "那时这些报表是最新的。",
    },
    "multiples_source": {
        "en": "Sources: {prices}; {statements} (offline data)",
        "zh": "数据来源：{prices}；{statements}（离线数据）",
    },
    "not_understood": {
        "en": "I could not find a stock, index, crypto or FX pair in that. Try “NVDA latest "
              "close”, “S&P 500 last month” or “bitcoin price”; “hello” shows what the offline "
              "data covers, /help the commands.",
        "zh": "我没有在这句话里找到股票、指数、加密货币或外汇。试试“浦发银行 最新收盘价”、"
              "“沪深300最近一个月”或“比特币价格”；发“你好”查看离线数据范围，/help 查看命令。",
    },
    # each command's summary and usage, read by its declaration (bot.commands)
    "help_head": {
        "en": "*Bullpen* - financial research for A-shares and US stocks.\nAsk in plain words: "
              "\"NVDA latest close\", \"茅台最近走势\", \"compare AAPL and MSFT\".",
        "zh": "*Bullpen* - A股与美股研究助手。直接提问即可，例如\"茅台最近走势\"、"
              "\"NVDA 最新收盘价\"。",
    },
    "cmd_start": {
        "en": "Start and show this help",
        "zh": "开始并显示帮助",
    },
    "cmd_help": {
        "en": "What I can do",
        "zh": "我能做什么",
    },
    "cmd_mode": {
        "en": "How I answer, now or from here on",
        "zh": "回答模式（当前或此后）",
    },
    "use_mode": {
        "en": "/mode [normal|debate|fast]",
        "zh": "/mode [normal|debate|fast]",
    },
    "cmd_new": {
        "en": "Start a new conversation",
        "zh": "开始新对话",
    },
    "cmd_stop": {
        "en": "Stop the current answer",
        "zh": "停止当前回答",
    },
    "cmd_lang": {
        "en": "Language of my messages",
        "zh": "消息语言",
    },
    "use_lang": {
        "en": "/lang en|zh",
        "zh": "/lang en|zh",
    },
    "cmd_fast": {
        "en": "One quick answer",
        "zh": "快速回答",
    },
    "use_fast": {
        "en": "/fast QUESTION",
        "zh": "/fast 问题",
    },
    "cmd_debate": {
        "en": "Analysts argue, a judge concludes",
        "zh": "多方辩论并由裁判总结",
    },
    "use_debate": {
        "en": "/debate QUESTION",
        "zh": "/debate 问题",
    },
    "cmd_ict": {
        "en": "ICT / smart-money analysis, e.g. /ict NVDA 4h",
        "zh": "ICT 分析，如 /ict NVDA 4h",
    },
    "use_ict": {
        "en": "/ict SYMBOL [TF]",
        "zh": "/ict 代码 [周期]",
    },
    "cmd_chart": {
        "en": "Price chart, e.g. /chart AAPL 6mo",
        "zh": "价格图，如 /chart 000300 近一年",
    },
    "use_chart": {
        "en": "/chart SYMBOL [RANGE]",
        "zh": "/chart 代码 [区间]",
    },
    "cmd_plan": {
        "en": "A trade plan from the ICT analysis",
        "zh": "基于 ICT 分析的交易计划",
    },
    "use_plan": {
        "en": "/plan SYMBOL [TF]",
        "zh": "/plan 代码 [周期]",
    },
    "cmd_link": {
        "en": "Link this chat account with another platform",
        "zh": "跨平台绑定账号",
    },
    "use_link": {
        "en": "/link [CODE]",
        "zh": "/link [绑定码]",
    },
    "cmd_unlink": {
        "en": "Undo a link",
        "zh": "解除绑定",
    },
    "cmd_watchlist": {
        "en": "Your watchlist, on every linked platform",
        "zh": "自选股（所有绑定平台共用）",
    },
    "use_watchlist": {
        "en": "/watchlist [add|remove SYMBOLS]",
        "zh": "/watchlist [add|remove 股票]",
    },
    "cmd_tz": {
        "en": "Your time zone, e.g. /tz Asia/Shanghai",
        "zh": "你的时区，如 /tz Asia/Shanghai",
    },
    "use_tz": {
        "en": "/tz ZONE",
        "zh": "/tz 时区",
    },
    "cmd_subscribe": {
        "en": "A report (or, with podcast, the podcast) pushed here on a schedule",
        "zh": "定时推送报告到这里（加 podcast：播客）",
    },
    "use_subscribe": {
        "en": "/subscribe [SYMBOLS] [at HH:MM] [daily|weekdays|tradingdays|mon..sun] [pdf] "
              "[podcast]",
        "zh": "/subscribe [股票] [at 08:00] [交易日|每天|工作日] [pdf] [podcast]",
    },
    "cmd_subscriptions": {
        "en": "This chat's subscriptions",
        "zh": "本聊天的订阅",
    },
    "cmd_unsubscribe": {
        "en": "Stop a subscription",
        "zh": "取消订阅",
    },
    "use_unsubscribe": {
        "en": "/unsubscribe ID|all",
        "zh": "/unsubscribe 编号|all",
    },
    "cmd_report": {
        "en": "The report now",
        "zh": "立即生成报告",
    },
    "use_report": {
        "en": "/report [SYMBOLS]",
        "zh": "/report [股票]",
    },
    "cmd_podcast": {
        "en": "The daily podcast script now",
        "zh": "立即生成每日播客脚本",
    },
    "use_podcast": {
        "en": "/podcast [SYMBOLS] [pdf]",
        "zh": "/podcast [股票] [pdf]",
    },
    "cmd_ta": {
        "en": "Run a TA script over a symbol's bars in the sandbox",
        "zh": "在沙箱中对行情运行技术分析脚本",
    },
    "use_ta": {
        "en": "/ta SYMBOL [TF] [BARS], then a python code block",
        "zh": "/ta 代码 [周期] [K线数]，下一行起写 python 代码块",
    },
    "cmd_tools": {
        "en": "Tools the model wrote for itself",
        "zh": "模型为自己编写的工具",
    },
    "cmd_web": {
        "en": "A sign-in link to the web page; /web logout signs out everywhere",
        "zh": "网页版登录链接；/web logout 退出所有登录",
    },
    "use_web": {
        "en": "/web [logout]",
        "zh": "/web [logout]",
    },
    "cmd_share": {
        "en": "Publish this conversation as a read-only link",
        "zh": "把本对话发布为只读链接",
    },
    "cmd_unshare": {
        "en": "Revoke this chat's share links",
        "zh": "撤销本聊天的分享链接",
    },
}
