"""The bot's own words in English and Chinese."""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import lru_cache
from typing import Any

STRINGS: dict[str, dict[str, str]] = {
    "working": {"en": "⏳ Working on it…", "zh": "⏳ 正在分析…"},
    "failed": {"en": "⚠️ {error}", "zh": "⚠️ {error}"},
    "stopped": {"en": "⏹ Stopped.", "zh": "⏹ 已停止。"},
    "sorry": {"en": "⚠️ Sorry, something went wrong with this message and I could not answer "
                    "it. I will not retry it: please rephrase it or try again later.",
              "zh": "⚠️ 抱歉，处理这条消息时出错，无法回答，也不会自动重试。请换个说法或稍后再试。"},
    "bad_input": {"en": "⚠️ I can't use that input: a number or value in it is out of range or "
                        "of the wrong kind. Please check it and send it again.",
                  "zh": "⚠️ 无法使用这条输入：其中的数字或数值超出范围或格式不对。"
                        "请检查后重新发送。"},
    "interrupted": {"en": "⚠️ I am restarting: I will finish this answer when I am back.",
                    "zh": "⚠️ 服务正在重启，恢复后会继续完成这个回答。"},
    "db_unavailable": {"en": "⚠️ My database is briefly unavailable. I have your message and "
                             "will answer it as soon as it is back.",
                       "zh": "⚠️ 数据库暂时不可用。你的消息我已收到，恢复后会立即回答。"},
    "restarted_resend": {"en": "⚠️ I restarted before I could answer “{text}”. Please send it "
                               "again.",
                         "zh": "⚠️ 服务重启，没来得及回答“{text}”，请再发一次。"},
    "stopped_none": {"en": "Nothing is running.", "zh": "当前没有正在运行的任务。"},
    "mode_set": {"en": "Mode set to *{mode}*.", "zh": "模式已切换为 *{mode}*。"},
    "mode_now": {"en": "Current mode: *{mode}*. Choose: {choices}",
                 "zh": "当前模式：*{mode}*。可选：{choices}"},
    "mode_bad": {"en": "Unknown mode {mode!r}. Choose one of: {choices}.",
                 "zh": "未知模式 {mode!r}。可选：{choices}。"},
    "new": {"en": "Started a new conversation (mode: {mode}).",
            "zh": "已开始新的对话（模式：{mode}）。"},
    "queued": {"en": "Queued: I'll answer this after the current question.",
               "zh": "已排队：回答完当前问题后处理。"},
    "lang_set": {"en": "Language set to English.", "zh": "语言已设置为中文。"},
    "lang_bad": {"en": "Use /lang en or /lang zh.", "zh": "请使用 /lang en 或 /lang zh。"},
    "link_issued": {"en": "Your link code is {code}. Within 10 minutes, send /link {code} "
                          "from your other chat app to join the accounts.",
                    "zh": "你的绑定码是 {code}。请在 10 分钟内在另一个聊天应用中"
                          "发送 /link {code}。"},
    "link_ok": {"en": "Linked. Your accounts now share one profile: {platforms}.",
                "zh": "绑定成功。已关联：{platforms}。"},
    "link_private": {"en": "Link codes are only given and taken in a private chat with me: "
                             "message me directly.",
                     "zh": "绑定码只能在与我的私聊中获取和使用，请直接私信我。"},
    "link_used": {"en": "Your link code was just used by the {platform} account {who}: the two "
                        "accounts are now one profile. If that was not you, send /unlink from "
                        "that account.",
                  "zh": "你的绑定码刚被 {platform} 账号 {who} 使用，两个账号已合并为一个资料。"
                        "如果不是你本人，请在该账号发送 /unlink。"},
    "link_failed": {"en": "That code did not work ({reason}).", "zh": "绑定失败（{reason}）。"},
    "unlink_ok": {"en": "This account is unlinked and has its own profile again.",
                  "zh": "已解除绑定。"},
    "unlink_none": {"en": "This account is not linked to another one.",
                    "zh": "此账号没有绑定其他账号。"},
    "unlink_limited": {"en": "Accounts can be unlinked {n} times a day: try again in {wait}. "
                             "(What you spent today stays counted either way.)",
                       "zh": "每天最多解除绑定 {n} 次，请在 {wait} 后再试。"
                             "（今天已用的额度无论如何都会计入。）"},
    "subscribe_duplicate": {"en": "This chat already has that subscription: #{id} ({what}). "
                                  "/subscriptions lists them.",
                            "zh": "本聊天已有相同的订阅：#{id}（{what}）。"
                                  "用 /subscriptions 查看。"},
    "subscribe_owner_cap": {"en": "You have {n} subscriptions, the most one person may have. "
                                   "/unsubscribe ID one first.",
                             "zh": "你已有 {n} 个订阅，已达每人上限。请先 /unsubscribe 编号 "
                                   "删除一个。"},
    "subscribe_chat_cap": {"en": "This chat has {n} subscriptions, the most one chat may have. "
                                 "/unsubscribe ID one first.",
                           "zh": "本聊天已有 {n} 个订阅，已达每个聊天的上限。请先 "
                                 "/unsubscribe 编号 删除一个。"},
    "needs_arg": {"en": "Usage: {usage}", "zh": "用法：{usage}"},
    "access_denied": {"en": "This bot is private. Ask its admin to allow your account "
                            "{who}.",
                      "zh": "这是私有机器人。请联系管理员允许你的账号 {who}。"},
    "rate_limited": {"en": "Too many requests ({what}): please try again in {wait}.",
                     "zh": "请求太频繁（{what}），请在 {wait}后再试。"},
    "rate_message": {"en": "messages per minute", "zh": "每分钟消息数"},
    "rate_voice": {"en": "voice notes per hour", "zh": "每小时语音数"},
    "rate_heavy": {"en": "debates and podcasts per day", "zh": "每日辩论和播客数"},
    "queued_person": {"en": "Queued: I'm still answering your other question; this one comes "
                            "next.",
                      "zh": "已排队：你的另一个问题还在回答中，之后处理这个。"},
    "budget_refused": {"en": "You have used your {which}. It resets at {at}.",
                       "zh": "你的{which}已用完，将于 {at} 重置。"},
    "budget_level_fewer_turns": {"en": "Over half of your budget is used ({left} left): this "
                                       "answer takes fewer tool steps.",
                                 "zh": "预算已用过半（剩余 {left}）：本次回答减少工具调用轮数。"},
    "budget_level_cheaper_profile": {"en": "Your budget is running low ({left} left): this "
                                           "answer uses the cheaper model and fewer tool steps.",
                                     "zh": "预算不多了（剩余 {left}）：本次使用更便宜的模型，"
                                           "并减少工具调用轮数。"},
    "budget_level_fast_mode": {"en": "Your budget is nearly used ({left} left): answering in "
                                     "fast mode (one model call, no tools).",
                               "zh": "预算即将用完（剩余 {left}）：本次以快速模式回答"
                                     "（一次模型调用，不调用工具）。"},
    "budget_daily_tokens": {"en": "daily token budget", "zh": "每日 token 预算"},
    "budget_daily_usd": {"en": "daily spending budget", "zh": "每日费用预算"},
    "budget_monthly_tokens": {"en": "monthly token budget", "zh": "每月 token 预算"},
    "budget_monthly_usd": {"en": "monthly spending budget", "zh": "每月费用预算"},
    "conversation_closed": {"en": "That conversation reached its budget ({used:,} tokens) and "
                                  "is closed. I started a new one carrying its summary.",
                            "zh": "上一个对话已达到预算（{used:,} tokens）并已关闭。"
                                  "已开始新对话，并带上了之前的摘要。"},
    "group_admins_only": {"en": "In a group, only its admins can use {command} to change the "
                                "chat's mode or subscriptions.",
                          "zh": "在群组中，只有群管理员可以用 {command} 更改本聊天的模式或订阅。"},
    "group_admin_unchecked": {"en": "I could not check this group's admins just now: please "
                                    "try again in a moment. Nothing was changed.",
                              "zh": "暂时无法确认本群的管理员，请稍后再试。未做任何更改。"},
    "bad_timeframe": {"en": "I don't know the timeframe \"{tf}\". Use 1m, 5m, 15m, 30m, 1h, 4h, "
                            "1d, 1w or 1mo (or 1H, 4H, 1D, 3M, 6M, 1Y, Max).",
                      "zh": "不支持的周期“{tf}”。可用：1m、5m、15m、30m、1h、4h、1d、1w、1mo"
                            "（或 1H、4H、1D、3M、6M、1Y、Max）。"},
    "web_off": {"en": "The web page is not set up on this Bullpen: its operator starts it with "
                      "WEB_PORT (and WEB_BASE_URL for the links).",
                "zh": "此 Bullpen 未开启网页版：需由管理员设置 WEB_PORT（以及链接地址 "
                      "WEB_BASE_URL）。"},
    "web_link": {"en": "Your sign-in link to the web page: open it and press Sign in (it "
                       "works once, for 10 minutes; do not share it):\n{url}",
                 "zh": "你的网页版登录链接：打开后点击“登录”（10 分钟内有效，只能使用一次，"
                       "请勿转发）：\n{url}"},
    "web_sent_private": {"en": "I sent you a sign-in link in a private message.",
                         "zh": "登录链接已通过私聊发送给你。"},
    "web_private": {"en": "A sign-in link is only given in a private chat with me: message me "
                          "directly and send /web there.",
                    "zh": "登录链接只在与我的私聊中发放：请私信我并发送 /web。"},
    "web_logout": {"en": "Signed out of the web page ({n} session(s) ended).",
                   "zh": "已退出网页版（结束了 {n} 个会话）。"},
    "web_logout_none": {"en": "No web session was open.", "zh": "没有已登录的网页会话。"},
    "web_usage": {"en": "Usage: /web (a sign-in link to the web page) or /web logout",
                  "zh": "用法：/web（获取网页版登录链接）或 /web logout（退出）"},
    "share_off": {"en": "Share links need the web page, which is not set up on this Bullpen "
                        "(WEB_PORT / WEB_BASE_URL).",
                  "zh": "分享链接需要网页版，此 Bullpen 未开启（WEB_PORT / WEB_BASE_URL）。"},
    "share_empty": {"en": "Nothing to share yet: this conversation has no questions or "
                          "answers.",
                    "zh": "暂无可分享的内容：本对话还没有问答。"},
    "share_ok": {"en": "This conversation is published read-only at:\n{url}\nAnyone with the "
                       "link can read its questions, answers and charts (no tool internals). "
                       "/unshare revokes it.",
                 "zh": "本对话已以只读方式发布：\n{url}\n任何拿到链接的人都能看到问答和图表"
                       "（不含工具调用细节）。发送 /unshare 撤销。"},
    "unshare_ok": {"en": "Revoked {n} share link(s) of this chat: they no longer work.",
                   "zh": "已撤销本聊天的 {n} 个分享链接，它们已失效。"},
    "unshare_none": {"en": "Nothing of this chat is shared.", "zh": "本聊天没有分享中的对话。"},
    "period_partial": {"en": "⚠️ You asked about {asked_start} to {asked_end}; the data has "
                             "{name} only from {data_first} to {data_last}, so this covers part "
                             "of it.",
                       "zh": "⚠️ 所问区间为 {asked_start} 至 {asked_end}；{name} 的数据只有 "
                             "{data_first} 至 {data_last}，以上只覆盖其中一部分。"},
    "period_none": {"en": "⚠️ {name}: no bars from {asked_start} to {asked_end}; the data runs "
                          "{data_first} to {data_last}.",
                    "zh": "⚠️ {name}：{asked_start} 至 {asked_end} 没有K线数据；现有数据为 "
                          "{data_first} 至 {data_last}。"},
    "no_bars": {"en": "{name}: no trading days in the asked range.",
                "zh": "{name}：所问区间内没有交易日。"},
    "unsupported": {"en": "I can read text and voice notes; this kind of message "
                          "({kind}) isn't something I can analyse.",
                    "zh": "我可以处理文字和语音消息；暂不支持这种消息（{kind}）。"},
    # the admin console (the page shows both languages)
    "admin_cut_rows": {"en": "cut at {limit} rows: the statement returned more",
                       "zh": "已截断：只显示前 {limit} 行"},
    "admin_cut_bytes": {"en": "cut at {size} ({limit} bytes): the statement returned more",
                        "zh": "已截断：结果超过 {size}（{limit} 字节）"},
    "admin_off": {"en": "The admin console is off: {reason}. It runs SQL only as its own "
                        "role bullpen_console, never as a stronger one (see the README, "
                        "'Database roles').",
                  "zh": "管理控制台已关闭：无法以专用角色 bullpen_console 登录数据库"
                        "（不会改用权限更高的角色）。详见 README。"},
    # issue 29: the offline analyst answers the question asked, or says what it cannot
    "age_year": {"en": "{n} year{s}", "zh": "{n} 年"},
    "age_month": {"en": "{n} month{s}", "zh": "{n} 个月"},
    "age_day": {"en": "{n} day{s}", "zh": "{n} 天"},
    "stale_data": {"en": "⏳ {name}: data from {date}, {age} old (the offline data has nothing "
                         "newer).",
                   "zh": "⏳ {name}：数据为 {date}，已是 {age}前（离线数据没有更新的）。"},
    "stale_period": {"en": "⏳ {name}: the period is counted back from the last bar, {date} "
                           "({age} ago), not from today.",
                     "zh": "⏳ {name}：区间从最后一根K线 {date}（{age}前）往回算，而不是从今天。"},
    "no_prediction": {"en": "Bullpen does not predict prices or give investment advice: past "
                            "prices cannot tell whether {what} will rise or fall. Below is what "
                            "the data shows; I can also give its history over a period, "
                            "indicators (RSI, MACD), a chart or an ICT analysis.",
                      "zh": "Bullpen 不预测价格，也不提供投资建议：历史行情无法告诉我们{what}"
                            "会涨还是会跌。以下是数据显示的情况；我还可以给出某段时间的走势、"
                            "技术指标（RSI、MACD）、图表或 ICT 分析。"},
    "what_market": {"en": "the market", "zh": "市场"},
    "no_advice": {"en": "Bullpen does not give investment advice or pick stocks to buy. What I "
                        "can do: quotes and price history of a stock or index you name, "
                        "comparisons, indicators, charts, ICT analysis, and the statements of "
                        "some A-shares; for example “CSI 300 last 3 months” or “compare NVDA "
                        "and AMD”.",
                  "zh": "Bullpen 不提供投资建议，也不替你选股。我可以做的：你点名的股票或指数的"
                        "报价和历史走势、对比、技术指标、图表、ICT 分析，以及部分A股的财务报表；"
                        "例如“沪深300最近3个月”或“对比英伟达和AMD”。"},
    "market_head": {"en": "The main indexes in the offline data (the market as a whole):",
                    "zh": "离线数据中的主要指数（大盘概况）："},
    "sector_offline": {"en": "A sector screen needs a live data provider: the screener reads "
                             "the latest quotes of every A-share, and the offline data has no "
                             "sector quotes or screens.",
                       "zh": "板块筛选需要在线数据源：筛选器读取全部A股的最新行情，离线数据没有"
                             "板块行情或筛选结果。"},
    "hk_offline": {"en": "{name}: no Hong Kong prices offline. The offline data has A-shares, "
                         "US stocks, indexes, crypto and FX; Hong Kong quotes need a live data "
                         "provider.",
                   "zh": "{name}：离线数据没有港股行情（只有A股、美股、指数、加密货币和外汇），"
                         "港股行情需要在线数据源。"},
    "fund_offline": {"en": "Fund NAVs need a live data provider: no package ships China fund "
                           "NAVs, so the offline data has none.",
                     "zh": "基金净值需要在线数据源：没有任何数据包提供中国基金净值，"
                           "离线数据里没有。"},
    "no_multiple": {"en": "No {metric} offline for {name}: {why}.",
                    "zh": "离线数据无法给出 {name} 的{metric}：{why}。"},
    "why_one_day": {"en": "the offline data has one day of its prices ({day}) and no statements",
                    "zh": "离线数据只有它一天的行情（{day}），没有财务报表"},
    "why_no_statements": {"en": "the offline data has its prices to {day} but no statements "
                                "(statements offline: {codes})",
                          "zh": "离线数据有它截至 {day} 的行情，但没有财务报表（离线有报表的："
                                "{codes}）"},
    "why_us": {"en": "the offline data has no statements of US companies (SEC filing text only)",
               "zh": "离线数据没有美股公司的财务报表（只有 SEC 文件文本）"},
    "why_not_stock": {"en": "it is not a company's share, so it has no earnings or book value",
                      "zh": "它不是公司股票，没有盈利或净资产"},
    "why_no_inputs": {"en": "the offline data has no share count or per-share dividends to "
                            "compute it from",
                      "zh": "离线数据没有计算所需的总股本或每股分红"},
    "metric_pe": {"en": "P/E", "zh": "市盈率"},
    "metric_pb": {"en": "P/B", "zh": "市净率"},
    "metric_market_cap": {"en": "market cap", "zh": "市值"},
    "metric_dividend_yield": {"en": "dividend yield", "zh": "股息率"},
    "multiples_pe": {"en": "**{name}** P/E **{pe}x** on {date}: close {price} {cur} over {period} "
                           "EPS {eps} (static).",
                     "zh": "**{name}** {date} 市盈率 **{pe} 倍**：收盘价 {price} 元 ÷ {period}每股"
                           "收益 {eps} 元（静态）。"},
    "multiples_pe_ttm": {"en": "TTM P/E {pe}x (EPS {eps} over the four quarters to {period}).",
                         "zh": "滚动市盈率（TTM）{pe} 倍（截至 {period} 的四个季度每股收益 "
                               "{eps} 元）。"},
    "multiples_pb": {"en": "P/B {pb}x (book value per share {bvps}, {period}).",
                     "zh": "市净率 {pb} 倍（每股净资产 {bvps} 元，{period}）。"},
    "multiples_later": {"en": "The prices run to {last}, but the statements stop at {period}: "
                              "the multiples use the close of {date}, when those statements "
                              "were the newest.",
                        "zh": "行情数据到 {last}，但报表只到 {period}：以上倍数用 {date} 的收盘价，"
                              "那时这些报表是最新的。"},
    "multiples_source": {"en": "Sources: {prices}; {statements} (offline data)",
                         "zh": "数据来源：{prices}；{statements}（离线数据）"},
    # a question the offline analyst found no stock in: a short pointer, not the whole intro
    "not_understood": {"en": "I could not find a stock, index, crypto or FX pair in that. Try "
                             "“NVDA latest close”, “S&P 500 last month” or “bitcoin price”; "
                             "“hello” shows what the offline data covers, /help the commands.",
                       "zh": "我没有在这句话里找到股票、指数、加密货币或外汇。试试"
                             "“浦发银行 最新收盘价”、“沪深300最近一个月”或“比特币价格”；"
                             "发“你好”查看离线数据范围，/help 查看命令。"},
    # --- data sources: the English phrases the data layer writes, and what a Chinese reader
    # reads instead (`localize`; longest first, {fields} match any text)
    "src_as_of": {"en": " as of {day}", "zh": "，截至 {day}"},
    "src_provider_snapshot": {"en": "snapshot", "zh": "快照"},
    "src_label": {"en": "{provider} ({dataset}){when}", "zh": "{provider}（{dataset}）{when}"},
    "phrase_one_day": {"en": "one day of {n} A-shares, unadjusted, CNY; the snapshot has no "
                             "price history of {code}",
                       "zh": "{n} 只A股的单日行情，不复权，人民币；快照没有 {code} 的历史行情"},
    "phrase_joinquant_1d": {"en": "JoinQuant 1d bars", "zh": "聚宽日线"},
    "phrase_joinquant_1h": {"en": "JoinQuant 1h bars", "zh": "聚宽小时线"},
    "phrase_joinquant_5m": {"en": "JoinQuant 5m bars", "zh": "聚宽5分钟线"},
    "phrase_joinquant_15m": {"en": "JoinQuant 15m bars", "zh": "聚宽15分钟线"},
    "phrase_joinquant_30m": {"en": "JoinQuant 30m bars", "zh": "聚宽30分钟线"},
    "phrase_forward_adjusted": {"en": "前复权 (forward-adjusted to {day})",
                                "zh": "前复权（复权至 {day}）"},
    "phrase_unadjusted_zh": {"en": "unadjusted (不复权)", "zh": "不复权"},
    "phrase_unadjusted": {"en": "unadjusted", "zh": "不复权"},
    "phrase_split_adjusted": {"en": "split-adjusted", "zh": "拆股复权"},
    "phrase_hourly_session": {"en": "hourly (session hours, from 1-minute bars)",
                              "zh": "小时线（交易时段，由1分钟线合成）"},
    "phrase_hourly_ask": {"en": "hourly ask", "zh": "小时线卖出价"},
    "phrase_close_only": {"en": "adjusted close only (open/high/low = close, no volume)",
                          "zh": "仅复权收盘价（开盘、最高、最低价均为收盘价，无成交量）"},
    "phrase_yahoo_15m": {"en": "Yahoo Finance 15-minute", "zh": "雅虎财经15分钟线"},
    "phrase_yahoo_daily": {"en": "Yahoo Finance daily", "zh": "雅虎财经日线"},
    "phrase_quandl": {"en": "Quandl WIKI prices", "zh": "Quandl WIKI 行情"},
    "phrase_csi300_daily": {"en": "CSI 300 daily", "zh": "沪深300日线"},
    "phrase_index_points": {"en": "index points", "zh": "指数点位"},
    "phrase_one_minute": {"en": "1-minute", "zh": "1分钟线"},
    "phrase_daily": {"en": "daily", "zh": "日线"},
    "phrase_data_pack": {"en": "data pack", "zh": "数据包"},
    "phrase_eastmoney_statements": {"en": "EastMoney statements", "zh": "东方财富财务报表"},
    "phrase_statements_span": {"en": "statements {first}..{last}", "zh": "报表 {first} 至 {last}"},
    "phrase_offline_historical": {"en": "offline snapshot: historical data, not live",
                                  "zh": "离线快照：历史数据，非实时行情"},
    # --- bars and indicators, as the offline analyst's tables and lists say them
    "interval_1d": {"en": "1d", "zh": "日"},
    "interval_1w": {"en": "1w", "zh": "周"},
    "interval_1mo": {"en": "1mo", "zh": "月"},
    "interval_1h": {"en": "1h", "zh": "60分钟"},
    "interval_1m": {"en": "1m", "zh": "1分钟"},
    "interval_5m": {"en": "5m", "zh": "5分钟"},
    "interval_15m": {"en": "15m", "zh": "15分钟"},
    "interval_30m": {"en": "30m", "zh": "30分钟"},
    "col_date": {"en": "date", "zh": "日期"},
    "col_time": {"en": "time", "zh": "时间"},
    "col_close": {"en": "close", "zh": "收盘"},
    "col_volume": {"en": "volume", "zh": "成交量"},
    "col_ma5": {"en": "ma5", "zh": "MA5"},
    "col_ma20": {"en": "ma20", "zh": "MA20"},
    "ind_rsi": {"en": "rsi", "zh": "RSI"},
    "ind_macd": {"en": "macd", "zh": "MACD"},
    "ind_signal": {"en": "signal", "zh": "信号线"},
    "ind_hist": {"en": "hist", "zh": "柱"},
    "ind_lower": {"en": "lower", "zh": "下轨"},
    "ind_middle": {"en": "middle", "zh": "中轨"},
    "ind_upper": {"en": "upper", "zh": "上轨"},
    "ind_percent_b": {"en": "percent_b", "zh": "%B"},
    "ind_bandwidth_pct": {"en": "bandwidth_pct", "zh": "带宽%"},
    "ind_k": {"en": "k", "zh": "K"},
    "ind_d": {"en": "d", "zh": "D"},
    "ind_j": {"en": "j", "zh": "J"},
    "ind_atr": {"en": "atr", "zh": "ATR"},
    "ind_atr_pct_of_close": {"en": "atr_pct_of_close", "zh": "ATR占收盘价%"},
    "ind_obv": {"en": "obv", "zh": "OBV"},
    "ind_name_bollinger": {"en": "Bollinger", "zh": "布林带"},
    "ind_sma": {"en": "sma", "zh": "SMA"},
    "ind_ema": {"en": "ema", "zh": "EMA"},
    # --- the signals `tools.indicators` writes (`localize(..., prefix="sig_")`)
    "sig_overbought_rsi": {"en": "overbought (>70)", "zh": "超买（>70）"},
    "sig_oversold_rsi": {"en": "oversold (<30)", "zh": "超卖（<30）"},
    "sig_macd_cross_up": {"en": "MACD crossed above signal in the last {n} bars",
                          "zh": "MACD 在最近 {n} 根K线内上穿信号线"},
    "sig_macd_cross_down": {"en": "MACD crossed below signal in the last {n} bars",
                            "zh": "MACD 在最近 {n} 根K线内下穿信号线"},
    "sig_macd_above": {"en": "MACD above zero", "zh": "MACD 位于零轴上方"},
    "sig_macd_below": {"en": "MACD below zero", "zh": "MACD 位于零轴下方"},
    "sig_close_above_band": {"en": "close above upper band", "zh": "收盘价高于上轨"},
    "sig_close_below_band": {"en": "close below lower band", "zh": "收盘价低于下轨"},
    "sig_kdj_golden": {"en": "K crossed above D in the last {n} bars (golden cross)",
                       "zh": "K 在最近 {n} 根K线内上穿 D（金叉）"},
    "sig_kdj_dead": {"en": "K crossed below D in the last {n} bars (dead cross)",
                     "zh": "K 在最近 {n} 根K线内下穿 D（死叉）"},
    "sig_j_overbought": {"en": "J above 100 (overbought)", "zh": "J 高于 100（超买）"},
    "sig_j_oversold": {"en": "J below 0 (oversold)", "zh": "J 低于 0（超卖）"},
    "sig_obv_rising": {"en": "OBV rising over 20 bars", "zh": "OBV 近 20 根K线上升"},
    "sig_obv_falling": {"en": "OBV falling over 20 bars", "zh": "OBV 近 20 根K线下降"},
    "sig_close_above_ma": {"en": "close above {ma}", "zh": "收盘价高于 {ma}"},
    "sig_close_below_ma": {"en": "close below {ma}", "zh": "收盘价低于 {ma}"},
    # --- the offline analyst's own words around the tools' results
    "src_line": {"en": "Source: {label}", "zh": "数据来源：{label}"},
    "src_line_snapshot": {"en": "Source: {label} (offline snapshot)",
                          "zh": "数据来源：{label}（离线快照）"},
    "src_lines": {"en": "Sources: {labels}", "zh": "数据来源：{labels}"},
    "bars_of": {"en": "{n} {interval} bars", "zh": "{n} 根{interval}K线"},
    "indicators_head": {"en": "**{name}** indicators ({interval}, as of {day}, close {close}):",
                        "zh": "**{name}** 技术指标（{interval}线，截至 {day}，收盘 {close}）："},
    "list_sep": {"en": ", ", "zh": "、"},
    # --- ICT horizons and intervals (`ict.timeframes`), as `localize(..., "ict_")` says them
    "ict_h_scalp": {"en": "scalp (≈1 hour)", "zh": "超短线（约1小时）"},
    "ict_h_session": {"en": "session (≈6 hours)", "zh": "日内时段（约6小时）"},
    "ict_h_intraday": {"en": "intraday (≈3 days)", "zh": "日内（约3天）"},
    "ict_h_short": {"en": "short swing (≈14 days)", "zh": "短波段（约14天）"},
    "ict_h_medium": {"en": "medium swing (≈30 days)", "zh": "中波段（约30天）"},
    "ict_h_daily": {"en": "daily (≈1 year)", "zh": "日线（约1年）"},
    "ict_h_weekly": {"en": "weekly (≈3 months)", "zh": "周线（约3个月）"},
    "ict_h_monthly": {"en": "monthly (≈6 months)", "zh": "月线（约6个月）"},
    "ict_iv_daily": {"en": "daily", "zh": "日"},
    "ict_iv_weekly": {"en": "weekly", "zh": "周"},
    "ict_iv_monthly": {"en": "monthly", "zh": "月"},
    "ict_iv_60min": {"en": "60min", "zh": "60分钟"},
    "ict_iv_15min": {"en": "15min", "zh": "15分钟"},
    "ict_iv_5min": {"en": "5min", "zh": "5分钟"},
    "ict_iv_1min": {"en": "1min", "zh": "1分钟"},
    "ict_iv_4h": {"en": "4h", "zh": "4小时"},
    # --- more of the data layer's phrases (sources' notes, the snapshot's errors)
    "phrase_em_holders": {"en": "EastMoney top-10 holders", "zh": "东方财富十大股东"},
    "phrase_em_dividends": {"en": "EastMoney dividends", "zh": "东方财富分红"},
    "phrase_no_report": {"en": "the offline data has no {period} report; this is the newest it "
                               "holds",
                         "zh": "离线数据没有 {period} 的报告，这是其中最新的一期"},
    "phrase_connect_totals": {"en": "JoinQuant Stock Connect daily totals",
                              "zh": "聚宽沪深港通每日合计"},
    "phrase_connect_flows": {"en": "daily flows {first}..{last}",
                             "zh": "每日资金 {first} 至 {last}"},
    "phrase_no_holdings": {"en": "top holdings are not in the offline data",
                           "zh": "离线数据没有持股明细"},
    "phrase_no_data_for": {"en": "snapshot: the offline snapshot has no data for {code} {name}",
                           "zh": "离线快照没有 {code} {name} 的历史行情"},
    "phrase_one_day_only": {"en": ", only the one day {day} (close {close} CNY)",
                            "zh": "，只有 {day} 一天的行情（收盘 {close} 元）"},
    "phrase_it_holds": {"en": "; it holds", "zh": "；离线快照有："},
    "phrase_pack_missing": {"en": "data pack '{name}' is not installed (run `bullpen data "
                                  "install`)",
                            "zh": "数据包 '{name}' 未安装（请运行 `bullpen data install`）"},
    "phrase_looked_in": {"en": "; looked in {path}", "zh": "；查找位置：{path}"},
    "phrase_snapshot_says": {"en": "snapshot: ", "zh": "离线快照："},
    # --- the words of `ict`'s checklist details and sessions (`localize(..., "ict_d_")`)
    "ict_d_premium_at": {"en": "premium ({p}% of the range)", "zh": "溢价区（区间的 {p}%）"},
    "ict_d_discount_at": {"en": "discount ({p}% of the range)", "zh": "折价区（区间的 {p}%）"},
    "ict_d_equilibrium_at": {"en": "equilibrium ({p}% of the range)",
                             "zh": "均衡区（区间的 {p}%）"},
    "ict_d_bullish": {"en": "bullish", "zh": "看涨"},
    "ict_d_bearish": {"en": "bearish", "zh": "看跌"},
    "ict_d_neutral": {"en": "neutral", "zh": "中性"},
    "ict_d_draw": {"en": "draw", "zh": "目标"},
    "ict_d_from": {"en": "from", "zh": "来自"},
    "ict_d_up": {"en": "up", "zh": "向上"},
    "ict_d_down": {"en": "down", "zh": "向下"},
    "ict_d_premium": {"en": "premium", "zh": "溢价区"},
    "ict_d_discount": {"en": "discount", "zh": "折价区"},
    "ict_d_equilibrium": {"en": "equilibrium", "zh": "均衡区"},
    "ict_d_order_block": {"en": "order_block", "zh": "订单块"},
    "ict_d_fvg": {"en": "fvg", "zh": "FVG"},
    "ict_d_confirmed": {"en": "confirmed", "zh": "已确认"},
    "ict_d_not_confirmed": {"en": "not confirmed", "zh": "未确认"},
    "ict_d_no_zone": {"en": "no aligned zone", "zh": "没有一致的区域"},
    "ict_d_no_kill_zone": {"en": "no kill zone", "zh": "不在杀伤时段"},
    "ict_d_no_5m": {"en": "no 5m analysis", "zh": "没有5分钟分析"},
    "ict_d_london": {"en": "london", "zh": "伦敦"},
    "ict_d_ny_am": {"en": "ny_am", "zh": "纽约上午"},
    "ict_d_ny_pm": {"en": "ny_pm", "zh": "纽约下午"},
    "ict_d_asia": {"en": "asia", "zh": "亚洲"},
    "ict_d_acceptable": {"en": "acceptable", "zh": "可接受"},
    "ict_d_preferred": {"en": "preferred", "zh": "首选"},
    "ict_d_off": {"en": "off", "zh": "不在时段内"},
    "ict_d_15m": {"en": "15m", "zh": "15分钟"},
    "ict_d_5m": {"en": "5m", "zh": "5分钟"},
    "ict_d_1m": {"en": "1m", "zh": "1分钟"},
}


