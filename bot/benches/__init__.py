"""Benchmarks: `bullpen bench NAME` runs `bot.benches.NAME.run()` and prints its JSON."""
