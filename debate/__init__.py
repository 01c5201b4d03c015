"""Debate mode: panels, rounds, moderator/judge (to come; see issue 8)."""
