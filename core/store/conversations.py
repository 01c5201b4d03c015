"""Conversations (one active per chat) and the messages said in them."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any
from uuid import UUID

import asyncpg

from core.store.group_commit import GroupCommit
from core.types import ChatMessage, ChatRef, ToolCall, Usage


@dataclass(frozen=True)
class Conversation:
    id: UUID
    user_id: UUID | None
    chat_key: str
    mode: str
    title: str
    summary: str
    summary_up_to: int
    token_used: int
    token_budget: int | None


@dataclass(frozen=True)
class StoredMessage:
    id: int
    message: ChatMessage


@dataclass(frozen=True)
class StoredTurn:
    """A platform message's turn as stored: the user's message and, when the run got that
    far, the answer it ended with (what `ConversationsRepo.turn_of` found)."""

    conversation_id: UUID
    user_message_id: int
    text: str  # the question as stored (a voice note: its transcript)
    answer: str | None
    label: str = ""  # the note shown under the answer ("offline analyst", "unverified ...")


# Marks left in place of an answer when it was cut short: by a shutdown (the next process
# answers it) or by the person (/stop, /new). core.agent.runner writes them; `keep_stopped` too.
INTERRUPTED_NOTE = "[interrupted: Bullpen was shutting down]"
STOPPED_NOTE = "[stopped by the user]"
_CUT_SHORT = (INTERRUPTED_NOTE.split()[0], STOPPED_NOTE)

# An inbound message's turn: its user row and its answer -- the last assistant row without tool
# calls that its own run wrote -- both found by the inbound row's id, never by position (rows of
# other questions of the chat may sit in between, or after, when runs interleave across a crash).
_TURN_OF = """
WITH u AS (
    SELECT id, conversation_id, content FROM messages
    WHERE inbound_id = $1 AND role = 'user'
    ORDER BY id DESC LIMIT 1
)
SELECT u.id, u.conversation_id, u.content, a.content AS answer, a.label
FROM u LEFT JOIN LATERAL (
    SELECT a.content, a.label FROM messages a
    WHERE a.inbound_id = $1 AND a.role = 'assistant' AND a.tool_calls IS NULL
    ORDER BY a.id DESC LIMIT 1) a ON true
