"""A Mandarin voice note on WeChat, end to end (issue 32): the real wechatpy adapter behind the
loopback WeChat server (the conformance harness), the whisper-base pack installed under
data/packs, the real gateway and a fake OpenAI-compatible model. The note is 8 kHz AMR as WeChat
sends it, and its name is one Whisper base mishears (五粮液 written 武良业, which sounds the
same): the answer is about that stock, and the model was asked about it by its code."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.voice.backends import base_model_path
from core.errors import ConfigError
from tests.adapters.conformance.conftest import WeChatHarness
from tests.adapters.conftest import user_texts
from tests.fakes.openai_server import FakeOpenAI, Turn

NOTE = Path(__file__).resolve().parents[2] / "fixtures" / "voice_zh" / "wuliangye_trend.amr"
USER = 1


def _pack() -> str:
    try:
        return str(base_model_path())  # the repository's pack; the app's data dir is fresh
    except ConfigError as exc:  # make test installs it: a missing pack fails, never skips
        pytest.fail(f"the whisper-base data pack is missing: {exc}")


async def test_a_mandarin_voice_note_on_wechat_is_answered_about_the_right_stock(
        pg_dsn: str, tmp_path: Path) -> None:
    model = _pack()
    answer = Turn(text="五粮液近一个月走势平稳。")
    harness = WeChatHarness(dsn=pg_dsn, data_dir=tmp_path / "data")
    async with harness:
        async with FakeOpenAI([], default=answer) as llm:
            async with harness.running(llm=llm, whisper_multilingual_model=model):
                await harness.send_voice(USER, NOTE)
                # the answer may carry a label ("unverified: no data tool ...") after it
                await harness.wait_for(lambda: "走势平稳" in harness.final_text(USER),
                                       within_s=120)
                await harness.idle()
    heard, said = harness.visible_messages(USER)
    assert heard.startswith("听到：") and heard.endswith("-> 000858.SZ"), heard
    assert said.startswith("五粮液近一个月走势平稳。")
    question = user_texts(llm)[0]  # the note's question (a nudge to use tools may follow)
    assert "五粮液 (000858.SZ)" in question, question
