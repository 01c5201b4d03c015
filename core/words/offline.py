"""The offline analyst's answers from the installed data packs (analyst/offline.py,
analyst/offline_data.py): coverage, statements, holders, dividends, Stock Connect, SEC filings."""

WORDS: dict[str, dict[str, str]] = {
    "label": {
        "en": "offline analyst · no LLM configured",
        "zh": "离线分析师 · 未配置大模型",
    },
    "reading": {
        "en": "Reading the question...",
        "zh": "正在理解问题…",
    },
    "at_a_glance": {
        "en": "The offline data at a glance:",
        "zh": "离线数据一览：",
    },
    "iv_1d": {
        "en": "daily",
        "zh": "日线",
    },
    "iv_1h": {
        "en": "hourly",
        "zh": "小时线",
    },
    "iv_15m": {
        "en": "15-minute",
        "zh": "15分钟线",
    },
    "iv_5m": {
        "en": "5-minute",
        "zh": "5分钟线",
    },
    "iv_1m": {
        "en": "1-minute",
        "zh": "1分钟线",
    },
    "closes_only": {
        "en": "adjusted closes only",
        "zh": "仅复权收盘价",
    },
    "missing": {
        "en": "Missing:",
        "zh": "缺少：",
    },
    "no_snapshot": {
        "en": "- (no snapshot package is installed)",
        "zh": "- （快照数据包未安装）",
    },
    "market_cn": {
        "en": "A-shares and indexes (CNY)",
        "zh": "A股与指数（人民币）",
    },
    "market_us": {
        "en": "US stocks and indexes (USD)",
        "zh": "美股与指数（美元）",
    },
    "market_crypto": {
        "en": "Crypto",
        "zh": "加密货币",
    },
    "market_fx": {
        "en": "FX",
        "zh": "外汇",
    },
    "t_head": {
        "en": "| Market | History (daily bars and more) | One day only | Needs a live provider |",
        "zh": "| 市场 | 有历史行情（日线等） | 仅有一天 | 需要在线数据源 |",
    },
    "t_cn": {
        "en": "A-shares, indexes",
        "zh": "A股、指数",
    },
    "t_us": {
        "en": "US",
        "zh": "美股",
    },
    "t_crypto": {
        "en": "Crypto",
        "zh": "加密货币",
    },
    "t_fx": {
        "en": "FX",
        "zh": "外汇",
    },
    "t_hk": {
        "en": "HK",
        "zh": "港股",
    },
    "t_closes": {
        "en": "closes only: {syms}",
        "zh": "仅收盘价：{syms}",
    },
    "t_span": {
        "en": "{codes} ({a} – {b})",
        "zh": "{codes}（{a} – {b}）",
    },
    "t_every": {
        "en": "every A-share: {day}",
        "zh": "全部A股：{day}",
    },
    "t_statements": {
        "en": "statements, holders, dividends: {codes} ({a} – {b})",
        "zh": "财报、股东、分红：{codes}（{a} – {b}）",
    },
    "t_live_cn": {
        "en": "other A-shares' history, later dates, fund NAVs, news (akshare)",
        "zh": "其他A股的历史、更新的日期、基金净值、新闻（akshare）",
    },
    "t_live_us": {
        "en": "other tickers, later dates, statements, news (yfinance, SEC)",
        "zh": "其他代码、更新的日期、财报、新闻（yfinance、SEC）",
    },
    "t_live_crypto": {
        "en": "other pairs, later dates (yfinance)",
        "zh": "其他币对、更新的日期（yfinance）",
    },
    "t_live_fx": {
        "en": "other pairs, later dates (yfinance)",
        "zh": "其他货币对、更新的日期（yfinance）",
    },
    "t_live_hk": {
        "en": "all of it (no offline HK prices)",
        "zh": "全部（离线没有港股行情）",
    },
    "t_missing": {
        "en": "Not installed: {names} (`bullpen data install`)",
        "zh": "未安装：{names}（`bullpen data install`）",
    },
    "t_none": {
        "en": "–",
        "zh": "–",
    },
    "hello": {
        "en": "Hi! I'm the offline analyst.",
        "zh": "你好！我是离线分析师。",
    },
    "no_symbol": {
        "en": "I couldn't find a stock, index, crypto or FX pair in your question.",
        "zh": "我没有在问题里找到股票、指数、加密货币或外汇代码/名称。",
    },
    "intro": {
        "en": "{head}\nNo LLM is configured, so I call the tools directly and answer from real "
              "historical prices shipped with the bot; every number is computed in code and "
              "labelled with its source and date.\n\nAsk for a quote (\"bitcoin price\"), price "
              "history (\"S&P 500 last month\"), indicators, charts, comparisons or an ICT "
              "analysis (\"ICT analysis of BTC-USD on 15m\"), naming a stock, index, crypto or "
              "FX pair by ticker, code or name; statements, holders and dividends of some "
              "A-shares (\"中国平安 2019年净利润\"), Stock Connect flows, and US 10-K sections "
              "(\"Apple's risk factors in its latest 10-K\").\n\nThe offline data at a glance:\n"
              "\n{table}\n\nThe offline snapshot covers:\n{covered}\n\nAnything else (other "
              "symbols and dates, news, fund NAVs) needs a live data provider. Type /help for "
              "the commands.",
        "zh": "{head}\n未配置大模型，我直接调用工具，用本机已安装的数据包里的真实历史行情作答，"
              "每个数字都由代码计算，并注明来源和日期。\n\n可以问：报价（“比特币价格”）、"
              "走势（“沪深300最近一个月”）、技术指标、图表、对比，以及 ICT 分析（“浦发银行 "
              "15分钟 ICT 分析”）；部分A股的财报、股东、分红（“中国平安 2019年净利润”），"
              "沪深港通资金，美股 SEC 年报章节（“苹果最新10-K的风险因素”）。股票、指数、"
              "加密货币、外汇均可按代码或名称提问。\n\n离线数据一览：\n\n{table}\n\n"
              "离线快照包含：\n{covered}\n\n其他代码和日期，以及新闻和基金净值，需要在线数据源。"
              "输入 /help 查看命令。",
    },
    "statements_note": {
        "en": "Financial statements (and so a DCF, valuation multiples, income statement, "
              "balance sheet and cash flow) need a live data provider; the offline data has "
              "statements of a few A-shares only (ask for one alone, e.g. \"中国平安 "
              "2019年净利润\"). {tail}",
        "zh": "财务报表（DCF 估值、估值倍数、利润表、资产负债表、现金流量表）需要在线数据源；"
              "离线数据只有少数A股的报表（可单独问，如“中国平安 2019年净利润”）。{tail}",
    },
    "statements_quote": {
        "en": "Here is the latest quote it has.",
        "zh": "以下是快照中的最新报价。",
    },
    "statements_prices": {
        "en": "Here is what its prices show.",
        "zh": "以下是快照中的价格数据。",
    },
    "no_filing_year": {
        "en": "The offline data has no {year} {form} for {symbol}; here is the newest one.",
        "zh": "离线数据没有 {symbol} 的 {year} 年 {form}；以下是最新的一份。",
    },
    "no_item": {
        "en": "This {form} has no Item {item} heading; here is page 1.",
        "zh": "这份 {form} 里没有找到 Item {item}；以下是第 1 页。",
    },
    "line_revenue": {
        "en": "revenue",
        "zh": "营业收入",
    },
    "line_net_profit": {
        "en": "net profit attributable to the parent",
        "zh": "归母净利润",
    },
    "line_net_profit_incl_minority": {
        "en": "net profit incl. minority interests",
        "zh": "净利润（含少数股东）",
    },
    "line_net_profit_deducted": {
        "en": "net profit excl. one-offs",
        "zh": "扣非净利润",
    },
    "line_operating_cash_flow": {
        "en": "operating cash flow",
        "zh": "经营现金流净额",
    },
    "line_eps": {
        "en": "EPS",
        "zh": "每股收益",
    },
    "line_roe_pct": {
        "en": "ROE",
        "zh": "ROE",
    },
    "line_debt_ratio_pct": {
        "en": "debt ratio",
        "zh": "资产负债率",
    },
    "line_net_profit_yoy_pct": {
        "en": "net profit YoY",
        "zh": "归母净利润同比",
    },
    "dcf_revenue": {
        "en": "base revenue",
        "zh": "基期营收",
    },
    "dcf_net_profit": {
        "en": "net profit",
        "zh": "归母净利润",
    },
    "dcf_operating_cash_flow": {
        "en": "operating cash flow",
        "zh": "经营现金流",
    },
    "dcf_debt": {
        "en": "debt (short + long-term borrowing)",
        "zh": "有息负债（短期+长期借款）",
    },
    "dcf_cash": {
        "en": "cash",
        "zh": "货币资金",
    },
    "dcf_equity": {
        "en": "equity attributable to the parent",
        "zh": "归母权益",
    },
    "dcf_item": {
        "en": "{name} {value} ({period})",
        "zh": "{name} {value}（{period}）",
    },
    "dcf": {
        "en": "DCF inputs from the statements (offline data): {items}. Growth, margins and the "
              "discount rate are assumptions for you or an LLM to set; the offline analyst does "
              "not invent them.",
        "zh": "DCF 的报表输入（离线数据）：{items}。增长率、利润率和折现率是假设，"
              "需由你或大模型给出，离线分析师不替你假设。",
    },
    "yuan": {
        "en": "{value} CNY",
        "zh": "{value} 元",
    },
    "source": {
        "en": "Source: {label}{note} (offline data)",
        "zh": "数据来源：{label}{note}（离线数据）",
    },
    "no_annual": {
        "en": "The offline data has no {year} annual report for {name} (it has annual reports "
              "{span}). The newest annual report instead:",
        "zh": "离线数据没有 {name} 的 {year} 年报（有 {span} 年报）。以下是最新的年报：",
    },
    "period_title": {
        "en": "**{name}** {label} (period ending {end}):",
        "zh": "**{name}** {label}（截至 {end}）：",
    },
    "quarterly_late": {
        "en": "Note: the newest period here is {label}; by the disclosure deadline {due} the "
              "next one should be out, and the offline data does not have it.",
        "zh": "说明：这里最新一期是 {label}，按披露期限 {due} 应已发布，离线数据没有。",
    },
    "note": {
        "en": "Note: {note}",
        "zh": "说明：{note}",
    },
    "holders_title": {
        "en": "**{name}** top ten shareholders ({day}):",
        "zh": "**{name}** 前十大股东（{day}）：",
    },
    "dividends_title": {
        "en": "**{name}** dividends:",
        "zh": "**{name}** 分红记录：",
    },
    "dividend_row": {
        "en": "- {period}: {plan} (record/ex date {when})",
        "zh": "- {period}：{plan}（登记日/除息日 {when}）",
    },
    "connect_title": {
        "en": "Stock Connect net buying on {day} (亿元 = 100 million CNY):",
        "zh": "沪深港通 {day} 成交净买额（亿元）：",
    },
    "connect_old": {
        "en": "The offline data has Stock Connect daily totals for 2014-11-17 to 2019-08-12 "
              "only, not today's; here is its newest day.",
        "zh": "离线数据只有 2014-11-17 至 2019-08-12 的沪深港通每日数据，没有今天的；"
              "以下是其中最新一天。",
    },
    "filing_head": {
        "en": "**{who}**: the newest {form} in the offline data is {period} ({pages} pages). "
              "Item {item}. {title} starts on page {page}:",
        "zh": "**{who}** 离线数据中最新的 {form} 是 {period}（共 {pages} 页）。Item {item}. "
              "{title} 在第 {page} 页，开头如下：",
    },
    "filing_more": {
        "en": "(excerpt; the rest can be read page by page.)",
        "zh": "（节选，全文可按页读取。）",
    },
    "no_filings": {
        "en": "The offline data has no SEC filing text for {ticker}; it has {have}. Other "
              "companies need SEC EDGAR (live).",
        "zh": "离线数据没有 {ticker} 的 SEC 文件文本；只有 {have}。其他公司需要在线访问 SEC "
              "EDGAR。",
    },
    "no_filings_pack": {
        "en": "none (the dartlab pack is not installed)",
        "zh": "（数据包未安装）",
    },
    "close_on": {
        "en": "**{name}** closed at **{close} {cur}** on {day} (open {open}, high {high}, low "
              "{low}).",
        "zh": "**{name}** {day} 收盘 **{close} {cur}**（开 {open}，高 {high}，低 {low}）。",
    },
    "no_bar_on": {
        "en": "The offline data has no {symbol} bar on {day} ({note}). The latest it has:",
        "zh": "离线数据没有 {symbol} 在 {day} 的行情（{note}）。以下是它有的最新数据：",
    },
    "x_one_day": {
        "en": "one-day quotes of every A-share: {day} only (no history)",
        "zh": "全部A股的单日行情：仅 {day}（无历史）",
    },
    "x_statements": {
        "en": "statements, top-10 holders, dividends of {codes}: {a} – {b}",
        "zh": "{codes} 的财务报表、十大股东、分红：{a} – {b}",
    },
    "x_connect": {
        "en": "Stock Connect daily flows: {a} – {b}",
        "zh": "沪深港通每日资金：{a} – {b}",
    },
    "x_sec": {
        "en": "SEC filing section text (10-K/10-Q/20-F) of {tickers}: FY{a} – FY{b}",
        "zh": "SEC 文件章节文本（10-K/10-Q/20-F）：{tickers}，FY{a} – FY{b}",
    },
    "x_missing": {
        "en": "not installed: the {name} data pack ({holds}); `bullpen data install` fetches it",
        "zh": "未安装：{name} 数据包（{holds}），运行 `bullpen data install` 获取",
    },
}