def t(key: str, lang: str = "en", **kwargs: Any) -> str:
    table = STRINGS[key]
    template = table.get(lang) or table["en"]
    return template.format(**kwargs) if kwargs else template


def has(key: str) -> bool:
    return key in STRINGS


def word(prefix: str, name: str, lang: str) -> str:
    """`name` said in `lang` through the catalogue key `prefix + name`; `name` itself when the
    catalogue has no such key (a field or interval it does not know yet)."""
    key = prefix + name
    return t(key, lang) if key in STRINGS else name


def _pattern(template: str) -> re.Pattern[str]:
    """An English template as a pattern: each {field} matches the shortest text (or, at the
    template's end, the text up to the next separator)."""
    parts = re.split(r"\{(\w+)\}", template)
    last = len(parts) - 2 if template.endswith("}") else -1
    out = "".join(re.escape(p) if i % 2 == 0 else
                  (rf"(?P<{p}>[^,;)\s]+)" if i == last else rf"(?P<{p}>[^;()\s]+?)")
                  for i, p in enumerate(parts))
    # a phrase that starts or ends in a Latin letter is a whole word ("up" is not in "upper")
    head = r"(?<![A-Za-z0-9_])" if template[:1].isalnum() and template.isascii() else ""
    tail = r"(?![A-Za-z_])" if template[-1:].isalpha() and template.isascii() else ""
    return re.compile(head + out + tail)


