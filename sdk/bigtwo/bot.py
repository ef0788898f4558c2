"""The class a bot author subclasses: one required method, ``act``.

    from bigtwo import Bot

    class MyBot(Bot):
        def act(self, observation):
            return observation.legal_moves[0]     # weakest legal move (pass comes last)

Run it against a referee with ``python -m bigtwo.run my_bot.py`` (the arena sets the
address, seat and token in the environment).  Pure Python, no gRPC: the same class runs in
the referee's process for tests (``inproc``) and behind the client in a sandbox.
"""

from __future__ import annotations

from typing import Any

from .game import Action, HandResult
from .observation import Observation


class Bot:
    """Base class of every bot.  Override :meth:`act`; the ``on_*`` hooks are optional."""

    name: str = ""
    """Shown in logs and results; defaults to the class name."""
    version: str = "0"

    def act(self, observation: Observation) -> Any:
        """Return one of ``observation.legal_moves`` (a combination or ``PASS``).

        Anything else that can be expressed as cards (a list of cards, ``"3D 3C"``,
        ``"pass"``) is sent as it is, and the referee judges it; an exception or a value
        that is no play at all costs a strike and the referee's default action."""
        raise NotImplementedError("a bot must implement act(observation)")

    def on_match_start(self, observation: Observation) -> None:
        """Once, before the first hand's cards are dealt (``observation.hand`` is empty)."""

    def on_hand_start(self, observation: Observation) -> None:
        """At each deal, with my new cards."""

    def on_event(self, action: Action) -> None:
        """Every public move, mine included."""

    def on_hand_end(self, result: HandResult) -> None:
        """When a hand ends (``result.remaining`` holds only my cards)."""

    def on_match_end(self, scores: tuple[int, ...], places: tuple[int, ...]) -> None:
        """When the match ends."""

    def on_fault(self, kind: str, detail: str) -> None:
        """The referee recorded a fault against me (timeout, illegal move, ...)."""

    @property
    def display_name(self) -> str:
        return self.name or type(self).__name__
