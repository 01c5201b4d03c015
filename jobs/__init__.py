"""Scheduling, subscriptions and push delivery (to come)."""
