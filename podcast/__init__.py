"""Daily ticker podcast script (to come)."""
