"""The console as a person meets it (issue 33 item 5): `bullpen serve` (what `make run` runs)
with nothing configured, in a real 80x24 terminal (tmux), three questions typed; then the
whole scrollback is read as the transcript it must be. Also the piped case (`echo q | make
run`): the answer once, and a clean exit."""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path

import asyncpg
import pytest

from tests.conftest import _with_db

ROOT = Path(__file__).resolve().parents[2]
# what `make run` runs, `.venv/bin/bullpen serve` (the same entry point via -m without it)
_SCRIPT = Path(sys.executable).parent / "bullpen"
BULLPEN = ([str(_SCRIPT)] if _SCRIPT.exists() else [sys.executable, "-m", "bot.cli"]) + ["serve"]
TMUX = shutil.which("tmux")
PROMPT = "›"

ZH = "600519 最近一个月走势"
EN = "How did NVDA do over the last 3 months?"
NONSENSE = "what is the meaning of life"


Ready = Callable[[list[str]], bool]


def _fresh_database(server: str) -> str:
    """A database of its own, cloned from the session server's migrated template (the console's
    person and conversation start from nothing)."""
    name = f"console_{uuid.uuid4().hex[:12]}"

    async def create() -> None:
        conn = await asyncpg.connect(server)
        await conn.execute(f"CREATE DATABASE {name} TEMPLATE bullpen_template")
        await conn.close()

    asyncio.run(create())
    return _with_db(server, name)


def _env(tmp_path: Path, server: str) -> dict[str, str]:
    dsn = _fresh_database(server)
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("BULLPEN_", "DATABASE_URL", "TELEGRAM_", "DISCORD_", "SLACK_",
                                "WECHAT_", "WECOM_", "WEB_", "TMUX"))}
    data = tmp_path / "data"
    data.mkdir()
    packs = ROOT / "data" / "packs"
    if packs.exists():  # the installed data packs, as `make run` finds them under data/
        (data / "packs").symlink_to(packs.resolve())
    env.update({"BULLPEN_DATA_DIR": str(data), "DATABASE_URL": dsn})
    return env


class Pane:
    """One tmux server of the test's own (its socket in tmp_path) with one 80x24 pane."""

    def __init__(self, tmp_path: Path, env: dict[str, str]) -> None:
        assert TMUX is not None
        self.sock = str(tmp_path / "tmux.sock")
        conf = tmp_path / "tmux.conf"
        conf.write_text("set -g remain-on-exit on\nset -g history-limit 20000\n"
                        "set -g status off\n")
        self.env = env
        # the exit status is printed in the pane (tmux's #{pane_dead_status} came back empty
        # on some runs: the pty's end raced the child's reaping)
        command = " ".join(_quote(a) for a in BULLPEN) + "; echo \"bullpen exited $?\""
        self.tmux("-f", str(conf), "new-session", "-d", "-x", "80", "-y", "24", "-s", "t",
                  "-c", str(tmp_path), command)

    def tmux(self, *args: str) -> str:
        assert TMUX is not None
        out = subprocess.run([TMUX, "-S", self.sock, *args], env=self.env, capture_output=True,
                             text=True, timeout=30)
        assert out.returncode == 0, out.stderr
        return out.stdout

    def scrollback(self) -> list[str]:
        return [line.rstrip() for line in
                self.tmux("capture-pane", "-p", "-J", "-S", "-", "-t", "t").splitlines()]

    def type(self, text: str) -> None:
        self.tmux("send-keys", "-t", "t", "-l", text)
        self.tmux("send-keys", "-t", "t", "Enter")

    def dead(self) -> bool:
        return self.tmux("display-message", "-p", "-t", "t", "#{pane_dead}").strip() == "1"

    def wait(self, what: str, ready: Ready, bound_s: float) -> list[str]:
        """Poll the scrollback until `ready(lines)`: events, not sleeps; the bound is generous
        (a cold start builds the symbols directory on a busy 2-core machine)."""
        end = time.monotonic() + bound_s
        lines: list[str] = []
        while time.monotonic() < end:
            lines = self.scrollback()
            if ready(lines):
                return lines
            if self.dead():
                break
            time.sleep(0.3)
        raise AssertionError(f"{what} did not appear within {bound_s:.0f} s:\n"
                             + "\n".join(lines))

    def close(self) -> None:
        subprocess.run([TMUX or "tmux", "-S", self.sock, "kill-server"], env=self.env,
                       capture_output=True, timeout=30)


def _quote(arg: str) -> str:
    return "'" + arg.replace("'", "'\"'\"'") + "'"


