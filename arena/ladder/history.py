"""A ladder's ratings over time, as the charts (web, ``arena ladder plot``) draw them."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class RatingPoint:
    """One bot's rating at one point in time.  Outside the main field (``in_field``
    False) a rating has no finite interval (see :mod:`.ratings`), so none is drawn."""

    elo: float
    low: float
    high: float
    in_field: bool = True


History = list[tuple[int, dict[str, RatingPoint]]]
"""Points in time: (matches finished, bot → its rating then), oldest first."""
