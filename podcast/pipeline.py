"""`produce_podcast`: the daily ticker podcast script (seed 001 §7), end to end.

1. The tickers are cleaned, capped at `MAX_TICKERS`, resolved (an unknown one keeps a short
   honest section) and de-duplicated.
2. Fan-out, at most `concurrency` tickers in flight: each ticker's four-expert debate (today's
   stored report reused when a pool is given), its intraday summary, then its worker (one
   model call, no tools, checked in code; the deterministic writer offline or when the worker
   fails). Meanwhile the opening and the theme are built from data: the date, the index moves
   with their dates, what the tickers share.
3. Fan-in in the user's order whatever order the tickers finish; the theme gains where the
   debates came out, the closing recaps; ids are numbered 0..n-1 and chapters computed.
4. The refiner (one model call, no tools) may rewrite transitions only; the code rejects any
   other edit.

A ticker whose debate cannot run (no data, every expert failed, out of budget) gets a short
honest section and the rest is produced. Notes say every repair, drop, rejected edit and
degradation; the budget report says what was spent at which level.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import asyncpg

from core import words
from core.errors import DataUnavailable, InputError, LLMError, UnknownSymbol
from core.events import Event, Status
from core.llm.pace import expected_seconds
from core.ports import LLMProvider
from core.tools import ToolRegistry
from core.words import norm, t
from debate.budget import TURN_MAX_TOKENS, TURN_PROMPT_TOKENS, Budget, BudgetExhausted
from debate.engine import DebateFailed, Emit
from debate.evidence import HISTORY_BARS, BarsLoader, default_bars
from debate.experts import BudgetTooSmall
from debate.mode import DEFAULT_BUDGET_TOKENS, DebateMode, DebateRequest
from debate.models import DebateArtifact
from debate.store import DebateReportStore, StoredReport
from podcast import budget as budgeting
from podcast import refiner, worker, writer
from podcast.market import daily_loader, index_moves, intraday_summary, profile_of
from podcast.models import (
    MAX_TICKERS,
    BudgetReport,
    Chapter,
    IndexMove,
    IntradaySummary,
    Note,
    PodcastError,
    PodcastResult,
    PodcastScript,
    ScriptTurn,
    TickerProfile,
    TickerStatus,
    speaker,
)
from podcast.writer import Draft
from tools.market import load_bars
from tools.symbol_lookup import ResolvedSymbol, resolve_symbol

DEFAULT_TIMEOUT_S = 120.0
INDEX_BARS = 10
_SPLIT = re.compile(r"[\s,，、;；]+")


@dataclass
class _Entry:
    given: str
    index: int = 0
    sym: ResolvedSymbol | None = None
    profile: TickerProfile | None = None
    error: str = ""


@dataclass
class _Base:
    moves: list[IndexMove]
    opening: list[Draft]
    theme: Draft
    turns: list[ScriptTurn]  # the script so far, as the workers see it


@dataclass
class _Piece:
    status: TickerStatus
    drafts: list[Draft]
    notes: list[Note] = field(default_factory=list)
    artifact: DebateArtifact | None = None


def clean_tickers(tickers: Sequence[str]) -> list[str]:
    """Non-empty items, split on spaces and commas, in order."""
    return [p for t in tickers for p in _SPLIT.split(str(t)) if p.strip()]


def _resolve(items: Sequence[str]) -> list[_Entry]:
    out: list[_Entry] = []
    for given in items:
        entry = _Entry(given=given)
        try:
            entry.sym = resolve_symbol(given)
            entry.profile = profile_of(given, entry.sym)
        except UnknownSymbol as exc:
            hint = f"did you mean {', '.join(exc.suggestions[:3])}?" if exc.suggestions else ""
            entry.error = hint
        out.append(entry)
    return out


def no_verdict(art: DebateArtifact) -> str | None:
    """Why a debate has no verdict (every expert of its last round failed), or None."""
    if art.experts is None:
        return None
    if not art.experts.rounds:
        return "the debate ran no round"
    last = art.experts.rounds[-1].turns()
    if last and all(t.failed for t in last.values()):
        return "; ".join(sorted({t.error for t in last.values()}))[:300]
    return None


def _number(sections: Sequence[tuple[str, Sequence[Draft]]], lang: str
            ) -> tuple[list[Chapter], list[ScriptTurn]]:
    chapters: list[Chapter] = []
    turns: list[ScriptTurn] = []
    for name, drafts in sections:
        start = len(turns)
        for d in drafts:
            turns.append(ScriptTurn(id=len(turns), speaker=speaker(d.role, lang), text=d.text,
                                    sources=d.sources))
        chapters.append(Chapter(name=name, start_id=start, end_id=len(turns) - 1))
    return chapters, turns


class _Run:
    def __init__(self, *, day: dt.date | None, lang: str, budget: int | None,
                 llm: LLMProvider | None, pool: Any, concurrency: int,
                 registry: ToolRegistry | None, debate_budget: int | None, emit: Emit | None,
                 turn_timeout_s: float, json_mode: bool) -> None:
        self.cut = day  # bars end on this date only when one was asked for
        self.day = day or dt.date.today()
        self.day_iso = self.day.isoformat()
        self.lang = norm(lang)
        self.total = budget
        self.llm = llm
        self.pool = pool
        self.offline = llm is None
        self.concurrency = max(1, concurrency)
        self.registry = registry
        self.debate_budget = debate_budget
        self._emit = emit
        self.timeout_s = turn_timeout_s
        self.json_mode = json_mode
        self.notes: list[Note] = []
        self.script_budget = Budget(None)
        self.script_calls = 0
        self.codes: list[str] = []
        self._sem = asyncio.Semaphore(self.concurrency)
        self.plan = budgeting.plan(None, debates=0, workers=0, debate_default=None,
                                   offline=True)

    def say(self, text: str) -> None:
        if self._emit is not None:
            self._emit(Status(text=text))

    def _prefixed(self, code: str) -> Emit:
        def emit(event: Event) -> None:
            if isinstance(event, Status):
                self.say(f"[{code}] {event.text}")
        return emit

    # --- input ------------------------------------------------------------------------------

    async def _entries(self, tickers: Sequence[str]) -> list[_Entry]:
        items = clean_tickers(tickers)
        if not items:
            raise PodcastError("podcast.no_tickers")
        if len(items) > MAX_TICKERS:
            self.notes.append(Note(kind="input", text=(
                f"{len(items)} tickers given; the podcast takes the first {MAX_TICKERS} "
                f"(left out: {', '.join(items[MAX_TICKERS:])})")))
            items = items[:MAX_TICKERS]
        self.say(t("podcast.status_resolving", self.lang, n=len(items)))
        # a cold symbols directory takes seconds to build: keep it off the event loop
        resolved = await asyncio.to_thread(_resolve, items)
        entries: list[_Entry] = []
        seen: dict[str, str] = {}
        for e in resolved:
            if e.sym is not None and e.sym.code in seen:
                self.notes.append(Note(kind="input", ticker=e.sym.code, text=(
                    f"{e.given!r} is {e.sym.code} again (as {seen[e.sym.code]!r}); kept once")))
                continue
            if e.sym is not None:
                seen[e.sym.code] = e.given
            else:
                self.notes.append(Note(kind="input", ticker=e.given, text=(
                    f"unknown ticker {e.given!r}" + (f"; {e.error}" if e.error else ""))))
            e.index = len(entries)
            entries.append(e)
        if not any(e.sym is not None for e in entries):
            given = ", ".join(e.given for e in entries)
            raise PodcastError("podcast.none_known", given=given)
        self.codes = [e.sym.code if e.sym is not None else e.given for e in entries]
        return entries

    async def _reusable(self, entries: Sequence[_Entry]) -> dict[str, StoredReport]:
        """Debate reports stored on the podcast's day, by code (a pool is needed)."""
        if self.pool is None:
            return {}
        age = dt.timedelta(days=max(1, (dt.date.today() - self.day).days + 2))
        store = DebateReportStore(self.pool, max_age=age)
        found: dict[str, StoredReport] = {}
        for e in entries:
            if e.sym is None:
                continue
            try:
                report = await store.find_recent(ticker=e.sym.code, panel="experts",
                                                 question="", lang=self.lang,
                                                 offline=self.offline)
            except (asyncpg.PostgresError, OSError, ValueError) as exc:
                self.notes.append(Note(kind="debate", ticker=e.sym.code, text=(
                    f"stored reports unreadable ({exc}); debating afresh")))
                continue
            if report is not None and report.created_at.astimezone().date() == self.day:
                found[e.sym.code] = report
        return found

    # --- the parts --------------------------------------------------------------------------

    async def _base(self, entries: Sequence[_Entry]) -> _Base:
        profiles = [e.profile for e in entries if e.profile is not None]
        moves = await index_moves(loader=daily_loader(self.cut, INDEX_BARS), lang=self.lang)
        for m in moves:
            if m.error:
                self.notes.append(Note(kind="data", ticker=m.code, text=(
                    f"{m.name}: no index data ({m.error})")))
        opening = writer.opening(self.day_iso, profiles, moves, offline=self.offline,
                                 lang=self.lang)
        theme = writer.theme_intro(profiles, lang=self.lang)
        _, turns = _number([("opening", opening), ("theme", [theme])], self.lang)
        return _Base(moves=moves, opening=opening, theme=theme, turns=turns)

    def _bars_loader(self) -> BarsLoader:
        if self.cut is None:
            return default_bars
        cut = self.cut

        async def load(symbol: str, *, end: dt.date | None = None) -> Any:
            return await load_bars(symbol, "1d", HISTORY_BARS,
                                   end=cut if end is None else min(cut, end))

        return load

    def _mode(self) -> DebateMode:
        low, high = self.plan.level.rounds or (2, 3)  # the debate's own defaults
        day = self.day
        return DebateMode(llm=self.llm, registry=self.registry, panel="experts",
                          budget_tokens=self.plan.per_debate, pool=self.pool,
                          min_rounds=low, max_rounds=high, bars_loader=self._bars_loader(),
                          today=lambda: day, make_pdf=self.pool is not None,
                          json_mode=self.json_mode)

    def _release(self, spent: int) -> None:
        """What a debate left of its share goes to the script calls."""
        share = self.plan.per_debate
        total = self.script_budget.total
        if total is not None and share is not None and self.plan.level.new_debates:
            self.script_budget.total = total + max(0, share - spent)

    async def _debate(self, e: _Entry, mode: DebateMode, reused: dict[str, StoredReport]
                      ) -> tuple[DebateArtifact | None, TickerStatus]:
        assert e.sym is not None
        code = e.sym.code
        st = TickerStatus(ticker=e.given, code=code, name=e.sym.name, state="debated")
        if (found := reused.get(code)) is not None:
            self.say(t("podcast.status_reusing", self.lang, code=code))
            st.state = "reused"
            st.detail = f"debate report of {found.created_at:%Y-%m-%d %H:%M %Z}".strip()
            return found.artifact, st
        if not self.plan.level.new_debates:
            st.state = "over_budget"
            return None, st
        self.say(t("podcast.status_debating", self.lang, code=code))
        try:
            outcome = await mode.produce(DebateRequest(symbol=code, fresh=True),
                                         lang=self.lang, emit=self._prefixed(code))
        except DataUnavailable as exc:
            st.state, st.detail = "no_data", str(exc)
        except BudgetTooSmall as exc:
            st.state, st.detail = "over_budget", str(exc)
        except UnknownSymbol as exc:
            st.state, st.detail = "unknown", str(exc)
        except DebateFailed as exc:  # every expert failed: no verdict (the debate says why)
            st.state, st.detail = "no_verdict", str(exc)
        except InputError as exc:
            st.state, st.detail = "failed", str(exc)
        else:
            art = outcome.artifact
            st.debate_tokens = art.meta.tokens_used
            st.debate_calls = sum(u.calls for u in art.meta.usage)
            st.debate_level = art.meta.degradation_level
            self._release(art.meta.tokens_used)
            return art, st
        self._release(0)
        return None, st

    async def _ticker(self, e: _Entry, mode: DebateMode, reused: dict[str, StoredReport],
                      base: asyncio.Task[_Base]) -> _Piece:
        if e.sym is None:
            st = TickerStatus(ticker=e.given, state="unknown", detail=e.error)
            return _Piece(status=st, drafts=writer.honest_section(st, lang=self.lang))
        async with self._sem:
            (art, st), (intraday, why) = await asyncio.gather(
                self._debate(e, mode, reused), intraday_summary(e.sym.code, on=self.cut))
            if art is None:
                return _Piece(status=st, drafts=writer.honest_section(st, lang=self.lang),
                              notes=[Note(kind="debate", ticker=st.code, text=(
                                  f"no debate ({st.state}): "
                                  f"{st.detail or 'no stored report of today'}"))])
            st.data_as_of = art.meta.data_as_of
            piece = _Piece(status=st, drafts=[], artifact=art)
            self._debate_notes(art, piece)
            if (why_none := no_verdict(art)) is not None:
                st.state, st.detail = "no_verdict", why_none
                piece.notes.append(Note(kind="debate", ticker=st.code, text=(
                    f"no verdict: every expert's last turn failed ({why_none})")))
                piece.drafts = writer.honest_section(st, lang=self.lang)
                return piece
            st.action, st.confidence = art.conclusion.action, art.conclusion.confidence
            if intraday is None:
                piece.notes.append(Note(kind="data", ticker=st.code, text=(
                    f"no intraday bars ({why.split('; ')[-1]})")))
            await self._write(e, art, intraday, why, await base, piece)
            return piece

    def _debate_notes(self, art: DebateArtifact, piece: _Piece) -> None:
        code = art.meta.ticker
        for d in art.meta.degradations:
            piece.notes.append(Note(kind="degraded", ticker=code, text=f"debate: {d}"))
        for n in art.meta.notes:
            if "failed" in n or "dropped" in n:
                piece.notes.append(Note(kind="debate", ticker=code, text=n))

    async def _write(self, e: _Entry, art: DebateArtifact, intraday: IntradaySummary | None,
                     why: str, base: _Base, piece: _Piece) -> None:
        code = art.meta.ticker
        total = len(self.codes)
        fallback = writer.ticker_section(art, intraday, index=e.index, total=total, lang=self.lang)
        if self.llm is None:
            piece.drafts, piece.status.writer = fallback, "offline"
            return
        self.say(t("podcast.status_writing", self.lang, code=code))
        inp = worker.build_input(art, day=self.day_iso, lang=self.lang, index=e.index,
                                 codes=self.codes, script_so_far=base.turns,
                                 intraday=intraday, intraday_note=why)
        problem = ""
        try:
            self.script_calls += 1
            result, problem = await worker.run(self.llm, inp, lang=self.lang,
                                               budget=self.script_budget,
                                               timeout_s=self.timeout_s,
                                               json_mode=self.json_mode)
        except BudgetExhausted as exc:
            self.script_calls -= 1
            result = None
            piece.notes.append(Note(kind="degraded", ticker=code, text=(
                f"no worker call: {exc}; the deterministic writer wrote the section")))
        except (LLMError, TimeoutError) as exc:
            result, problem = None, f"the model failed ({exc or type(exc).__name__})"
        if result is not None:
            piece.notes += result.notes
            piece.status.repaired, piece.status.dropped = result.repaired, result.dropped
            if not result.drafts:
                problem = "every turn of its answer was dropped"
        if problem:
            piece.notes.append(Note(kind="worker", ticker=code, text=(
                f"worker failed: {problem}; the deterministic writer wrote the section")))
        if result is None or not result.drafts:
            piece.drafts, piece.status.writer = fallback, "offline"
            return
        drafts = result.drafts
        if not any(writer.mentions_action(d.text, art.conclusion.action) for d in drafts):
            drafts.append(writer.verdict_turn(art, lang=self.lang))
            piece.notes.append(Note(kind="verdict", ticker=code, text=(
                f"the worker never stated the panel's conclusion ({art.conclusion.action}); "
                "the code added it")))
        piece.drafts, piece.status.writer = drafts, "llm"

    async def _refine(self, script: PodcastScript) -> PodcastScript:
        if self.llm is None:
            return script
        self.say(t("podcast.status_refining", self.lang))
        try:
            self.script_calls += 1
            script, notes = await refiner.run(self.llm, script, lang=self.lang,
                                              budget=self.script_budget,
                                              timeout_s=self.timeout_s,
                                              json_mode=self.json_mode)
        except BudgetExhausted as exc:
            self.script_calls -= 1
            notes = [Note(kind="degraded", text=f"no refiner call: {exc}")]
        except (LLMError, TimeoutError) as exc:
            notes = [Note(kind="refiner", text=(
                f"the refiner failed ({exc or type(exc).__name__}); transitions as written"))]
        self.notes += notes
        return script

    # --- the whole ------------------------------------------------------------------------------

    def _pace(self, *, debates: int, workers: int) -> None:
        """A slow model (its measured pace): longer script-call limits, or PodcastError up
        front, with the estimate, when even one-round debates would not finish in time."""
        if self.llm is None:
            return
        plan = budgeting.pace(
            expected_seconds(self.llm, "script_writer", budgeting.SCRIPT_PROMPT_TOKENS,
                             budgeting.SCRIPT_MAX_TOKENS),
            expected_seconds(self.llm, "expert", TURN_PROMPT_TOKENS, TURN_MAX_TOKENS),
            debates=debates, workers=workers, turn_timeout_s=self.timeout_s)
        self.timeout_s = plan.turn_timeout_s
        if plan.fits or plan.worker_s is None or plan.total_s is None:
            return
        said = {"turn_s": f"{plan.worker_s:.0f}", "total_min": f"{plan.total_s / 60:.0f}",
                "limit_min": f"{budgeting.MAX_PODCAST_S / 60:.0f}"}
        raise _TooSlow("errors.too_slow", what=words.t("errors.podcast_run", "en"), **said)

    async def produce(self, tickers: Sequence[str]) -> PodcastResult:
        entries = await self._entries(tickers)
        known = [e for e in entries if e.sym is not None]
        reused = await self._reusable(known)
        fresh = len(known) - len(reused)
        self.plan = budgeting.plan(self.total, debates=fresh, workers=len(known),
                                   debate_default=self.debate_budget, offline=self.offline)
        self.script_budget = Budget(self.plan.script)
        self._pace(debates=fresh, workers=len(known))
        for d in self.plan.degradations:
            self.notes.append(Note(kind="degraded", text=d))
        if self.offline:
            self.notes.append(Note(kind="offline", text=t("podcast.offline", self.lang)))
        mode = self._mode()
        async with asyncio.TaskGroup() as tg:
            base = tg.create_task(self._base(entries), name="podcast-base")
            tasks = [tg.create_task(self._ticker(e, mode, reused, base),
                                    name=f"podcast-{e.given}") for e in entries]
        pieces = [t.result() for t in tasks]
        return await self._assemble(entries, base.result(), pieces)

    async def _assemble(self, entries: Sequence[_Entry], base: _Base,
                        pieces: Sequence[_Piece]) -> PodcastResult:
        statuses = [p.status for p in pieces]
        for p in pieces:
            self.notes += p.notes
            p.status.turns = len(p.drafts)
        sections: list[tuple[str, Sequence[Draft]]] = [
            ("opening", base.opening),
            ("theme", [base.theme, writer.theme_verdicts(statuses, lang=self.lang)])]
        sections += [(f"ticker:{code}", p.drafts) for code, p in zip(self.codes, pieces,
                                                                      strict=True)]
        sections.append(("closing", writer.closing(self.day_iso, statuses,
                                                   offline=self.offline, lang=self.lang)))
        chapters, turns = _number(sections, self.lang)
        script = PodcastScript(date=self.day.strftime("%Y%m%d"), user_tickers=list(self.codes),
                               chapter=chapters, scripts=turns)
        script = await self._refine(script)
        debate_tokens = sum(s.debate_tokens for s in statuses)
        script_tokens = self.script_budget.used
        report = BudgetReport(
            total=self.total, used=debate_tokens + script_tokens, debate_tokens=debate_tokens,
            script_tokens=script_tokens, per_debate=self.plan.per_debate,
            level=self.plan.level.index, level_name=self.plan.level.name,
            degradations=list(self.plan.degradations) + [
                f"{n.ticker}: {n.text}" for n in self.notes
                if n.kind == "degraded" and n.ticker])
        return PodcastResult(
            script=script, notes=self.notes, budget=report,
            llm_calls=sum(s.debate_calls for s in statuses) + self.script_calls,
            tickers=statuses, offline=self.offline,
            label=t("podcast.offline", self.lang) if self.offline else "", markets=base.moves,
            debates={p.artifact.meta.ticker: p.artifact for p in pieces
                     if p.artifact is not None})


