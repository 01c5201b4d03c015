"""What the voice pipeline says: refusals of a note, the "Heard:" line, "did you mean ...?"."""

WORDS: dict[str, dict[str, str]] = {
    "empty": {
        "en": "That voice note was empty, so there was nothing to listen to. "
              "Please record it again.",
        "zh": "这条语音是空的，没有可识别的内容，请重新录一条。",
    },
    "too_long": {
        "en": "That voice note is {seconds:.0f} seconds long; I can listen to at most "
              "{limit:.0f} seconds. Please send a shorter one or type your question.",
        "zh": "这条语音长 {seconds:.0f} 秒，最多只能识别 {limit:.0f} 秒。请发一条短一点的语音，"
              "或直接输入问题。",
    },
    "too_large": {
        "en": "That audio file is {mb:.1f} MB; I can take at most {limit_mb:.0f} MB. "
              "Please send a shorter voice note.",
        "zh": "这个音频文件有 {mb:.1f} MB，最大只能处理 {limit_mb:.0f} MB，请发一条短一点的语音。",
    },
    "undecodable": {
        "en": "I couldn't play that file: it doesn't look like audio I can read "
              "(voice notes, OGG, AMR, M4A, MP3, WAV and WebM work). Please try again.",
        "zh": "无法播放这个文件，它不是可识别的音频"
              "（支持语音消息、OGG、AMR、M4A、MP3、WAV、WebM）。请重试。",
    },
    "silent": {
        "en": "That voice note is silent: I couldn't hear anything. "
              "Please check your microphone and try again.",
        "zh": "这条语音没有声音，请检查麦克风后重试。",
    },
    "unclear": {
        "en": "Sorry, I couldn't make out that voice note{heard}. Please say it again "
              "more slowly, or type your question.",
        "zh": "抱歉，没听清这条语音{heard}。请放慢语速再说一次，或直接输入问题。",
    },
    "unclear_en_only": {
        "en": "Sorry, I couldn't make out that voice note{heard}. My speech model understands "
              "English only: if you spoke another language, please type your question instead "
              "(text works in any language); otherwise say it again a little more slowly.",
        "zh": "抱歉，没听清这条语音{heard}。语音识别目前只支持英语："
              "如果您说的是中文，请直接输入文字提问（文字支持中文）；否则请放慢语速再说一次。",
    },
    "heard_as": {
        "en": ' (it sounded like "{heard}")',
        "zh": "（听起来像“{heard}”）",
    },
    "fetch_failed": {
        "en": "I couldn't download that voice note from the chat. Please send it again.",
        "zh": "无法从聊天中下载这条语音，请重新发送。",
    },
    "language": {
        "en": "That voice note doesn't sound like English, and my speech model understands "
              "English only. Please type your question (any language works in text), or ask "
              "in English.",
        "zh": "这条语音听起来不是英语，而当前的语音模型只能识别英语。请直接用文字输入问题（文字支持"
              "中文），或用英语提问。",
    },
    "language_other": {
        "en": "That voice note doesn't sound like Mandarin or English, the two languages I can "
              "listen to (Cantonese and other languages can't be transcribed yet). Please type "
              "your question instead: text works in any language.",
        "zh": "这条语音听起来不是普通话或英语；语音识别目前只支持这两种语言（粤语等暂不支持）。"
              "请直接输入文字提问，文字支持任何语言。",
    },
    "too_slow": {
        "en": "Sorry, I couldn't make out that voice note in time ({limit:.0f} s). Please send "
              "a shorter, clearer one, or type your question.",
        "zh": "抱歉，这条语音未能在 {limit:.0f} 秒内识别完成。"
              "请发一条更短、更清楚的语音，或直接输入问题。",
    },
    "unavailable": {
        "en": "Voice notes can't be transcribed right now. Please type your question.",
        "zh": "暂时无法识别语音，请直接输入问题。",
    },
    "no_audio": {
        "en": "I can read text and voice notes; this message had no voice note in it.",
        "zh": "我可以读取文字和语音消息；这条消息里没有语音。",
    },
    "heard": {
        "en": "Heard: {text}",
        "zh": "听到：{text}",
    },
    "did_you_mean": {
        "en": "Heard: {text}\nDid you mean {choices}? I did not want to guess: tap one, or "
              "send the name or code as text.",
        "zh": "听到：{text}\n您是说{choices}吗？为免猜错，请点选一个，或直接发送股票名称或代码。",
    },
    "or": {
        "en": " or ",
        "zh": "还是",
    },
}
