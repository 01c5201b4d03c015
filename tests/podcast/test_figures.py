"""The figure check the worker and the refiner are held to."""

from __future__ import annotations

from podcast.figures import FigureSet


def test_figures_found_repaired_or_unverified():
    fs = FigureSet.of(["Return 12M: +92.5%; close 138.85 USD (2025-02-14); S&P 500 at "
                       "3,557.54, -0.68%; RSI(14) 56.6; MA200 +11.3%"])
    ok = fs.check("Up 92.5% in 12 months to 138.85 on 2025年2月14日; S&P 500 3557.54 (0.68%).")
    assert ok.ok and not ok.repairs
    fixed = fs.check("Up 92% in a year, RSI 56.63.")
    assert fixed.ok and fixed.text == "Up 92.5% in a year, RSI 56.6."
    assert fixed.repairs == [("92%", "92.5"), ("56.63", "56.6")]
    bad = fs.check("It fell 14% on 2025-02-13, then 11%.")
    assert not bad.ok and bad.unverified == ["2025-02-13", "14%"]  # 14 is a day, not a %
    assert fs.check("February 14, 2025").ok  # parts of an input date
    assert fs.check("MA200 and Q3 are names, not figures").ok
    ambiguous = FigureSet.of(["0.41 and 0.38"]).check("about 0.4")
    assert not ambiguous.ok and not ambiguous.repairs
    assert not FigureSet.of(["56.6"]).check("56.6%").ok  # a plain figure is not a percentage
    assert fs.check("11.3 percent").ok  # a percentage may be said in words
    assert not fs.check("up 12345%", repair=False).ok
