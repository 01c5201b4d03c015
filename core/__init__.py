"""Bullpen's kernel: types, ports, errors, events, tools registry, LLM providers, the agent."""
