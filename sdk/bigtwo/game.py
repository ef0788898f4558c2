"""The game state machine: one match of one or more hands under a rule set.

``Game`` is the referee's and the bots' single source of truth for whose turn it is, what
is legal and what a finished hand scores.  It is pure: no I/O, no clock, no global random
state (deals come from an explicit seed), so a match is fully determined by its rules, its
seed and the moves applied, and can be replayed exactly.

    g = Game(RuleSet.preset("hk"), seed=7)
    while not g.hand_over:
        g.apply(random.choice(g.legal_moves()))

Every seat's combinations are generated once per deal and then narrowed as cards leave the
hand, so ``legal_moves()`` when following is a binary search and a slice.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

from .cards import CARDS, Card, CardParseError, cards_from_mask, format_cards, parse_cards
from .combos import PASS, Combination, Move, PassMove
from .legality import (
    SeatCombinations,
    flips_order,
    lone_two_lifted,
    opening_card_required,
    pass_refusal,
    play_refusal,
    select_moves,
)
from .observation import Observation
from .rules import RuleSet
from .scoring import hand_scores, match_over, winning_team

_ID_ORDER = [0, 1, 2, 3]  # Tables.suit_pos of the suit order DCHS, the card ids' own


class IllegalMoveError(ValueError):
    """A move refused by the rules; ``reason`` says which rule (docs/rules.md §8)."""

    def __init__(self, reason: str, seat: int | None = None, move: Any = None) -> None:
        self.reason = reason
        self.seat = seat
        self.move = move
        where = f"seat {seat}: " if seat is not None else ""
        super().__init__(where + reason)


class Action(NamedTuple):
    """One public event of the history: ``seat`` made ``move`` in hand ``hand``.

    ``lead`` is true when the move started a trick (a pass with ``lead`` true hands the
    lead on, docs/rules.md §4.10)."""

    hand: int
    seat: int
    move: Move
    lead: bool


@dataclass(frozen=True)
class HandResult:
    """The end of one hand: per seat, cards left, penalty, signed hand score and cumulative
    score (higher is better under every scoring; see :mod:`bigtwo.scoring`)."""

    hand: int
    winner: int
    cards_left: tuple[int, ...]
    remaining: tuple[tuple[Card, ...], ...]
    penalties: tuple[int, ...]
    scores: tuple[int, ...]
    cumulative: tuple[int, ...]
    winning_team: tuple[int, ...] | None = None

    def to_dict(self) -> dict[str, Any]:
        """The result as plain JSON-ready data, as a record's ``hand_end`` event stores it."""
        return {
            "hand": self.hand,
            "winner": self.winner,
            "winning_team": list(self.winning_team) if self.winning_team else None,
            "cards_left": list(self.cards_left),
            "remaining": [[str(c) for c in cs] for cs in self.remaining],
            "penalties": list(self.penalties),
            "scores": list(self.scores),
            "cumulative": list(self.cumulative),
        }


def deal(rules: RuleSet, seed: int | str, hand: int = 0) -> list[list[Card]]:
    """The cards of each seat for hand number ``hand`` of the match with ``seed``.

    Reproducible across runs and machines (``random.Random`` seeded with a string is
    stable).  Undealt cards (2 or 3 players) are simply the ones in no list."""
    rng = random.Random(f"bigtwo-deal/{seed}/{hand}")
    deck = list(CARDS)
    rng.shuffle(deck)
    k = rules.hand_size
    return [deck[i * k : (i + 1) * k] for i in range(rules.players)]


