"""A Mandarin voice note on WeChat, end to end: the real wechatpy adapter behind the loopback
WeChat server (the conformance harness), the whisper-base pack, the real gateway and a fake
OpenAI-compatible model. The note is 8 kHz AMR as WeChat sends it; the answer is about the
stock that was said, and the model was asked about it by its code."""

from __future__ import annotations

from pathlib import Path

from bot.voice.backends import base_model_path
from tests.adapters.conformance.conftest import WeChatHarness
from tests.adapters.conftest import user_texts
from tests.fakes.openai_server import FakeOpenAI, Turn
from tests.voice.conftest import ZH_AUDIO

USER = 1


async def test_a_mandarin_voice_note_on_wechat_is_answered_about_the_right_stock(
        pg_dsn: str, tmp_path: Path, base: object) -> None:
    model = str(base_model_path())  # the repository's pack; the app's data dir is a fresh one
    answer = Turn(text="贵州茅台今天收涨。")
    async with WeChatHarness(dsn=pg_dsn, data_dir=tmp_path / "data") as harness:
        async with FakeOpenAI([], default=answer) as llm:
            async with harness.running(llm=llm, whisper_multilingual_model=model):
                await harness.send_voice(USER, ZH_AUDIO / "moutai_up.amr")
                # the answer may carry a label ("unverified: no data tool ...") after it
                await harness.wait_for(lambda: "今天收涨" in harness.final_text(USER),
                                       within_s=120)
                await harness.idle()
    heard, said = harness.visible_messages(USER)
    assert heard.startswith("听到：") and heard.endswith("-> 600519.SH"), heard
    assert said.startswith("贵州茅台今天收涨。")
    question = user_texts(llm)[0]  # the note's question (a nudge to use tools may follow)
    assert "贵州茅台 (600519.SH)" in question, question
