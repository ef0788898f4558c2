"""The class a bot author subclasses: one required method, ``act``.

    from bigtwo import Bot

    class MyBot(Bot):
        def act(self, observation):
            return observation.legal_moves[0]     # weakest legal move (pass comes last)

Play it in-process with :func:`bigtwo.play_local` (no referee, the same hooks and
observations), and against a referee with ``arena match`` (which starts it with
``python -m bigtwo.run my_bot.py``).  Pure Python, no gRPC.
"""

from __future__ import annotations

from .combos import Move
from .game import Action, HandResult
from .observation import Observation


class Bot:
    """Base class of every bot.  Override :meth:`act`; the ``on_*`` hooks are optional."""

    name: str = ""
    """Shown in logs and results; defaults to the class name."""
    version: str = "0"
    move_ms: int | None = None
    """The referee's time allowance per move, in ms: set by the client when the match
    starts (``None`` in-process, where there is no clock).  A bot that searches should
    stay well inside it."""

    def act(self, observation: Observation) -> Move:
        """Return one of ``observation.legal_moves`` (a :class:`Combination` or ``PASS``;
        see :attr:`Observation.legal_moves` for their order).

        Cards in another form (a list of cards, ``"3D 3C"``, ``"pass"``) are accepted too
        and judged as they are; an exception, a value that is no play at all, or a play the
        rules refuse costs a strike and the referee's default action."""
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
        """The name results and tables show: ``name`` when the author set one, else the class's
        name, so a bot is never shown blank."""
        return self.name or type(self).__name__
