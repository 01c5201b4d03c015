"""The starting set of the strategies knowledge base: well-known technical strategies with their
usual parameters and rules, named in English and Chinese. Seeded into `ta_strategies` once
(names already there are left alone, so edits survive)."""

from __future__ import annotations

from core.store.strategies import Strategy

STARTING_SET: list[Strategy] = [
    Strategy(
        name="Moving average crossover",
        aliases=["MA crossover", "golden cross", "death cross", "dual moving average",
                 "均线交叉", "双均线", "金叉", "死叉", "黄金交叉", "均线金叉"],
        description="Trend following: buy when a fast moving average crosses above a slow one "
                    "(golden cross), sell or go short when it crosses below (death cross).",
        indicators=["SMA", "EMA"],
        parameters={"fast": 50, "slow": 200, "ma_type": "sma", "short_term_fast": 5,
                    "short_term_slow": 20},
        rules="Long when SMA(fast) crosses above SMA(slow) at a close; exit when it crosses "
              "back below. 50/200 for the classic daily golden/death cross; 5/20 (or EMA "
              "12/26) for short-term swings. Whipsaws in sideways markets: confirm with "
              "volume or a trend filter (ADX > 20)."),
    Strategy(
        name="RSI divergence",
        aliases=["RSI背离", "RSI底背离", "RSI顶背离", "背离", "bullish divergence",
                 "bearish divergence"],
        description="Reversal signal: price makes a lower low while RSI makes a higher low "
                    "(bullish), or a higher high while RSI makes a lower high (bearish).",
        indicators=["RSI"],
        parameters={"rsi_length": 14, "pivot_window": 5, "max_pivot_gap_bars": 60,
                    "oversold": 30, "overbought": 70},
        rules="Find swing lows/highs as bars that are the extreme of pivot_window bars on each "
              "side; compare consecutive pivots no more than max_pivot_gap_bars apart. Bullish "
              "divergence is stronger when the first RSI low is below oversold; enter on a "
              "close above the high between the pivots, stop under the second low."),
    Strategy(
        name="RSI overbought/oversold",
        aliases=["RSI mean reversion", "RSI 超买超卖", "超买超卖", "RSI超卖反弹", "RSI 2"],
        description="Mean reversion: buy when RSI drops below the oversold level and turns up, "
                    "sell when it rises above the overbought level and turns down.",
        indicators=["RSI"],
        parameters={"length": 14, "oversold": 30, "overbought": 70,
                    "connors_length": 2, "connors_oversold": 10, "trend_filter_sma": 200},
        rules="Buy when RSI(14) crosses back above 30, sell when it crosses back below 70. "
              "Connors' RSI(2) variant: buy when RSI(2) < 10 with the close above SMA(200), "
              "exit on a close above SMA(5). In strong trends RSI stays overbought for long."),
    Strategy(
        name="MACD signal crossover",
        aliases=["MACD crossover", "MACD金叉", "MACD死叉", "MACD交叉", "指数平滑异同移动平均线"],
        description="Momentum: buy when the MACD line crosses above its signal line, sell "
                    "when it crosses below; crossings above zero count as trend-confirming.",
        indicators=["MACD", "EMA"],
        parameters={"fast": 12, "slow": 26, "signal": 9},
        rules="MACD = EMA(12) - EMA(26); signal = EMA(9) of MACD; histogram = MACD - signal. "
              "Long on a cross above the signal (stronger above zero), exit on a cross below. "
              "A histogram shrinking for several bars warns before the cross."),
    Strategy(
        name="MACD divergence",
        aliases=["MACD背离", "MACD顶背离", "MACD底背离"],
        description="Reversal: price makes a new extreme that the MACD line or histogram does "
                    "not confirm.",
        indicators=["MACD"],
        parameters={"fast": 12, "slow": 26, "signal": 9, "pivot_window": 5},
        rules="Compare consecutive price swing highs (lows) with MACD at the same bars: higher "
              "price high with lower MACD high is bearish; lower price low with higher MACD "
              "low is bullish. Act on the next signal-line cross."),
    Strategy(
        name="Bollinger squeeze",
        aliases=["Bollinger Band squeeze", "BB squeeze", "TTM squeeze", "布林带收口",
                 "布林挤压", "布林线收窄", "布林带"],
        description="Volatility breakout: when Bollinger bandwidth contracts to a multi-month "
                    "low (or the bands sit inside the Keltner channel), trade the breakout "
                    "that follows.",
        indicators=["BBANDS", "KC", "ATR"],
        parameters={"length": 20, "std": 2.0, "bandwidth_lookback": 120,
                    "squeeze_percentile": 0.1, "kc_length": 20, "kc_atr_mult": 1.5},
        rules="Squeeze on when bandwidth = (upper - lower) / middle is in the lowest 10% of "
              "the last 120 bars (TTM: Bollinger(20, 2) inside Keltner(20, 1.5 ATR)). Enter in "
              "the direction of the first close outside the bands after the squeeze; stop at "
              "the middle band."),
    Strategy(
        name="Bollinger band mean reversion",
        aliases=["Bollinger bounce", "布林带回归", "布林线反弹", "%b reversion"],
        description="In ranges, fade closes outside the bands back toward the middle band.",
        indicators=["BBANDS"],
        parameters={"length": 20, "std": 2.0, "entry_percent_b": 0.0, "exit_percent_b": 0.5},
        rules="Buy when %b closes below 0 and then back above it; take profit at the middle "
              "band (%b 0.5). Avoid when bandwidth is expanding (a trend, not a range)."),
    Strategy(
        name="Turtle breakout",
        aliases=["Turtle Trading", "Turtle trading rules", "Donchian breakout",
                 "Donchian channel breakout", "海龟交易法", "海龟交易", "海龟",
                 "唐奇安通道突破", "通道突破"],
        description="Trend following of Richard Dennis' and William Eckhardt's Turtles: enter "
                    "on a breakout of the 20-day (system 1) or 55-day (system 2) high or low, "
                    "size by ATR, exit on the opposite 10/20-day breakout.",
        indicators=["DONCHIAN", "ATR"],
        parameters={"system1_entry": 20, "system1_exit": 10, "system2_entry": 55,
                    "system2_exit": 20, "atr_length": 20, "stop_atr": 2.0,
                    "risk_per_unit_pct": 1.0, "add_unit_every_atr": 0.5, "max_units": 4,
                    "skip_after_winner": True},
        rules="Long when the price exceeds the highest high of the last 20 days (55 for "
              "system 2); short on the lowest low. Unit = 1% of equity / ATR(20) (N). Stop "
              "2N from entry; add a unit every 0.5N in favour, up to 4. Exit longs at the "
              "10-day low (20-day for system 2). System 1 skips a breakout when the last one "
              "was a winner."),
    Strategy(
        name="KDJ crossover",
        aliases=["KDJ金叉", "KDJ死叉", "随机指标", "stochastic crossover", "KD交叉"],
        description="Momentum oscillator popular with A-share traders: buy when K crosses "
                    "above D in the oversold zone, sell when it crosses below in the "
                    "overbought zone; J beyond 100 or below 0 marks extremes.",
        indicators=["KDJ", "STOCH"],
        parameters={"n": 9, "m1": 3, "m2": 3, "oversold": 20, "overbought": 80},
        rules="RSV = (close - lowest low(9)) / (highest high(9) - lowest low(9)) * 100; "
              "K = SMA(RSV, 3), D = SMA(K, 3), J = 3K - 2D. Golden cross under 20: buy; dead "
              "cross above 80: sell."),
    Strategy(
        name="Volume breakout",
        aliases=["放量突破", "量价突破", "volume surge breakout"],
        description="A close above a recent resistance (the N-day high) on volume well above "
                    "its average.",
        indicators=["VOLUME", "SMA"],
        parameters={"lookback": 20, "volume_mult": 2.0, "volume_avg": 20},
        rules="Buy when the close exceeds the highest close of the previous 20 bars and volume "
              "is at least 2x its 20-bar average; stop below the breakout bar's low."),
    Strategy(
        name="Dual Thrust",
        aliases=["双推力", "Dual Thrust 日内突破"],
        description="Intraday range breakout (Michael Chalek): open plus or minus a multiple "
                    "of the prior N days' range.",
        indicators=["RANGE"],
        parameters={"n": 4, "k1": 0.5, "k2": 0.5},
        rules="Range = max(HH - LC, HC - LL) over the last n days. Buy above open + k1 * "
              "Range, sell below open - k2 * Range; flat at the close."),
    Strategy(
        name="Ichimoku cloud",
        aliases=["Ichimoku Kinko Hyo", "一目均衡表", "云图"],
        description="Trend system: price above the cloud with Tenkan above Kijun is bullish; "
                    "below the cloud with Tenkan below Kijun is bearish.",
        indicators=["ICHIMOKU"],
        parameters={"tenkan": 9, "kijun": 26, "senkou_b": 52, "displacement": 26},
        rules="Long when the close is above both cloud spans, Tenkan crosses above Kijun, and "
              "Chikou (close shifted back 26) is above the price of 26 bars ago."),
    Strategy(
        name="Supertrend",
        aliases=["超级趋势", "SuperTrend indicator"],
        description="ATR band trailing the price: long while the close stays above it, short "
                    "when it closes below.",
        indicators=["SUPERTREND", "ATR"],
        parameters={"atr_length": 10, "multiplier": 3.0},
        rules="Band = (high + low) / 2 -/+ multiplier * ATR(10), ratcheting with the trend; "
              "flip long/short when the close crosses the band."),
    Strategy(
        name="Chandelier exit",
        aliases=["吊灯止损", "ATR trailing stop", "ATR追踪止损"],
        description="Exit rule: trail a stop a multiple of ATR below the highest high since "
                    "entry (above the lowest low for shorts).",
        indicators=["ATR"],
        parameters={"length": 22, "atr_mult": 3.0},
        rules="Long stop = highest high(22) - 3 * ATR(22); exit on a close below it."),
]