"""


# The chat's active conversation, created when it has none, in one statement.
_ACTIVE = """
WITH found AS (
    SELECT * FROM conversations
    WHERE platform = $1 AND chat_id = $2 AND thread_id = $3 AND is_active
), ins AS (
    INSERT INTO conversations (user_id, platform, chat_id, thread_id)
    SELECT $4, $1, $2, $3 WHERE NOT EXISTS (SELECT 1 FROM found)
    ON CONFLICT (platform, chat_id, thread_id) WHERE is_active DO NOTHING
    RETURNING *
)
SELECT * FROM found UNION ALL SELECT * FROM ins
"""


@dataclass(frozen=True)
class TurnStart:
    """What `ConversationsRepo.begin_turn` read and wrote in its one round trip."""

    conversation: Conversation
    history: list[ChatMessage]  # the window after the summary watermark, oldest first
    unsummarised: int | None  # messages after the watermark, capped at threshold + 1
    message_id: int | None  # the user message's id; None when a summary is due first
    history_ids: tuple[int, ...] = ()  # the window's message ids, oldest first
    # True: the window is exactly the `known_window` given, and `history` is empty (not sent)
    history_known: bool = False


# One round trip for the start of a batch of runs (group committed across conversations, one
# run per conversation in a batch: `GroupCommit`), per run: the conversation as it is now, the
# number of messages past the summary watermark (counted only up to threshold + 1, and only with
# a threshold), the history window, and -- unless a summary is due first -- the user message and
# the title. Every sub-statement sees the same snapshot, so a history never contains the new
# message. A caller that keeps the window (the runner) passes the ids it holds (as text,
# "1,2,3": arrays of arrays must be rectangular): when they are exactly the window's, the rows
# are not sent again (messages are never edited; a row another process added or removed changes
# the ids). A run whose conversation does not exist gets no row.
_BEGIN_TURNS = """
WITH x AS (
    SELECT * FROM unnest($1::uuid[], $2::text[], $3::text[], $4::text[], $5::int[], $6::int[],
                         $7::bigint[], $8::text[])
         WITH ORDINALITY AS x(conv, body, pmid, title, hlimit, threshold, inbound, known, ord)
), c AS (
    SELECT x.ord, cv.* FROM x JOIN conversations cv ON cv.id = x.conv
), n AS (
    SELECT x.ord, (SELECT count(*) FROM (
        SELECT 1 FROM messages m
        WHERE x.threshold IS NOT NULL AND m.conversation_id = x.conv
          AND m.id > c.summary_up_to
        LIMIT x.threshold + 1) y) AS n
    FROM x JOIN c USING (ord)
), hid AS (
    SELECT x.ord, w.id FROM x JOIN c USING (ord)
    CROSS JOIN LATERAL (
        SELECT m.id FROM messages m
        WHERE m.conversation_id = x.conv AND m.id > c.summary_up_to
        ORDER BY m.id DESC LIMIT x.hlimit) w
), ids AS (
    SELECT x.ord, coalesce((SELECT array_agg(hid.id ORDER BY hid.id) FROM hid
                            WHERE hid.ord = x.ord), '{}') AS ids
    FROM x
), h AS (  -- the rows, unless the caller has exactly these already
    SELECT hid.ord, m.id, m.role, m.content, m.tool_calls, m.tool_call_id
    FROM hid JOIN messages m USING (id) JOIN ids USING (ord) JOIN x USING (ord)
    WHERE NOT coalesce(ids.ids = string_to_array(x.known, ',')::bigint[], false)
), ins AS (
    INSERT INTO messages (conversation_id, role, content, platform_message_id, inbound_id)
    SELECT x.conv, 'user', x.body, x.pmid, x.inbound
    FROM x JOIN c USING (ord) JOIN n USING (ord)
    WHERE x.threshold IS NULL OR n.n <= x.threshold
    ORDER BY x.ord
    RETURNING id, conversation_id
), t AS (
    UPDATE conversations cv SET title = x.title FROM x
    WHERE cv.id = x.conv AND cv.title = ''
      AND EXISTS (SELECT 1 FROM ins WHERE ins.conversation_id = x.conv)
)
SELECT c.*,
       CASE WHEN x.threshold IS NULL THEN NULL ELSE n.n END AS unsummarised,
       (SELECT ins.id FROM ins WHERE ins.conversation_id = x.conv) AS message_id,
       ids.ids AS history_ids,
       (SELECT array_agg(ROW(h.id, h.role, h.content, h.tool_calls::text, h.tool_call_id)
                         ORDER BY h.id) FROM h WHERE h.ord = x.ord) AS history
FROM x JOIN c USING (ord) JOIN n USING (ord) JOIN ids USING (ord)
ORDER BY x.ord
"""


@dataclass(frozen=True)
class TurnBegin:
    """One run's `begin_turn`, waiting to be written with others."""

    conversation_id: UUID
    text: str
    platform_message_id: str | None
    title: str
    history_limit: int | None
    summarize_threshold: int | None
    inbound_id: int | None
    known_window: str | None  # the caller's window ids as "1,2,3"


# One statement for what runs said and spent since their last writes, for a batch of runs
# (group committed across conversations: `GroupCommit`): their messages in order, their usage
# rows, and each conversation's token count. Tool calls travel as JSON text.
_RUN_RECORDS = """
WITH m AS (
    INSERT INTO messages (conversation_id, role, content, tool_calls, tool_call_id, inbound_id)
    SELECT x.conv, x.role, x.content, x.calls::jsonb, x.call_id, x.inbound
    FROM unnest($1::uuid[], $2::text[], $3::text[], $4::text[], $5::text[], $6::bigint[])
         WITH ORDINALITY AS x(conv, role, content, calls, call_id, inbound, ord)
    ORDER BY x.ord
    RETURNING id
), u AS (
    INSERT INTO usage (user_id, conversation_id, provider, model, role, prompt_tokens,
                       completion_tokens, cost_usd, latency_ms, cached_tokens)
    SELECT y.who, y.conv, y.provider, y.model, y.role, y.prompt, y.completion, y.cost,
           y.latency, y.cached
    FROM unnest($7::uuid[], $8::uuid[], $9::text[], $10::text[], $11::text[], $12::int[],
                $13::int[], $14::numeric[], $15::int[], $16::int[])
         WITH ORDINALITY AS y(who, conv, provider, model, role, prompt, completion, cost,
                              latency, cached, ord)
    ORDER BY y.ord
    RETURNING conversation_id, prompt_tokens + completion_tokens AS tokens
), spent AS (
    SELECT conversation_id, sum(tokens) AS tokens FROM u GROUP BY conversation_id
), counted AS (
    UPDATE conversations c SET token_used = c.token_used + spent.tokens, updated_at = now()
    FROM spent WHERE c.id = spent.conversation_id
)
SELECT coalesce(array_agg(id ORDER BY id), '{}') AS ids FROM m  -- in the order given
"""


