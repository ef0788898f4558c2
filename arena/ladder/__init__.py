"""The ladder: duplicate matches planned round by round, stored, played locally or on Ray,
and rated with honest uncertainty; sequential tests for "is the new bot better"."""
