"""An intraday ICT answer for an A-share reads its session on the exchange's own clock: the
last bar in Shanghai time and the morning or afternoon session by name, never New York's."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest

from analyst.ict_answer import ict_answer
from analyst.offline import OfflineAnalyst
from bot.symbols_bridge import find_symbols
from core.agent.turn import Turn
from core.events import Done
from core.testing import MemoryRecorder
from core.words import t as catalogue
from tests.tools.test_offline_packs import _need
from tools import build_registry
from tools.data import DataConfig, configure


@pytest.fixture(autouse=True)
def _offline_data() -> Iterator[None]:
    configure(DataConfig())
    yield
    configure(DataConfig())


@pytest.mark.parametrize(("question", "lang", "clock", "sessions"), [
    ("浦发银行 15分钟 ICT 分析", "zh", "北京时间", ("上午盘", "下午盘")),
    ("ICT analysis of 600000 on 15m", "en", "Shanghai", ("morning session",
                                                         "afternoon session"))])
async def test_an_a_share_session_line_is_on_shanghai_time(question: str, lang: str, clock: str,
                                                           sessions: tuple[str, str]) -> None:
    _need("hqchart")
    analyst = OfflineAnalyst(registry=build_registry(), find_symbols=find_symbols,
                             ict_answer=ict_answer)
    events = [e async for e in analyst.run(Turn(text=question, history=[], lang=lang,
                                                 recorder=MemoryRecorder()))]
    done = events[-1]
    assert isinstance(done, Done)
    line = next(x for x in done.text.splitlines() if "CN" in x and ("时段" in x or "Session" in x))
    assert clock in line and "New York" not in line and "纽约" not in line, line
    hhmm = re.search(r"(\d{2}):(\d{2})", line)
    assert hhmm is not None
    minutes = int(hhmm.group(1)) * 60 + int(hhmm.group(2))
    in_session = 9 * 60 + 30 <= minutes < 11 * 60 + 30 or 13 * 60 <= minutes < 15 * 60
    assert in_session == any(s in line for s in sessions), line
    assert "cn_am" not in line and "cn_pm" not in line
    # the bias stack's session check names the same session (it read 'off' at 15:00, the end
    # of the 14:45 bar, while this line said 下午盘)
    fit = catalogue("ict.check_session_fit", lang)
    check = next(x for x in done.text.splitlines() if fit in x)
    named = [s for s in sessions if s in line]
    assert [s for s in sessions if s in check] == named, (line, check)
    assert ("✅" in check) == bool(named), check
