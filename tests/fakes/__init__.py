"""Loopback fakes of the outside world: LLM endpoint and chat platforms."""