class Game:
    """One match.  ``Game(rules, seed=7)`` deals the first hand from the seed;
    ``Game.from_hands(rules, hands)`` starts from explicit hands (tests, duplicate deals).
    """

    turn: int
    """The seat to move."""
    mover_mask: int
    """The cards of the seat to move, as a mask (read by :mod:`bigtwo.legality`)."""
    mover_combos: SeatCombinations
    """The combinations of the seat to move (read by :mod:`bigtwo.legality`)."""

    def __init__(
        self,
        rules: RuleSet,
        seed: int | str = 0,
        *,
        hands: Sequence[Iterable[Any]] | None = None,
        leader: int | None = None,
    ) -> None:
        if not isinstance(rules, RuleSet):
            raise TypeError(f"rules must be a RuleSet, got {type(rules).__name__}")
        self.rules = rules
        self._t = rules._tables
        self.players = rules.players
        self.seed = seed
        self.hand_no = 0
        self.scores = [0] * self.players
        self.penalty_totals = [0] * self.players
        self.results: list[HandResult] = []
        self.history: list[Action] = []
        self._recording = True  # False on a play-out copy (clone(history=False))
        self.match_over = False
        self._fresh_opening = False
        self._start_hand(hands, leader)

    @classmethod
    def from_hands(
        cls,
        rules: RuleSet,
        hands: Sequence[Iterable[Any]],
        leader: int | None = None,
        seed: int | str = 0,
    ) -> Game:
        """A match whose first hand has these cards.  With ``leader`` None the opening rule
        picks the leader (holder of the lowest card dealt, who must lead it); with a
        ``leader`` that seat leads anything.  Later hands are dealt from ``seed``."""
        return cls(rules, seed, hands=hands, leader=leader)

    @classmethod
    def from_observation(
        cls, observation: Observation, hands: Sequence[Iterable[Any] | None], seed: int | str = 0
    ) -> Game:
        """The game ``observation`` sees, with the cards it cannot see dealt as ``hands``
        (OpenSpiel's ``ResampleFromInfostate``, the deal chosen by the caller): a search
        bot's determinization, on which it plays the rest of the hand with the engine.

        ``hands``: every seat's cards *now*, in seat order; the observing seat's entry may
        be ``None`` (its own hand), and every other seat's must be as many cards as it
        holds, none of them seen (see :meth:`Observation.unseen_cards`).  The position —
        the trick and who made it, the seats locked out, the revolution, the opening card,
        the first trick — the history, scores and finished hands are the observation's.
        It must be one given to ``act`` (a hand in play).  Later hands of the match are
        dealt from ``seed`` (the real seed is secret)."""
        obs = observation
        if obs.turn < 0 or not obs.hand:
            raise ValueError("the observation shows no hand in play (one given to act is)")
        n = obs.rules.players
        if len(hands) != n:
            raise ValueError(f"{len(hands)} hands given for {n} players")
        unseen = {int(c) for c in obs.unseen_cards()}
        dealt: list[list[Card]] = []
        for s, cards in enumerate(hands):
            if s == obs.seat:
                mine = list(obs.hand) if cards is None else parse_cards(cards)
                if sorted(mine) != sorted(obs.hand):
                    raise ValueError(f"seat {s}'s hand is not the observation's own hand")
                dealt.append(mine)
                continue
            if cards is None:
                raise ValueError(f"seat {s}: no cards given")
            theirs = parse_cards(cards)
            if len(theirs) != obs.cards_left[s]:
                raise ValueError(
                    f"seat {s} is given {len(theirs)} cards but holds {obs.cards_left[s]}"
                )
            seen = [c for c in theirs if int(c) not in unseen]
            if seen:
                raise ValueError(f"seat {s} is given {seen[0]}, a card that is seen")
            dealt.append(theirs)
        game = cls(obs.rules, seed, hands=dealt, leader=obs.turn)
        game.hand_no = obs.hand_no
        game.scores = list(obs.scores)
        game.penalty_totals = [sum(r.penalties[s] for r in obs.results) for s in range(n)]
        game.results = list(obs.results)
        game.history = list(obs.history)
        game.trick = obs.trick
        plays = [a for a in obs.history if a.hand == obs.hand_no and a.move is not PASS]
        game.last_player = plays[-1].seat if plays else None  # kept after a trick is won
        game._locked = sum(1 << s for s in obs.locked_out)
        game.reversed = obs.reversed
        game.must_include = obs.must_include
        leads = sum(1 for a in plays if a.lead)
        # the first trick lasts until a trick is won: while the first lead is the trick
        game.first_trick = leads == 0 or (leads == 1 and obs.trick is not None)
        return game

    @classmethod
    def resample(cls, observation: Observation, rng: random.Random, seed: int | str = 0) -> Game:
        """:meth:`from_observation` on a deal drawn by ``rng``: the cards ``observation``
        has not seen, shuffled and dealt to the other seats as many as each holds (under 2
        or 3 players, the undealt cards are among them: some are left out)."""
        pool = list(observation.unseen_cards())
        rng.shuffle(pool)
        hands: list[list[Card] | None] = []
        i = 0
        for s, k in enumerate(observation.cards_left):
            if s == observation.seat:
                hands.append(None)
                continue
            hands.append(pool[i : i + k])
            i += k
        return cls.from_observation(observation, hands, seed)

    def clone(self, history: bool = True) -> Game:
        """An independent copy of the match as it stands (OpenSpiel's ``Clone``): moves
        applied to one never change the other, and both play on identically.

        ``history=False``: a *play-out copy*, for a search that plays many hands out from
        one position.  It keeps no history: ``history`` is empty and the moves applied to
        it are not recorded, which spares copying and growing the match's record at every
        copy and move.  Everything else — the hands, the turn, the trick, legal moves,
        results and scores — is kept and played exactly as on a full copy; having no
        record of the hand's moves, it gives no :meth:`observation` (ValueError)."""
        twin = Game.__new__(Game)
        # attribute by attribute, not ``twin.__dict__.update``: asking for ``__dict__``
        # turns the instance's attributes into a plain dict, and every attribute read and
        # write of the copy's play-out is then markedly slower (CPython 3.11+)
        for name, value in vars(self).items():
            setattr(twin, name, value)
        twin.scores = list(self.scores)
        twin.penalty_totals = list(self.penalty_totals)
        twin.results = list(self.results)
        if history and self._recording:
            twin.history = list(self.history)
        else:
            twin.history = []
            twin._recording = False
        twin._masks = list(self._masks)
        twin.counts = list(self.counts)
        twin._combos = [c.copy() for c in self._combos]
        twin._sorted = list(self._sorted)
        twin.mover_combos = twin._combos[self.turn]
        return twin

    # ----- hand set-up ------------------------------------------------------------------
    def _start_hand(self, hands: Sequence[Iterable[Any]] | None, leader: int | None) -> None:
        n = self.players
        if hands is None:
            dealt = deal(self.rules, self.seed, self.hand_no)
        else:
            dealt = self._check_hands(hands)
        self._masks = [0] * n
        for s, cards in enumerate(dealt):
            for c in cards:
                self._masks[s] |= 1 << c
        self.counts = [len(cards) for cards in dealt]
        self._combos = [SeatCombinations(self.rules) for _ in range(n)]
        self._sorted: list[tuple[Card, ...] | None] = [None] * n
        self.trick: Combination | None = None
        """The play to beat, or ``None`` when the seat to move leads."""
        self.last_player: int | None = None
        self._locked = 0
        self.first_trick = True
        self.reversed = False
        self.hand_over = False
        self.winner: int | None = None
        self.must_include: Card | None = None
        if leader is not None:
            if not (isinstance(leader, int) and 0 <= leader < n):
                raise ValueError(f"leader must be a seat 0..{n - 1}, got {leader!r}")
            self._give_turn(leader)
        elif opening_card_required(self.rules, self.hand_no, self._fresh_opening):
            strength = self._t.strength
            lowest = min((c for cards in dealt for c in cards), key=strength.__getitem__)
            self.must_include = CARDS[lowest]
            self._give_turn(next(s for s in range(n) if self._masks[s] >> lowest & 1))
        else:
            self._give_turn(self.results[-1].winner)

    def _check_hands(self, hands: Sequence[Iterable[Any]]) -> list[list[Card]]:
        n = self.players
        if len(hands) != n:
            raise ValueError(f"{len(hands)} hands given for {n} players")
        seen: set[int] = set()
        out = []
        for s, cards in enumerate(hands):
            parsed = parse_cards(cards)
            if not parsed:
                raise ValueError(f"seat {s} is dealt no cards")
            for c in parsed:
                if c in seen:
                    raise ValueError(f"card {c} is dealt twice")
                seen.add(c)
            out.append(parsed)
        return out

    def next_hand(
        self, hands: Sequence[Iterable[Any]] | None = None, independent: bool = False
    ) -> None:
        """Deal the next hand of the match (from the seed, or the given hands).

        ``independent``: play it like a first hand (the holder of the lowest card leads it
        and must lead that card), as duplicate play needs so that a deal's rotations stay
        comparable."""
        if not self.hand_over:
            raise IllegalMoveError("the hand is still being played")
        if self.match_over:
            raise IllegalMoveError("the match is over")
        self.hand_no += 1
        self._fresh_opening = independent
        self._start_hand(hands, None)

    # ----- what a seat may see ----------------------------------------------------------
    def hand(self, seat: int) -> tuple[Card, ...]:
        """Seat's cards, weakest first."""
        cached = self._sorted[seat]
        if cached is None:
            cards = cards_from_mask(self._masks[seat])  # in id order
            if self._t.suit_pos != _ID_ORDER:  # else id order is strength order: sorted
                cards.sort(key=self._t.strength.__getitem__)
            cached = tuple(cards)
            self._sorted[seat] = cached
        return cached

    @property
    def hands(self) -> list[tuple[Card, ...]]:
        """Every seat's cards, weakest first: the whole deal, which only the referee and tests
        may see (a bot gets an :class:`Observation`)."""
        return [self.hand(s) for s in range(self.players)]

    @property
    def cards_left(self) -> tuple[int, ...]:
        """The number of cards each seat holds: public information, the same on every seat's
        observation."""
        return tuple(self.counts)

    def cards_mask(self, seat: int) -> int:
        """Seat's cards as a mask (bit ``c`` set for card id ``c``): what a search bot
        reads at speed."""
        return self._masks[seat]

    @property
    def locked_out(self) -> frozenset[int]:
        """Seats that passed and may not play again in this trick (``pass_locks_out``)."""
        return frozenset(s for s in range(self.players) if self._locked >> s & 1)

    def observation(self, seat: int) -> Observation:
        """What ``seat`` may know, and nothing else (see :class:`Observation`)."""
        if not self._recording:
            raise ValueError(
                "a play-out copy (clone(history=False)) keeps no history: it has no observation"
            )
        return Observation.of(self, seat)

    # ----- legality (every rule in bigtwo.legality; the game is its Turn) ---------------
    def _give_turn(self, seat: int) -> None:
        """Make ``seat`` the seat to move.  Every change of turn goes through here, so
        ``mover_mask`` and ``mover_combos`` (what the rules read of the seat to move, kept as
        attributes because they are read at every turn) always belong to ``turn``.
        (:meth:`_move`, run at every move, sets the same three inline.)"""
        self.turn = seat
        self.mover_mask = self._masks[seat]
        self.mover_combos = self._combos[seat]

    @property
    def next_seat(self) -> int:
        """The seat that plays after the seat to move."""
        return (self.turn + 1) % self.players

    @property
    def next_holds_one(self) -> bool:
        """The next seat holds exactly one card (the alert rule's trigger)."""
        return self.counts[(self.turn + 1) % self.players] == 1

    def legal_moves(self) -> list[Move]:
        """Every move the seat to play may make; :data:`PASS` is in the list when legal.
        Empty once the hand is over."""
        if self.hand_over:
            return []
        return select_moves(self)

    @property
    def lone_two_lifted(self) -> bool:
        """``no_lone_two_finish`` is lifted because every seat holds a lone 2 (a public
        flag of the referee's turn requests; see :func:`bigtwo.legality.lone_two_lifted`)."""
        return lone_two_lifted(self.rules, self._masks)

    def validate(self, move: Any) -> Move:
        """``move`` as the engine sees it (a Combination of these rules, or PASS), ready to
        apply; IllegalMoveError saying why when it is not legal now."""
        return self._check(move)

    def refusal(self, move: Any) -> str | None:
        """Why ``move`` would be refused now, or ``None`` when it is legal."""
        try:
            self._check(move)
        except IllegalMoveError as exc:
            return exc.reason
        return None

    def _check(self, move: Any) -> Combination | PassMove:
        """The move as the engine sees it, or IllegalMoveError saying why not."""
        s = self.turn
        if self.hand_over:
            raise IllegalMoveError(
                "the match is over" if self.match_over else "the hand is over", s, move
            )
        if (
            move is PASS
            or isinstance(move, PassMove)
            or (isinstance(move, str) and move.strip().lower() == "pass")
        ):
            why = pass_refusal(self)
            if why:
                raise IllegalMoveError(why, s, move)
            return PASS
        if type(move) is Combination and move.rules is self.rules:
            combo = move  # the commonest case: a move from legal_moves()
        else:
            combo = self._as_combination(s, move)
        why = play_refusal(self, combo)
        if why:
            raise IllegalMoveError(why, s, move)
        return combo

    def _as_combination(self, s: int, move: Any) -> Combination:
        if isinstance(move, Combination):
            if move.rules is self.rules:
                return move
            ids = tuple(int(c) for c in move.cards)
        else:
            try:
                ids = tuple(int(c) for c in parse_cards(move))
            except CardParseError as exc:
                raise IllegalMoveError(str(exc), s, move) from None
            except TypeError:
                raise IllegalMoveError(
                    f"not a move: {move!r} (give cards, a combination or PASS)", s, move
                ) from None
        if not ids:
            raise IllegalMoveError("a play of no cards (to pass, play PASS)", s, move)
        if len(set(ids)) != len(ids):
            twice = next(c for c in ids if ids.count(c) > 1)
            raise IllegalMoveError(f"the play holds {CARDS[twice]} twice", s, move)
        cat = self._t.category_of(ids)
        if cat is None:
            raise IllegalMoveError(
                f"{format_cards(ids)} is not a valid combination under these rules", s, move
            )
        return self._t.make(ids, cat)

    # ----- applying moves ---------------------------------------------------------------
    def apply(self, move: Any) -> None:
        """Play ``move`` for the seat whose turn it is: :data:`PASS`, a combination, or
        cards (``"3D 3C"``, a list of cards).  An illegal move raises
        :class:`IllegalMoveError` and leaves the state untouched."""
        checked = self._check(move)
        self._move(self.turn, checked)

    def apply_legal(self, move: Move) -> None:
        """Play ``move``, known to be legal now, without checking it again: the fast path
        of a search's play-outs (see :meth:`clone` ``history=False``).  ``move`` is
        :data:`PASS` or a combination of these rules, one of :meth:`legal_moves` — or one
        that :meth:`validate` returned — for this very position.

        Only what keeps the state whole is checked (the hand is in play, the seat holds
        the cards: IllegalMoveError); a move that breaks a rule of play (does not beat
        the trick, leaves out the opening card, passes when passing is not allowed, ...)
        is *not* refused, and what follows is no longer a game of these rules.  A move
        from a player or any other outside source goes through :meth:`apply`."""
        if self.hand_over:
            raise IllegalMoveError("the hand is over", self.turn, move)
        if move is not PASS and (
            not isinstance(move, Combination)
            or move.mask & ~self.mover_mask
            or move.rules is not self.rules
        ):
            raise IllegalMoveError("not a move the seat holds under these rules", self.turn, move)
        self._move(self.turn, move)

    def _move(self, s: int, move: Move) -> None:
        """Seat ``s`` (the seat to move) makes ``move``, already known legal: the one state
        transition, behind both :meth:`apply` and :meth:`apply_legal`.  One flat function,
        as it runs at every move of every play-out of a search."""
        n = self.players
        if move is PASS:
            if self.trick is None:  # handing the lead on (no_lone_two_finish)
                if self._recording:
                    self.history.append(Action(self.hand_no, s, PASS, True))
                # docs/rules.md §4.10, §11.8: the next player "leads anything".  The
                # opening card, if this was the opening lead, stays in the hand of the seat
                # that handed the lead on, so requiring it would leave the new leader
                # without a move.
                self.must_include = None
                self._give_turn((s + 1) % n)
                return
            if self._recording:
                self.history.append(Action(self.hand_no, s, PASS, False))
            if self.rules.pass_locks_out:  # docs/rules.md §4.3; skipped below while locked
                self._locked |= 1 << s
        else:
            combo: Combination = move  # type: ignore[assignment]
            self._masks[s] ^= combo.mask
            counts = self.counts
            counts[s] -= len(combo.cards)
            self._sorted[s] = None
            if self._recording:
                self.history.append(Action(self.hand_no, s, combo, self.trick is None))
            self.must_include = None
            if self.rules.revolution and flips_order(self.rules, combo):
                self.reversed = not self.reversed
            self.trick = combo
            self.last_player = s
            if counts[s] == 0:
                self._end_hand(s)
                return
        # the turn passes on, skipping seats locked out of the trick
        last = self.last_player
        nxt = (s + 1) % n
        locked = self._locked
        while nxt != last and locked >> nxt & 1:
            nxt = (nxt + 1) % n
        if nxt == last:  # everyone still able to respond has passed: trick won
            self.trick = None
            self._locked = 0
            self.first_trick = False
        # _give_turn(nxt), inline
        self.turn = nxt
        self.mover_mask = self._masks[nxt]
        self.mover_combos = self._combos[nxt]

    def _end_hand(self, winner: int) -> None:
        n = self.players
        remaining = tuple(self.hand(s) for s in range(n))
        penalties, scores = hand_scores(self.rules, winner, remaining)
        for s in range(n):
            self.scores[s] += scores[s]
            self.penalty_totals[s] += penalties[s]
        team = winning_team(self.rules, winner)
        self.results.append(
            HandResult(
                hand=self.hand_no,
                winner=winner,
                cards_left=tuple(self.counts),
                remaining=remaining,
                penalties=tuple(penalties),
                scores=tuple(scores),
                cumulative=tuple(self.scores),
                winning_team=team,
            )
        )
        self.hand_over = True
        self.winner = winner
        self.trick = None
        self._locked = 0
        self.match_over = match_over(
            self.rules, len(self.results), self.scores, self.penalty_totals
        )

    # ----- match results ----------------------------------------------------------------
    def places(self) -> list[int]:
        """Each seat's place by cumulative score (1 = best); ties share the place."""
        return [1 + sum(1 for o in self.scores if o > sc) for sc in self.scores]

    def play_out(self, choose: Any) -> None:
        """Play the rest of the match, asking ``choose(game)`` for every move."""
        while True:
            while not self.hand_over:
                self.apply(choose(self))
            if self.match_over:
                return
            self.next_hand()