def _idle_after(question: str) -> Ready:
    """The answer to `question` is complete: its question line is there and, after it, the
    offline analyst's label and then an empty prompt on the last line."""
    def ready(lines: list[str]) -> bool:
        text = [ln for ln in lines if ln.strip()]
        asked = [i for i, ln in enumerate(text) if ln == f"{PROMPT} {question}"]
        if not asked or text[-1] != PROMPT:
            return False
        after = text[asked[-1] + 1:]
        return any("offline analyst" in ln or "离线分析师" in ln for ln in after)
    return ready


def _answer(lines: list[str], question: str) -> list[str]:
    """The lines between `question`'s prompt line and the next prompt line."""
    start = lines.index(f"{PROMPT} {question}") + 1
    end = next(i for i in range(start, len(lines)) if lines[i].startswith(PROMPT))
    return [ln for ln in lines[start:end] if ln.strip()]


@pytest.mark.skipif(TMUX is None, reason="tmux is not installed: the console's terminal test "
                                         "needs a real terminal emulator (apt-get install tmux)")
def test_console_in_an_80x24_terminal_keeps_the_transcript(pg_server: str,
                                                           tmp_path: Path) -> None:
    pane = Pane(tmp_path, _env(tmp_path, pg_server))
    try:
        pane.wait("the console's prompt", lambda ls: any("Bullpen console" in ln for ln in ls)
                  and [ln for ln in ls if ln.strip()][-1] == PROMPT, 300)
        for question in (ZH, EN, NONSENSE):
            pane.type(question)
            pane.wait(f"the answer to {question!r}", _idle_after(question), 180)
        pane.type("/help")
        lines = pane.wait("/help", lambda ls: any(ln.startswith("/fast") for ln in ls)
                          and [ln for ln in ls if ln.strip()][-1] == PROMPT, 60)
        transcript = "\n".join(lines)

        for question in (ZH, EN, NONSENSE):  # each question stays on screen, once
            assert sum(question in ln for ln in lines) == 1, (question, transcript)
            assert lines.count(f"{PROMPT} {question}") == 1, transcript
        answers = {q: _answer(lines, q) for q in (ZH, EN, NONSENSE)}
        for question, answer in answers.items():  # each answer printed once, whole
            assert answer, (question, transcript)
            assert lines.count(answer[0]) == 1, (answer[0], transcript)
            assert "offline analyst" in answer[-1] or "离线分析师" in answer[-1], transcript
        assert "贵州茅台" in answers[ZH][0]
        assert answers[EN][0].startswith("NVIDIA Corp (NVDA) from ")
        assert len(lines) > 24  # the transcript outgrew the terminal and scrolled, whole
        assert any(ln.startswith("Source: snapshot") for ln in answers[EN]), transcript
        # nothing cut off: no line ends in an ellipsis (no answer here contains one), and no
        # progress line was left behind
        assert not [ln for ln in lines if ln.endswith(("…", "..."))], transcript
        assert not [ln for ln in lines if "⏳ Working" in ln or "正在理解问题" in ln], transcript
        # the question not understood: the short pointer, not the inventory
        assert answers[NONSENSE][0].startswith("I could not find a stock"), transcript
        assert len(answers[NONSENSE]) <= 4, answers[NONSENSE]
        assert "offline snapshot covers" not in transcript
        # /help keeps its lines
        assert any(ln.startswith("/fast QUESTION - One quick answer") for ln in lines)
        assert any(ln.startswith("/new - Start a new conversation") for ln in lines)

        pane.type("/quit")
        lines = pane.wait("the exit", lambda ls: any(ln.startswith("bullpen exited")
                                                     for ln in ls), 60)
        assert "bullpen exited 0" in lines, "\n".join(lines)
    finally:
        pane.close()


def test_piped_question_is_answered_once_and_the_console_exits(pg_server: str,
                                                               tmp_path: Path) -> None:
    """`echo "question" | make run`: stdin is no terminal; the answer is printed once (with
    the question above it) and serve exits 0 once it is answered."""
    out = subprocess.run(BULLPEN, cwd=tmp_path, env=_env(tmp_path, pg_server),
                         input=f"{EN}\n", capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines.count(f"{PROMPT} {EN}") == 1, out.stdout
    firsts = [ln for ln in lines if ln.startswith("NVIDIA Corp (NVDA) from ")]
    assert len(firsts) == 1, out.stdout
    assert "\x1b" not in out.stdout and "⏳ Working" not in out.stdout  # no status line
    assert sum(ln.startswith("offline analyst ·") for ln in lines) == 1, out.stdout