@dataclass(frozen=True)
class RunRecords:
    """What one run said and spent since its last write (`ConversationsRepo.add_run_records`)."""

    conversation_id: UUID
    user_id: UUID | None
    messages: Sequence[ChatMessage]
    usages: Sequence[Usage]
    inbound_id: int | None


def _chat_message(row: Any) -> ChatMessage:
    """A message as stored: (id, role, content, tool calls, tool call id), from a row or an
    anonymous record. Built without validation: the columns' types and the role's CHECK
    constraint hold what validation would check; the tool calls are validated."""
    calls = row[3] or []
    if isinstance(calls, str):
        calls = json.loads(calls)
    return ChatMessage.model_construct(
        role=row[1], content=row[2], tool_calls=[ToolCall(**c) for c in calls],
        tool_call_id=row[4])


def _message(row: Any) -> StoredMessage:
    return StoredMessage(int(row[0]), _chat_message(row))


def _calls_json(message: ChatMessage) -> str | None:
    return json.dumps([c.model_dump() for c in message.tool_calls]) if message.tool_calls \
        else None


def conversation_from(row: asyncpg.Record) -> Conversation:
    """A conversation from a row holding the `conversations` columns."""
    return Conversation(
        id=UUID(str(row["id"])), user_id=UUID(str(row["user_id"])) if row["user_id"] else None,
        chat_key=f"{row['platform']}:{row['chat_id']}:{row['thread_id']}", mode=row["mode"],
        title=row["title"], summary=row["summary"], summary_up_to=row["summary_up_to"],
        token_used=row["token_used"], token_budget=row["token_budget"],
    )


