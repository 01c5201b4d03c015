"""Debate mode (issue 8): analysts argue in rounds, a moderator or judge concludes, a report
comes out.

- `mode.DebateMode`: the Mode protocol; `llm=None` runs the offline experts.
- `experts` (seed 001) and `bull_bear` (seed 000): the two panels, on `engine.Engine`
  (per-seat profiles, budgeted calls, the tool-loop turn with one repair request).
- `models`: the artifacts (`TickerDebateOutput`, `BullBearOutput`, `DebateArtifact`).
- `grounding`: sources re-checked against what each turn was given.
- `budget`, `evidence`, `metrics`, `offline`, `report`, `store`: the rest.

Importing `debate` alone stays cheap; import the modules you need.
"""