async def produce_podcast(
    tickers: Sequence[str], *, date: dt.date | None = None, lang: str = "en",
    budget: int | None = None, llm: LLMProvider | None = None, pool: Any = None,
    concurrency: int = 3, registry: ToolRegistry | None = None,
    debate_budget: int | None = DEFAULT_BUDGET_TOKENS, emit: Emit | None = None,
    turn_timeout_s: float = DEFAULT_TIMEOUT_S, json_mode: bool = False,
) -> PodcastResult:
    """The podcast script for `tickers` (in the user's order) on `date` (default today: the
    latest data; a past date cuts every series there).

    `llm=None` runs offline (deterministic debates and writer, labelled). `pool` (asyncpg)
    reuses today's debate reports and stores new ones. `budget` caps the podcast's tokens
    (None: each debate keeps `debate_budget`). `registry` gives the debaters their tools.
    `emit` receives progress as `Status` events. Raises `PodcastError` when no ticker is
    given or none is known.
    """
    run = _Run(day=date, lang=lang, budget=budget, llm=llm, pool=pool, concurrency=concurrency,
               registry=registry, debate_budget=debate_budget, emit=emit,
               turn_timeout_s=turn_timeout_s, json_mode=json_mode)
    return await run.produce(tickers)


__all__ = ["DEFAULT_TIMEOUT_S", "clean_tickers", "no_verdict",
           "produce_podcast"]


class _TooSlow(PodcastError):
    """The configured model cannot finish a podcast in time: "podcast" said in the reader's
    language too."""

    def message(self, lang: str) -> str:
        return words.t(self.key, lang, **{**self.values,
                                          "what": words.t("errors.podcast_run", lang)})
