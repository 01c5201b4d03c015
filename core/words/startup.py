"""What `bullpen serve` tells its operator as it starts (one line per platform, the model, the
data, the symbols directory), what `bullpen status` and `bullpen data install` print, and the
note under an answer the offline analyst gave because the model was not answering (issue 33)."""

WORDS: dict[str, dict[str, str]] = {
    # --- one line per platform: what it listens on ---------------------------------------------
    "web": {
        "en": "web: {url} (sign in with `bullpen web login`, or send /web to the bot in a "
              "private chat)",
        "zh": "网页：{url}（登录：运行 `bullpen web login`，或在与机器人的私聊中发送 /web）",
    },
    "telegram_polling": {
        "en": "telegram: polling the Bot API for messages",
        "zh": "Telegram：轮询接收消息",
    },
    "telegram_webhook": {
        "en": "telegram: webhook {url}, listening on {host}:{port}",
        "zh": "Telegram：回调地址 {url}，监听 {host}:{port}",
    },
    "discord_gateway": {
        "en": "discord: connected to the gateway",
        "zh": "Discord：已连接网关",
    },
    "discord_interactions": {
        "en": "discord: slash commands at http://{host}:{port}{path}",
        "zh": "Discord：斜杠命令地址 http://{host}:{port}{path}",
    },
    "slack_socket": {
        "en": "slack: Socket Mode (no port opened)",
        "zh": "Slack：长连接模式（不占用端口）",
    },
    "slack_events": {
        "en": "slack: events at http://{host}:{port}{path}",
        "zh": "Slack：事件地址 http://{host}:{port}{path}",
    },
    "callbacks": {
        "en": "{platform}: callbacks at http://{host}:{port}{path}",
        "zh": "{platform}：回调地址 http://{host}:{port}{path}",
    },
    "console": {
        "en": "console: chat in this terminal",
        "zh": "控制台：在此终端中对话",
    },
    "console_offline": {
        "en": "No LLM configured (BULLPEN_LLM_BASE_URL): the offline analyst answers from the "
              "offline data snapshot.",
        "zh": "未配置大模型（BULLPEN_LLM_BASE_URL）：由离线分析师根据离线数据快照回答。",
    },
    "started": {
        "en": "{platform}: started",
        "zh": "{platform}：已启动",
    },
    # --- the model ------------------------------------------------------------------------------
    "model": {
        "en": "model: {model} at {url}",
        "zh": "大模型：{model}（{url}）",
    },
    "model_none": {
        "en": "model: none configured (BULLPEN_LLM_BASE_URL, BULLPEN_LLM_MODEL): the offline "
              "analyst answers",
        "zh": "大模型：未配置（BULLPEN_LLM_BASE_URL、BULLPEN_LLM_MODEL），由离线分析师回答",
    },
    "model_down": {
        "en": "model: {model} at {url} is not answering: the offline analyst answers until it "
              "does (checked again every {seconds} s)",
        "zh": "大模型：{model}（{url}）暂时无法连接，恢复前由离线分析师回答（每 {seconds} 秒"
              "重新检查一次）",
    },
    "model_back": {
        "en": "model: {model} answers again: questions go to it",
        "zh": "大模型：{model} 已恢复，问题重新交给大模型回答",
    },
    # the label under an answer the offline analyst gave in the model's place
    "model_down_note": {
        "en": "offline analyst · the model is not answering (see the start-up log); it "
              "answers again as soon as it is back",
        "zh": "离线分析师 · 大模型暂时无法连接（见启动日志），恢复后自动切回大模型",
    },
    # --- the data -------------------------------------------------------------------------------
    "data": {
        "en": "data: {installed} of {total} data packs in {dir}; offline history: {spans}",
        "zh": "数据：{dir} 中已安装 {installed}/{total} 个数据包；离线历史行情：{spans}",
    },
    "data_missing": {
        "en": "; not installed: {names} (`bullpen data install`)",
        "zh": "；未安装：{names}（运行 `bullpen data install`）",
    },
    "data_span": {
        "en": "{market} {first} – {last} ({n} series)",
        "zh": "{market} {first} 至 {last}（{n} 个品种）",
    },
    "data_failed": {
        "en": "data: the offline coverage could not be read ({error})",
        "zh": "数据：无法读取离线数据范围（{error}）",
    },
    "data_none": {
        "en": "none",
        "zh": "无",
    },
    "market_cn": {"en": "A-shares and indexes", "zh": "A股与指数"},
    "market_us": {"en": "US", "zh": "美股"},
    "market_crypto": {"en": "crypto", "zh": "加密货币"},
    "market_fx": {"en": "FX", "zh": "外汇"},
    # --- the symbols directory ------------------------------------------------------------------
    "symbols_loading": {
        "en": "symbols directory: loading (the first start builds it from the packages, about "
              "half a minute)…",
        "zh": "股票名录：正在加载（首次启动需从数据包构建，约半分钟）……",
    },
    "symbols_waiting": {
        "en": "symbols directory: still loading ({seconds} s)…",
        "zh": "股票名录：仍在加载（已 {seconds} 秒）……",
    },
    "symbols_ready": {
        "en": "symbols directory: {n} securities, ready in {seconds} s",
        "zh": "股票名录：共 {n} 只证券，用时 {seconds} 秒",
    },
    "symbols_failed": {
        "en": "symbols directory: not loaded ({error}): names are matched by code shape only",
        "zh": "股票名录：加载失败（{error}），只能按代码格式识别证券",
    },
    "ready": {
        "en": "ready: {platforms}; `bullpen status` shows what it is doing, Ctrl-C stops it",
        "zh": "已就绪：{platforms}；运行 `bullpen status` 查看运行情况，按 Ctrl-C 停止",
    },
    # --- bullpen data install -------------------------------------------------------------------
    "pack_fetching": {
        "en": "[{i}/{n}] {name}: fetching {package} {version} ({registry})…",
        "zh": "[{i}/{n}] {name}：正在下载 {package} {version}（{registry}）……",
    },
    "pack_waiting": {
        "en": "[{i}/{n}] {name}: still fetching ({seconds} s)…",
        "zh": "[{i}/{n}] {name}：仍在下载（已 {seconds} 秒）……",
    },
    "packs_done": {
        "en": "data packs in {dir}: {installed} installed, {present} already there, {skipped} "
              "skipped, {failed} failed ({seconds} s)",
        "zh": "{dir} 中的数据包：新安装 {installed} 个，已存在 {present} 个，跳过 {skipped} 个，"
              "失败 {failed} 个（用时 {seconds} 秒）",
    },
    # --- bullpen status -------------------------------------------------------------------------
    "status_head": {
        "en": "Bullpen on {database}, {now}",
        "zh": "{now}，数据库 {database}",
    },
    "status_platforms": {
        "en": "platforms seen (last message, messages in the last 24 h):",
        "zh": "已收到消息的平台（最近一条消息，24 小时内消息数）：",
    },
    "status_platform": {
        "en": "  {platform}: {last}, {day}",
        "zh": "  {platform}：{last}，{day} 条",
    },
    "status_none": {
        "en": "  none yet",
        "zh": "  暂无",
    },
    "status_recent": {
        "en": "recent messages:",
        "zh": "最近的消息：",
    },
    "status_message": {
        "en": "  {at}  {platform}/{chat}  {status}  {seconds}",
        "zh": "  {at}  {platform}/{chat}  {status}  {seconds}",
    },
    "status_outbox": {
        "en": "outbox: {pending} pending, {held} held, {failed} failed in the last 24 h",
        "zh": "发件箱：待发送 {pending} 条，暂缓 {held} 条，24 小时内失败 {failed} 条",
    },
    "status_outbox_oldest": {
        "en": "  oldest pending: {delivery} for {platform}/{chat}, {attempts} attempt(s), "
              "next at {next}: {error}",
        "zh": "  最早的待发送：{delivery}（{platform}/{chat}），已尝试 {attempts} 次，"
              "下次 {next}：{error}",
    },
    "status_unanswered": {
        "en": "unanswered now: {n} (received or running)",
        "zh": "尚未回答：{n} 条（已收到或处理中）",
    },
    "status_failures": {
        "en": "last failures:",
        "zh": "最近的失败：",
    },
    "status_failure": {
        "en": "  {at}  {what}: {error}",
        "zh": "  {at}  {what}：{error}",
    },
    "status_no_tables": {
        "en": "no Bullpen tables in {database}: has `bullpen serve` ever run on it?",
        "zh": "{database} 中没有本系统的数据表：`bullpen serve` 是否在这个数据库上运行过？",
    },
}
