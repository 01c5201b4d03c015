"""One conformance suite, run unchanged against every platform (`harness` is parametrised over
Telegram, Discord, Slack and WeChat): the real SDK against the platform's loopback fake, the
real App (gateway, renderer, Postgres), and the real `openai` client against the scripted
OpenAI-compatible fake or the offline analyst. A new platform is added by giving it a harness
and passing this file.

Where a platform lacks a capability (WeChat cannot edit; official accounts cannot send
documents) the test asserts the behaviour defined for that case instead.
"""

from __future__ import annotations

import asyncio
import re

import pytest

from core.errors import PlatformError
from core.types import MessageRef, Reply
from tests.adapters.conformance.conftest import PlatformHarness
from tests.adapters.conftest import AUDIO, WORKING, user_texts
from tests.fakes.openai_server import FakeOpenAI, Turn

USER = 1


def squash(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def paragraphs_over(length: int) -> list[str]:
    """Plain paragraphs (no Markdown, nothing to escape) of about 500 characters, together
    longer than `length`; the last one ends with a word no other paragraph has."""
    out: list[str] = []
    while sum(len(p) + 2 for p in out) <= length:
        i = len(out)
        out.append(f"Paragraph {i}: " + " ".join(f"w{i}x{j}" for j in range(60)))
    out[-1] += " closingword"
    return out


def script_answer(llm: FakeOpenAI, harness: PlatformHarness, *,
                  pieces: float) -> tuple[list[str], str]:
    """The model's next answer: paragraphs together `pieces` times the platform's limit."""
    paragraphs = paragraphs_over(int(pieces * harness.caps.max_message_length))
    answer = "\n\n".join(paragraphs)
    llm.script = [Turn(text=answer, chunk=1500)]
    return paragraphs, answer


# --- questions and commands ------------------------------------------------------------------


async def test_a_question_gets_the_core_answer_once(harness: PlatformHarness) -> None:
    question = "How did NVDA do today?"
    answer = "NVDA closed higher on the day per the snapshot; volume was about average."
    # a data question: the model looks the quote up first (an answer without a tool call
    # would be sent back once to use one, and labelled unverified)
    async with FakeOpenAI([Turn(tool_calls=[("get_quote", {"symbol": "NVDA"})]),
                           Turn(text=answer, chunk=9)]) as llm:
        async with harness.running(llm=llm) as app:
            await harness.send_text(USER, question)
            await harness.wait_for(lambda: harness.final_text(USER) == answer)
            await harness.idle()
            stored = await app.db.pool.fetchval(
                "SELECT content FROM messages WHERE role = 'assistant' ORDER BY id DESC LIMIT 1")
            assert await harness.inbound_count() == 1
    assert harness.visible_messages(USER) == [answer] and stored == answer
    assert user_texts(llm) == [question, question]  # the tool call, then the answer
    assert len(harness.outgoing("send", USER)) == 1  # a placeholder edited in place, or the answer
    if harness.caps.can_edit:
        assert len(harness.outgoing("edit", USER)) >= 1


async def test_help_as_the_platforms_own_command_lists_the_commands(
        harness: PlatformHarness) -> None:
    async with harness.running():
        await harness.send_command(USER, "/help")
        await harness.wait_for(lambda: harness.shows(USER, "/mode"))
        await harness.idle()
    [help_text] = harness.visible_messages(USER)
    assert all(c in help_text for c in ("/debate", "/chart", "/link", "/lang"))


async def test_mode_switch_is_persisted_across_a_restart(harness: PlatformHarness) -> None:
    async with harness.running():
        await harness.send_command(USER, "/mode debate")
        await harness.wait_for(lambda: harness.shows(USER, "Mode set to"))
        await harness.idle()
    async with harness.running() as app:  # the same database: a restart
        await harness.send_command(USER, "/mode")
        await harness.wait_for(lambda: harness.shows(USER, "Current mode"))
        await harness.idle()
        user = await app.store.accounts.user_for(harness.name, harness.uid(USER))
        conversation = await app.store.conversations.active(harness.chat(USER), user)
    assert conversation.mode == "debate"
    assert re.search(r"Current mode: \W*debate\b", harness.final_text(USER))
    assert re.search(r"Mode set to \W*debate\b", harness.visible_messages(USER)[0])


# --- files -----------------------------------------------------------------------------------


async def test_a_chart_request_sends_an_image_and_its_text(harness: PlatformHarness) -> None:
    async with harness.running():  # the offline analyst draws from the snapshot
        await harness.send_command(USER, "/chart NVDA 6mo")
        await harness.wait_for(lambda: harness.sent_files(USER), within_s=30)
        await harness.wait_for(lambda: harness.shows(USER, "NVDA"))
        await harness.idle()
    [image] = harness.sent_files(USER)
    assert image.kind == "image" and image.filename.endswith(".png")
    assert image.data.startswith(b"\x89PNG")
    assert WORKING not in harness.visible_messages(USER)  # the text replaced the placeholder


async def test_a_debate_report_arrives_as_a_pdf_where_documents_are_supported(
        harness: PlatformHarness) -> None:
    async with harness.running():  # offline: deterministic experts, a PDF report
        await harness.send_command(USER, "/debate NVDA")
        await harness.wait_for(lambda: harness.shows(USER, "Conclusion"), within_s=60)
        if harness.caps.supports_documents:
            await harness.wait_for(lambda: harness.sent_files(USER), within_s=30)
        await harness.idle()
        await harness.settle()
    files = harness.sent_files(USER)
    if harness.caps.supports_documents:
        [report] = files
        assert report.kind == "document" and report.filename.endswith(".pdf")
        assert report.data.startswith(b"%PDF")
    else:  # defined: the report is left out, the conclusion still arrives in text
        assert files == []
    [answer] = [t for t in harness.visible_messages(USER) if "Conclusion" in t]
    assert "NVDA" in answer and re.search(r"Conclusion: \W*(BUY|HOLD|SELL)\b", answer)


# --- length and rate limits ------------------------------------------------------------------


async def test_a_long_answer_is_split_at_the_platforms_limit_and_complete(
        harness: PlatformHarness) -> None:
    async with FakeOpenAI() as llm:
        async with harness.running(llm=llm):
            paragraphs, answer = script_answer(llm, harness, pieces=2.5)
            await harness.send_text(USER, "a long answer please")
            await harness.wait_for(lambda: harness.shows(USER, "closingword"))
            await harness.idle()
    texts = harness.visible_messages(USER)
    assert len(texts) >= 3 and all(harness.fits(t) for t in texts)
    assert squash(" ".join(texts)) == squash(answer)
    assert all(any(p in t for t in texts) for p in paragraphs)  # split between paragraphs


async def test_a_429_on_a_send_is_waited_out_and_everything_arrives_in_order(
        harness: PlatformHarness) -> None:
    async with FakeOpenAI() as llm:
        async with harness.running(llm=llm):
            _, answer = script_answer(llm, harness, pieces=1.2)
            harness.inject_429("send", containing="closingword")  # the answer's last piece
            await harness.send_text(USER, "a two-part answer please")
            await harness.wait_for(
                lambda: harness.shows(USER, "closingword") and not harness.faults_left(),
                within_s=15)
            await harness.idle()
    texts = harness.visible_messages(USER)
    assert squash(" ".join(texts)) == squash(answer)  # in order, nothing twice
    tries = [c for c in harness.outgoing("send", USER) if "closingword" in c.text]
    assert len(tries) == 2 and tries[1].t - tries[0].t >= 0.9  # refused, then after the wait


async def test_a_429_on_the_first_message_still_gets_the_whole_answer_through(
        harness: PlatformHarness) -> None:
    answer = "\n\n".join(paragraphs_over(1500))
    async with FakeOpenAI([Turn(text=answer, chunk=500)]) as llm:
        async with harness.running(llm=llm):
            harness.inject_429("send", containing="")  # the placeholder, where there is one
            await harness.send_text(USER, "question")
            await harness.wait_for(
                lambda: harness.shows(USER, "closingword") and not harness.faults_left(),
                within_s=15)
            await harness.idle()
            await harness.settle()
    texts = harness.visible_messages(USER)
    assert WORKING not in texts and squash(" ".join(texts)) == squash(answer)


async def test_a_429_on_the_final_edit_is_waited_out_and_the_final_text_arrives(
        harness: PlatformHarness) -> None:
    answer = "**Final** answer after a rate limit."
    final = harness.rendered(answer)  # previews show the Markdown as typed: not this
    async with FakeOpenAI([Turn(text=answer, chunk=8)]) as llm:
        async with harness.running(llm=llm):
            if harness.caps.can_edit:
                harness.inject_429("edit", final=answer)
            else:  # defined: the adapter refuses edits and the renderer never asks for one
                with pytest.raises(PlatformError):
                    await harness.adapter.edit(
                        MessageRef(chat=harness.chat(USER), message_id="1"), Reply(text="x"))
            await harness.send_text(USER, "question")
            await harness.wait_for(lambda: harness.final_text(USER) == final
                                   and not harness.faults_left(), within_s=15)
            await harness.idle()
    assert harness.visible_messages(USER) == [final]
    if not harness.caps.can_edit:
        assert [c.text for c in harness.outgoing("send", USER)] == [final]
        return
    tries = [c for c in harness.outgoing("edit", USER) if c.text == final]
    assert len(tries) == 2 and tries[1].t - tries[0].t >= 0.9  # refused, then after the wait


# --- bad input -------------------------------------------------------------------------------


async def test_the_same_message_delivered_again_runs_once(harness: PlatformHarness) -> None:
    async with FakeOpenAI(default=Turn(text="Answered once.", latency_s=0.3)) as llm:
        async with harness.running(llm=llm):
            await harness.deliver_duplicate(USER, "Are you there?")
            await harness.wait_for(lambda: harness.final_text(USER) == "Answered once.")
            await harness.idle()
            await harness.settle(0.3)
            assert await harness.inbound_count() == 1
    assert len(llm.requests) == 1
    assert harness.visible_messages(USER) == ["Answered once."]
    assert len(harness.outgoing("send", USER)) == 1


async def test_forged_deliveries_are_refused_and_nothing_reaches_the_core(
        harness: PlatformHarness) -> None:
    async with FakeOpenAI(default=Turn(text="Signed and answered.")) as llm:
        async with harness.running(llm=llm, signed=True):
            statuses = await harness.send_forged(USER, "FORGED: sell everything")
            assert len(statuses) >= 3 and set(statuses) <= {401, 403}
            await asyncio.sleep(0.3)
            await harness.idle()
            assert await harness.inbound_count() == 0
            assert not llm.requests and not harness.visible_messages(USER)
            assert not harness.outgoing("send", USER)
            # the same ingress takes a genuine message: the refusals were the checks at work
            await harness.send_signed(USER, "a real question")
            await harness.wait_for(lambda: harness.final_text(USER) == "Signed and answered.")
            await harness.idle()
            assert await harness.inbound_count() == 1
    assert user_texts(llm) == ["a real question"]


# --- voice -----------------------------------------------------------------------------------


async def test_a_voice_note_is_heard_then_answered(harness: PlatformHarness) -> None:
    # "What's the latest on Nvidia and Apple?", in the format the platform's clients record
    note = AUDIO / f"latest_nvda_aapl.{harness.voice_format}"
    script = [Turn(tool_calls=[("get_quotes", {"symbols": ["NVDA", "AAPL"]})]),
              Turn(text="Both rose.")]
    async with FakeOpenAI(script) as llm:
        async with harness.running(llm=llm):
            await harness.send_voice(USER, note)
            # a failure's bound, never waited out by a pass: the first transcription loads the
            # Whisper model, which took over 60 s on a 2-core machine at a load average of 10
            await harness.wait_for(lambda: harness.final_text(USER) == "Both rose.",
                                   within_s=240)
            await harness.idle()
    heard, answer = harness.visible_messages(USER)
    assert heard.startswith("Heard:") and answer == "Both rose."
    question = user_texts(llm)[0]  # transcribed by the bundled Whisper, names corrected
    # which names survive a platform's codec (8 kHz AMR on WeChat) depends on the CPU: the
    # ones shown are among those said, and each reached the agent's question
    codes = heard.partition(" -> ")[2].split(", ") if " -> " in heard else []
    assert set(codes) <= {"NVDA", "AAPL"}, heard
    assert all(f"({code})" in question for code in codes), (heard, question)


# --- speaking first: a scheduled report ------------------------------------------------------


async def test_a_scheduled_report_arrives(harness: PlatformHarness) -> None:
    from datetime import UTC, datetime

    from jobs.runner import schedule_of

    async with harness.running() as app:  # no model: the offline template writes the narrative
        await harness.send_command(USER, "/subscribe NVDA at 08:00")
        await harness.wait_for(lambda: harness.shows(USER, "Subscribed (#"), within_s=30)
        [sub] = await app.store.subscriptions.for_chat(harness.chat(USER))
        assert sub.symbols == ["NVDA"] and sub.at_time == "08:00"
        fire_at = schedule_of(sub).next_fire(datetime.now(UTC))
        # what `bullpen jobs due --at <that instant>` does
        [fired] = await app.jobs.due(fire_at)
        assert fired.status == "done"
        await harness.wait_for(lambda: harness.shows(USER, "NVDA") and harness.sent_files(USER),
                               within_s=30)
        assert await app.jobs.due(fire_at) == [] or all(
            r.status == "skipped" for r in await app.jobs.due(fire_at))  # fired once
        receipt = await app.outbox.wait(fired.delivery_key or "", timeout_s=30)
        assert receipt is not None and receipt.status == "delivered"
        await harness.send_command(USER, "/subscriptions")
        await harness.wait_for(lambda: harness.shows(USER, "last: delivered"), within_s=30)
        await harness.idle()
    report = [m for m in harness.visible_messages(USER) if "NVDA" in m and "Narrative" in m]
    assert len(report) == 1, harness.visible_messages(USER)  # the report arrived once
    assert re.search(r"\d{4}-\d{2}-\d{2}", report[0])  # figures carry their date
    [chart] = harness.sent_files(USER)
    assert chart.kind == "image" and chart.data.startswith(b"\x89PNG")


async def test_the_podcast_now_and_on_a_schedule(harness: PlatformHarness) -> None:
    import json
    from datetime import UTC, datetime

    from jobs.runner import schedule_of

    async with harness.running() as app:  # offline: debates by deterministic experts
        await harness.send_command(USER, "/podcast NVDA TSLA")
        await harness.wait_for(lambda: harness.shows(USER, "Daily podcast"), within_s=90)
        await harness.idle()
        summary = [m for m in harness.visible_messages(USER) if "Daily podcast" in m]
        assert len(summary) == 1
        # chapters by the title a person reads, in order (not their ids, `ticker:NVDA`)
        assert "(NVDA)" in summary[0] and "(TSLA)" in summary[0]
        assert "ticker:" not in summary[0]
        assert summary[0].index("(NVDA)") < summary[0].index("(TSLA)")
        files = harness.sent_files(USER)
        if harness.caps.supports_documents:
            names = sorted(f.filename for f in files)
            assert names[-1] == "script.json" and names[0].endswith(".md")
            script = json.loads(next(f.data for f in files if f.filename == "script.json"))
            assert [c["name"] for c in script["chapter"]] == [
                "opening", "theme", "ticker:NVDA", "ticker:TSLA", "closing"]
        else:  # no documents (WeChat official accounts): the script arrives as text
            assert files == []
            script_text = [m for m in harness.visible_messages(USER)
                           if "Bullpen daily podcast" in m]
            assert script_text and "**" not in script_text[0], harness.visible_messages(USER)

        before = len(harness.visible_messages(USER))
        await harness.send_command(USER, "/subscribe NVDA podcast")
        await harness.wait_for(lambda: harness.shows(USER, "a podcast on NVDA"), within_s=30)
        [sub] = await app.store.subscriptions.for_chat(harness.chat(USER))
        assert sub.kind == "podcast" and sub.at_time == "07:30" and sub.recurrence == "weekdays"
        fire_at = schedule_of(sub).next_fire(datetime.now(UTC))
        [fired] = await app.jobs.due(fire_at)
        assert fired.status == "done"
        receipt = await app.outbox.wait(fired.delivery_key or "", timeout_s=60)
        assert receipt is not None and receipt.status == "delivered", receipt
        assert all(r.status == "skipped" for r in await app.jobs.due(fire_at))
        await harness.idle()
    pushed = [m for m in harness.visible_messages(USER)[before:] if "Daily podcast" in m]
    assert len(pushed) == 1 and "(NVDA)" in pushed[0]
