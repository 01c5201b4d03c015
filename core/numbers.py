"""Numbers as Bullpen writes them: the one module that knows each market's conventions.

Every package that puts a figure into words (bot, tools, analyst, debate, podcast, jobs) uses
these functions, so a convention is decided once:

- Amounts and volumes: Chinese uses 万 (1e4), 亿 (1e8) and 万亿 (1e12); English K/M/B/T.
  Volumes counted in lots (A-share 手 = 100 shares) say 手. Compact figures carry four
  significant digits at most, trailing zeros dropped: a figure known to three digits is
  never written with `.00` (1.17万亿元, not 11,700.00 亿元).
- Prices go to the instrument's tick (A-shares 0.01 CNY, so ¥0.61, not ¥0.6100; A-share
  funds 0.001; US 0.01 at or above $1, 0.0001 below); a price with no known tick keeps two
  decimals, four below 1.
- Percentages: two decimals, signed for a change.
- Dates: ISO (2024-09-19) in both languages, everywhere, so a date reads the same in a
  table, a sentence and a file name.

Pure: no I/O, nothing of ours imported.
"""

from __future__ import annotations

import math
from datetime import date, datetime
from decimal import ROUND_HALF_UP, Decimal
from typing import Literal

Lang = Literal["en", "zh"] | str

WAN = 1e4
YI = 1e8
WAN_YI = 1e12
LOT = 100  # an A-share 手

NA = {"en": "n/a", "zh": "—"}
# the time zone a reader is assumed to live in before they say (/tz)
HOME_ZONE = {"en": "America/New_York", "zh": "Asia/Shanghai"}

_ZH_UNITS = ((WAN_YI, "万亿"), (YI, "亿"), (WAN, "万"))
_EN_UNITS = ((1e12, "T"), (1e9, "B"), (1e6, "M"), (1e3, "K"))
_SYMBOLS = {"USD": "$", "CNY": "¥", "HKD": "HK$"}


def _zh(lang: str) -> bool:
    return lang == "zh"


def na(lang: str) -> str:
    """What stands for a missing figure."""
    return NA["zh" if _zh(lang) else "en"]


def home_zone(lang: str) -> str:
    """Asia/Shanghai for a Chinese reader, America/New_York for anyone else."""
    return HOME_ZONE["zh" if _zh(lang) else "en"]


def _finite(v: float | None) -> bool:
    return v is not None and math.isfinite(v)


# --- significant digits ----------------------------------------------------------------------


def _round(v: float, places: int) -> float:
    """`v` to `places` decimals (negative: tens, hundreds...), halves away from zero as a
    person rounds (9,876.5 -> 9,877), not to even."""
    step = Decimal(1).scaleb(-places)
    return float(Decimal(repr(v)).quantize(step, rounding=ROUND_HALF_UP))


def significant(v: float, digits: int = 4, *, sep: bool = True) -> str:
    """`v` to at most `digits` significant digits, thousands separated, trailing zeros of the
    fraction dropped (11700 -> "11,700"; 1.8765 -> "1.877"; 1.5 -> "1.5"); `sep=False`
    leaves out the thousands separator (3419万, as Chinese writes a count of 万)."""
    if v == 0:
        return "0"
    magnitude = math.floor(math.log10(abs(v))) + 1
    places = max(0, digits - magnitude)
    rounded = _round(v, places)
    if rounded != 0 and math.floor(math.log10(abs(rounded))) + 1 > magnitude:
        places = max(0, places - 1)  # 9.9996 -> 10.00 -> 10
    text = f"{rounded:,.{places}f}" if sep else f"{rounded:.{places}f}"
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return text


def compact(v: float | None, lang: str, *, digits: int = 4) -> str:
    """A large count or amount in the language's units: 1.88亿 / 188M, 3.5万 / 35K; below the
    smallest unit, the figure itself."""
    if not _finite(v):
        return na(lang)
    assert v is not None
    units = _ZH_UNITS if _zh(lang) else _EN_UNITS
    if v != 0:  # round first, so 9,999.6 is 1万 and 999.96M is 1B, not 10,000 / 1000M
        v = _round(v, digits - 1 - math.floor(math.log10(abs(v))))
    for size, unit in units:
        if abs(v) >= size:
            return significant(v / size, digits, sep=False) + unit
    return significant(v, digits) if abs(v) >= 1 else f"{v:.{max(2, digits - 1)}g}"


# --- amounts, volumes ------------------------------------------------------------------------


def amount(v: float | None, lang: str, *, currency: str = "CNY", digits: int = 4) -> str:
    """Money in the currency's own unit (yuan, dollars), written compactly:
    zh 1.17万亿元 / 3.2亿美元, en CNY 1.17T / $3.2B."""
    if not _finite(v):
        return na(lang)
    body = compact(v, lang, digits=digits)
    if _zh(lang):
        word = {"CNY": "元", "USD": "美元", "HKD": "港元"}.get(currency, currency)
        return body + word
    sym = _SYMBOLS.get(currency)
    if sym and currency != "CNY":
        return ("-" + sym + body[1:]) if body.startswith("-") else sym + body
    return f"{currency} {body}" if currency else body