class ConversationsRepo:
    def __init__(self, pool: asyncpg.Pool) -> None:
        self._pool = pool
        self.run_records: GroupCommit[RunRecords, list[int]] = GroupCommit(
            self._write_run_records, name="run-records",
            keys=lambda r: (r.conversation_id,))
        # the start of every run was one statement of its own (a round trip and a commit per
        # message, the one write the gateway did not batch): group committed as the others
        self.turns: GroupCommit[TurnBegin, Any] = GroupCommit(
            self._begin_turns, name="begin-turn", keys=lambda t: (t.conversation_id,))

    async def active(self, chat: ChatRef, user_id: UUID | None) -> Conversation:
        """The chat's active conversation, created on first use (race-safe; one round trip
        unless another first message of the chat raced it)."""
        thread = chat.thread_id or ""
        row = await self._pool.fetchrow(_ACTIVE, chat.platform, chat.chat_id, thread, user_id)
        if row is None:  # lost a race with another first message of the chat: read it
            row = await self._pool.fetchrow(
                "INSERT INTO conversations (user_id, platform, chat_id, thread_id)"
                " VALUES ($1,$2,$3,$4) ON CONFLICT (platform, chat_id, thread_id)"
                " WHERE is_active DO UPDATE SET updated_at=now() RETURNING *",
                user_id, chat.platform, chat.chat_id, thread)
        assert row is not None
        return conversation_from(row)

    async def get(self, conversation_id: UUID) -> Conversation:
        row = await self._pool.fetchrow("SELECT * FROM conversations WHERE id=$1",
                                        conversation_id)
        assert row is not None, f"no conversation {conversation_id}"
        return conversation_from(row)

    async def start_new(self, chat: ChatRef, user_id: UUID | None) -> Conversation:
        """Retire the chat's conversation; the new one keeps its mode."""
        thread = chat.thread_id or ""
        async with self._pool.acquire() as conn, conn.transaction():
            mode = await conn.fetchval(
                "UPDATE conversations SET is_active=false, updated_at=now()"
                " WHERE platform=$1 AND chat_id=$2 AND thread_id=$3 AND is_active"
                " RETURNING mode", chat.platform, chat.chat_id, thread)
            row = await conn.fetchrow(
                "INSERT INTO conversations (user_id, platform, chat_id, thread_id, mode)"
                " VALUES ($1,$2,$3,$4,$5) RETURNING *",
                user_id, chat.platform, chat.chat_id, thread, mode or "normal")
        assert row is not None
        return conversation_from(row)

    async def set_mode(self, conversation_id: UUID, mode: str) -> None:
        await self._pool.execute(
            "UPDATE conversations SET mode=$2, updated_at=now() WHERE id=$1",
            conversation_id, mode)

    async def set_title(self, conversation_id: UUID, title: str) -> None:
        await self._pool.execute(
            "UPDATE conversations SET title=$2 WHERE id=$1 AND title=''", conversation_id,
            title[:120])

    async def set_summary(self, conversation_id: UUID, summary: str, up_to: int) -> None:
        await self._pool.execute(
            "UPDATE conversations SET summary=$2, summary_up_to=$3 WHERE id=$1",
            conversation_id, summary, up_to)

    async def add_message(
        self, conversation_id: UUID, message: ChatMessage, *,
        platform_message_id: str | None = None, inbound_id: int | None = None,
    ) -> int:
        """Store one message; `inbound_id`: the inbound message whose run said it."""
        calls = ([c.model_dump() for c in message.tool_calls] if message.tool_calls else None)
        return int(await self._pool.fetchval(
            "INSERT INTO messages (conversation_id, role, content, tool_calls, tool_call_id,"
            " platform_message_id, inbound_id) VALUES ($1,$2,$3,$4,$5,$6,$7) RETURNING id",
            conversation_id, message.role, message.content, calls, message.tool_call_id,
            platform_message_id, inbound_id))

    async def keep_stopped(self, conversation_id: UUID, text: str, *,
                           inbound_id: int | None) -> bool:
        """A question stopped before its run stored it (/stop or /new while it waited its
        turn): kept in its conversation with the stop noted, as a run stopped midway leaves it,
        so nothing the person asked vanishes from their history or their search. False when its
        run had stored it already (the run notes its own stop)."""
        async with self._pool.acquire() as conn, conn.transaction():
            if inbound_id is not None and await conn.fetchval(
                    "SELECT 1 FROM messages WHERE inbound_id = $1 AND role = 'user' LIMIT 1",
                    inbound_id):
                return False
            await conn.executemany(
                "INSERT INTO messages (conversation_id, role, content, inbound_id)"
                " VALUES ($1, $2, $3, $4)",
                [(conversation_id, "user", text, inbound_id),
                 (conversation_id, "assistant", STOPPED_NOTE, inbound_id)])
            await conn.execute(
                "UPDATE conversations SET updated_at = now(),"
                " title = CASE WHEN title = '' THEN $2 ELSE title END WHERE id = $1",
                conversation_id, text.strip().splitlines()[0][:120] if text.strip() else "")
        return True

    async def turn_of(self, inbound_id: int) -> StoredTurn | None:
        """How far the run for an inbound message (its `inbound_events` id) got before its
        process stopped: None when its user message was never stored; `answer` None when no
        answer of its own was stored (or its run left only a mark that it was cut short)."""
        row = await self._pool.fetchrow(_TURN_OF, inbound_id)
        if row is None:
            return None
        answer = row["answer"]
        if answer is not None and (not answer.strip() or answer.startswith(_CUT_SHORT)):
            answer = None
        return StoredTurn(conversation_id=row["conversation_id"], user_message_id=row["id"],
                          text=row["content"], answer=answer, label=row["label"] or "")

    async def label_answer(self, conversation_id: UUID, label: str, *,
                           inbound_id: int | None = None) -> None:
        """Keep the note shown under an answer with it: the answer of the inbound message
        `inbound_id` (else, for runs without one, the conversation's latest answer)."""
        await self._pool.execute(
            "UPDATE messages SET label = $2 WHERE id = (SELECT id FROM messages"
            " WHERE conversation_id = $1 AND role = 'assistant' AND tool_calls IS NULL"
            " AND ($3::bigint IS NULL OR inbound_id = $3) ORDER BY id DESC LIMIT 1)",
            conversation_id, label, inbound_id)

    async def messages(
        self, conversation_id: UUID, *, after_id: int = 0, limit: int | None = None,
        before_id: int | None = None,
    ) -> list[StoredMessage]:
        """Messages in order; with `limit`, the last `limit` of them."""
        rows = await self._pool.fetch(
            "SELECT * FROM (SELECT id, role, content, tool_calls, tool_call_id FROM messages"
            " WHERE conversation_id=$1 AND id > $2 AND ($3::bigint IS NULL OR id < $3)"
            " ORDER BY id DESC LIMIT $4) m ORDER BY id",
            conversation_id, after_id, before_id, limit)
        return [_message(r) for r in rows]

    async def begin_turn(
        self, conversation_id: UUID, text: str, *, title: str,
        platform_message_id: str | None = None, history_limit: int | None = None,
        summarize_threshold: int | None = None, inbound_id: int | None = None,
        known_window: Sequence[int] | None = None,
    ) -> TurnStart:
        """The start of a run in one round trip: re-read the conversation, read the history
        window after its summary watermark, and store the user's message (setting the title
        when the conversation has none).

        With `summarize_threshold`, the messages past the watermark are counted first; when
        there are more than that, nothing is written (`message_id` is None): the caller
        summarises, then stores the message itself (`add_message`, `set_title`).

        `known_window`: the ids of the window the caller holds (oldest first); when the
        window's ids are exactly these, its rows are not read again (`history_known`).
        """
        row = await self.turns.submit(TurnBegin(
            conversation_id, text, platform_message_id, title[:120], history_limit,
            summarize_threshold, inbound_id,
            ",".join(map(str, known_window)) if known_window is not None else None))
        assert row is not None, f"no conversation {conversation_id}"
        ids = tuple(row["history_ids"] or ())
        rows = row["history"] or ()
        return TurnStart(
            conversation=conversation_from(row),
            history=[_chat_message(r) for r in rows],
            unsummarised=row["unsummarised"], message_id=row["message_id"],
            history_ids=ids, history_known=bool(ids) and not rows)

    async def _begin_turns(self, turns: list[TurnBegin]) -> list[Any]:
        rows = await self._pool.fetch(
            _BEGIN_TURNS, [t.conversation_id for t in turns], [t.text for t in turns],
            [t.platform_message_id for t in turns], [t.title for t in turns],
            [t.history_limit for t in turns], [t.summarize_threshold for t in turns],
            [t.inbound_id for t in turns], [t.known_window for t in turns])
        out: list[Any] = [None] * len(turns)
        for row in rows:
            out[row["ord"] - 1] = row
        return out

    async def add_run_records(
        self, conversation_id: UUID, *, user_id: UUID | None,
        messages: Sequence[ChatMessage] = (), usages: Sequence[Usage] = (),
        inbound_id: int | None = None,
    ) -> list[int]:
        """Messages (in order) and usage rows of one conversation in one statement; the
        conversation's token count moves with the usage, as `UsageRepo.record` does.
        `inbound_id`: the inbound message whose run said them (how its answer is found).
        The messages' ids, in order."""
        if not messages and not usages:
            return []
        return await self.run_records.submit(RunRecords(
            conversation_id, user_id, tuple(messages), tuple(usages), inbound_id))

    async def _write_run_records(self, runs: list[RunRecords]) -> list[list[int]]:
        said = [(r, m) for r in runs for m in r.messages]
        spent = [(r, u) for r in runs for u in r.usages]
        ids: list[int] = list(await self._pool.fetchval(
            _RUN_RECORDS, [r.conversation_id for r, _ in said], [m.role for _, m in said],
            [m.content for _, m in said], [_calls_json(m) for _, m in said],
            [m.tool_call_id for _, m in said], [r.inbound_id for r, _ in said],
            [r.user_id for r, _ in spent], [r.conversation_id for r, _ in spent],
            [u.provider for _, u in spent], [u.model for _, u in spent],
            [u.role for _, u in spent], [u.prompt_tokens for _, u in spent],
            [u.completion_tokens for _, u in spent], [u.cost_usd for _, u in spent],
            [int(u.latency_s * 1000) for _, u in spent], [u.cached_tokens for _, u in spent]))
        out: list[list[int]] = []
        for r in runs:  # the ids in the order given, run after run
            out.append(ids[:len(r.messages)])
            ids = ids[len(r.messages):]
        return out
