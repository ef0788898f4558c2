"""Fails while being imported."""

raise SystemExit("this bot is broken on purpose")