@lru_cache(maxsize=8)
def _phrases(prefix: str) -> tuple[tuple[re.Pattern[str], str], ...]:
    keys = sorted((k for k in STRINGS if k.startswith(prefix)),
                  key=lambda k: -len(STRINGS[k]["en"]))
    return tuple((_pattern(STRINGS[k]["en"]), STRINGS[k]["zh"]) for k in keys)


def _filler(template: str) -> Callable[[re.Match[str]], str]:
    def fill(m: re.Match[str]) -> str:
        return template.format(**m.groupdict())
    return fill


def localize(text: str, lang: str, prefix: str = "phrase_") -> str:
    """English phrases the tools and the data layer write (for the model and the logs), said
    in `lang`: every catalogue key under `prefix` whose English is found in `text` is
    replaced by its Chinese, longest first, then the list punctuation is made Chinese."""
    if lang != "zh" or not text:
        return text
    for pattern, zh in _phrases(prefix):
        text = pattern.sub(_filler(zh), text)
    return text.replace(", ", "，").replace("; ", "；")


def source_label(src: Any, lang: str) -> str:
    """A tool result's `DataSource` in `lang`: its provider, what was read and its date."""
    if not hasattr(src, "provider"):
        return str(src)
    when = t("src_as_of", lang, day=src.as_of.isoformat()) if src.as_of else ""
    provider = word("src_provider_", src.provider, lang)
    if not src.dataset:
        return provider + when
    return t("src_label", lang, provider=provider, dataset=localize(src.dataset, lang), when=when)


def detect_lang(text: str) -> str:
    """'zh' when the text has more CJK characters than Latin letters, else 'en'."""
    cjk = sum(1 for ch in text if "\u4e00" <= ch <= "\u9fff")
    latin = sum(1 for ch in text if ch.isascii() and ch.isalpha())
    return "zh" if cjk and cjk * 2 >= latin else "en"
