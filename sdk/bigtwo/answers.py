"""What a bot's answer becomes: the one reading of ``act()``'s return value, shared by the
network client (which sends it to the referee) and :func:`bigtwo.play_local` (which hands
it to the engine), so a bot is judged the same way in-process and over the wire.

Pure standard library: the local runner must not need gRPC.
"""

from __future__ import annotations

import os
import sys
from typing import Any

from .cards import CardParseError, parse_cards
from .combos import PASS, Combination, PassMove


class InvalidReturn(ValueError):
    """``act`` returned something that is no play at all."""


def encode_move(move: Any) -> tuple[bool, list[int]]:
    """``(is_pass, card ids)`` for what ``act`` returned.  Never "fixes" a choice: anything
    expressible as cards is sent as it is, for the referee to judge."""
    if move is PASS or isinstance(move, PassMove):
        return True, []
    if isinstance(move, Combination):
        return False, [int(c) for c in move.cards]
    if isinstance(move, str):
        if move.strip().lower() == "pass":
            return True, []
        try:
            return False, [int(c) for c in parse_cards(move)]
        except CardParseError as exc:
            raise InvalidReturn(f"act() returned {move!r}: {exc}") from None
    if isinstance(move, (list, tuple, set, frozenset)):
        try:
            return False, [int(c) for c in parse_cards(list(move))]
        except (CardParseError, TypeError) as exc:
            raise InvalidReturn(f"act() returned {move!r}: {exc}") from None
    raise InvalidReturn(f"act() returned {move!r}, which is not a play (return a legal move)")


def folder_of(bot: object) -> str | None:
    """The folder of the file the bot's class was written in: its frames are the author's
    (see :func:`bigtwo.loader.describe_error`)."""
    module = sys.modules.get(type(bot).__module__)
    path = getattr(module, "__file__", None)
    return os.path.dirname(os.path.abspath(path)) if path else None