def amount_yi(v_yi: float | None, lang: str, *, digits: int = 4) -> str:
    """An amount the data gives in 亿元 (the A-share statements' unit), written as `amount`."""
    return amount(None if v_yi is None else v_yi * YI, lang, currency="CNY", digits=digits)


def volume(v: float | None, lang: str, *, lots: bool = False, unit: bool = True) -> str:
    """A traded volume. `lots`: the data counts A-share 手 (100 shares), said as 手 / lots.
    zh: 1.88亿股, 23.5万手; en: 188M, 235K lots. `unit=False` leaves the word off (an
    index's volume, whose unit the source does not say)."""
    if not _finite(v):
        return na(lang)
    body = compact(v, lang)
    if not unit:
        return body
    if _zh(lang):
        return body + ("手" if lots else "股")
    return body + (" lots" if lots else "")


# --- prices and ticks ------------------------------------------------------------------------


def is_cn_fund(code: str) -> bool:
    """An exchange-traded A-share fund (ETF, LOF) by its code: SH 5xxxxx, SZ 15/16/18xxxx."""
    digits = code.split(".")[0]
    return len(digits) == 6 and digits.isdigit() and (
        digits[0] == "5" or digits[:2] in ("15", "16", "18"))


def tick_size(market: str, kind: str, price: float) -> float | None:
    """The price step of an instrument, or None where no single one applies (crypto and FX
    quote in steps their venues set; Hong Kong's step depends on a price table not kept here).

    - A-shares (SH/SZ/BJ stocks) 0.01 CNY; A-share funds (ETFs, LOFs) 0.001 CNY; indexes are
      published to 0.01 points.
    - US stocks and ETFs 0.01 USD at or above $1, 0.0001 below (Reg NMS rule 612).
    """
    if market == "cn":
        return 0.001 if kind == "fund" else 0.01
    if market == "us":
        return 0.01 if not math.isfinite(price) or abs(price) >= 1.0 else 0.0001
    return None


def tick_text(price: float, tick: float | None) -> str:
    """A price with the tick's decimals (10.50 on a 0.01 tick, not 10.5); `:g` without one."""
    if tick is None or not math.isfinite(price):
        return f"{price:g}"
    places = max(0, -Decimal(str(tick)).normalize().as_tuple().exponent)  # type: ignore[operator]
    return f"{price:,.{places}f}"


def plain(v: float | None, lang: str = "en", *, places: int = 2) -> str:
    """A figure with no tick or unit known: `places` decimals at or above 1, four below
    (thousands separated)."""
    if not _finite(v):
        return na(lang)
    assert v is not None
    if abs(v) >= 1 or v == 0:
        return f"{v:,.{places}f}"
    return f"{v:.4f}"


def price(v: float | None, lang: str = "en", *, market: str = "", symbol: str = "",
          kind: str = "") -> str:
    """A price (or index level) on its instrument's tick; `plain` where none is known."""
    if not _finite(v):
        return na(lang)
    assert v is not None
    if not kind and market == "cn" and is_cn_fund(symbol):
        kind = "fund"
    tick = tick_size(market, kind, v) if market else None
    return tick_text(v, tick) if tick is not None else plain(v, lang)


def currency_sign(currency: str) -> str:
    """¥ / $ / HK$ before a price; empty for points and unknown currencies."""
    return _SYMBOLS.get(currency, "")


# --- percentages, other figures, dates -------------------------------------------------------


def pct(v: float | None, lang: str = "en", *, signed: bool = True) -> str:
    """A percentage to two decimals: +1.25% (a change) or 1.25%."""
    if not _finite(v):
        return na(lang)
    return f"{v:+.2f}%" if signed else f"{v:.2f}%"


def value(v: float | None, lang: str = "en") -> str:
    """A figure of no known kind (an indicator's reading): large ones compact (OBV 264.6亿),
    the rest to two decimals, small ones to three significant digits (0.0123)."""
    if not _finite(v):
        return na(lang)
    assert v is not None
    if abs(v) >= 1e5:
        return compact(v, lang)
    if abs(v) >= 1 or v == 0:
        return f"{v:,.2f}"
    return significant(v, 3) if abs(v) >= 0.01 else f"{v:.2g}"


def day(d: date | datetime | str) -> str:
    """A date as Bullpen writes it, in either language: ISO (2024-09-19)."""
    if isinstance(d, datetime):
        return d.date().isoformat()
    if isinstance(d, date):
        return d.isoformat()
    return str(d)[:10]


__all__ = ["LOT", "WAN", "WAN_YI", "YI", "amount", "amount_yi", "compact", "currency_sign",
           "day", "home_zone", "is_cn_fund", "na", "pct", "plain", "price", "significant",
           "tick_size", "tick_text", "value", "volume"]
