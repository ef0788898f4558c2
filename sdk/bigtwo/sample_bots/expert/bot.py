"""A search bot: determinized Monte Carlo over the hidden cards, with a model of each
other seat.

At each real decision it

1. deals the cards it has not seen to the other seats, at random but consistently with
   everything public (cards played, card counts, the opening card: under 2 or 3 players a
   card weaker than the opening card was never dealt), and weighs each deal by the passes
   seen (a lowest-first seat that passed on a single or a pair held nothing to beat it: a
   deal that says otherwise is kept only now and then);
2. plays every candidate move on that deal and the rest of the hand out on the engine
   itself (``Game.from_observation`` builds the deal's game from the observation,
   ``Game.clone(history=False)`` copies it for each candidate, ``Game.apply`` plays the
   candidate and ``Game.apply_legal`` the policies' moves, legal by construction: every
   option of docs/rules.md, with no copy of the rules here), each seat by a policy:

   - its own seat plays the heuristic bot's way (:class:`Planner`: the hand split into
     five-card hands, triples, pairs and singles; the lowest unit led, top cards held,
     sure winners played to go out);
   - another seat is modelled by what it has shown: *lowest-first* (its weakest play that
     beats the trick, its weakest single to lead) until it is seen doing otherwise, then
     *in units* (:meth:`Sim.in_units`: whole ranks led and followed, top cards kept). A seat
     shows it by its public moves (it led more than one card, passed on a single it could
     beat, ...: :func:`not_lowest_first`), in this hand or an earlier one of the match.
     A seat modelled in units passes by choice: its passes are no evidence;
3. scores the finished hand with the rule set's own scoring (``bigtwo.hand_scores``:
   hk, family, flat, pusoy, twos doubled, teams) for its own seat;

and plays the move with the best mean score over as many deals as its time budget allows
(the same deals for every candidate, so the comparison is fair).

Budget per move: 100 ms by default, never more than half the referee's move allowance
(``Bot.move_ms``, told at match start); ``EXPERT_BUDGET_MS`` overrides it (benchmarks).
``EXPERT_ROLLOUTS=N`` plays exactly N deals per move instead, whatever the clock: with the
same seed (``EXPERT_SEED``, default 0, or ``ExpertBot(seed=...)``) a match then repeats
move for move.  Nothing is kept between matches: the random generator and the models are
made afresh at every match start, from the seed and the seat.  For experiments,
``EXPERT_OPP=low|units|random`` models every other seat one way and
``EXPERT_SELF=default`` plays its own seat with the default policy.
"""

from __future__ import annotations

import gc
import os
import random
import time
from bisect import bisect_right

from bigtwo import BOMBS, PASS, Bot, Game
from bigtwo.cards import CARDS, cards_from_mask
from bigtwo.combos import reversed_key

DEFAULT_BUDGET_MS = 100
TWO = 12
# candidates when leading: at most this many singles (the weakest, plus the strongest)
LEAD_SINGLES = 4
# and at most this many five-card hands (the weakest of each category first)
LEAD_FIVES = 8
# what another seat is modelled as: lowest-first, playing in units, or at random
LOW, UNITS, RANDOM = 0, 1, 2
# a deal contradicting a pass seen is kept with this probability (per contradiction)
PASS_EVIDENCE = 0.15


class Sim:
    """One hand from the current position on, on one deal of the hidden cards: an engine
    game (``game``, the deal's own copy) that the policies below play out, each move
    applied by the engine (``Game.apply``: exactly the referee's rules).  The policies read
    the position from the game; their own tables (each seat's combinations, made once per
    deal from the deal's cards) are kept here."""

    __slots__ = ("dealt", "fast", "game", "groups", "kinds", "me", "n", "planner", "rng", "rules",
                 "tables")  # fmt: skip

    def __init__(self, game, masks, groups, fast):
        self.game = game
        self.fast = fast
        self.rules = game.rules
        self.tables = game.rules.tables
        self.n = game.rules.players
        self.dealt = masks  # the deal's cards: what each seat's combinations are made from
        self.groups = groups  # per seat: [singles, pairs, triples, fives or None]
        self.planner = None  # my own seat's plan (None: the default policy)
        self.kinds = None  # per seat: LOW, UNITS or RANDOM (None: every seat LOW)
        self.rng = None
        self.me = -1

    # the position, as the engine keeps it
    @property
    def trick(self):
        return self.game.trick

    @property
    def turn(self):
        return self.game.turn

    @property
    def reversed(self):
        return self.game.reversed

    @property
    def first_trick(self):
        return self.game.first_trick

    @property
    def must_include(self):
        return self.game.must_include

    @property
    def counts(self):
        return self.game.counts

    def group(self, seat, index):
        g = self.groups[seat]
        if g is None:  # made on first need, from the deal's cards, and kept for the deal
            cards = [CARDS[c] for c in range(52) if self.dealt[seat] >> c & 1]
            made = self.tables.groups(cards, False)
            g = self.groups[seat] = [*made, None, *([c.key for c in x] for x in made), None]
        if g[index] is None:  # five-card hands: made when first needed, from the deal's
            # cards (shared by every rollout on this deal; held() narrows them)
            g[3] = self.tables.fives([c for c in range(52) if self.dealt[seat] >> c & 1])
            g[7] = [c.key for c in g[3]]
        return g[index]

    def weakest_beating(self, seat, trick):
        """The seat's weakest held combination of the trick's size that beats it."""
        hand = self.game.cards_mask(seat)
        size = len(trick.cards)
        if size == 1 and not self.game.reversed:  # the commonest case, on masks
            above = hand & self.fast.stronger[trick.key]
            if not above:
                return None
            if seat == self.me:  # rather a loose card than one of a set
                loose = above & ~self.fast.in_sets(hand)
                return self.fast.weakest(loose or above)
            return self.fast.weakest(above)
        group = self.group(seat, 3 if size == 5 else size - 1)
        if self.game.reversed:
            tk = reversed_key(trick)
            best = None
            for c in group:
                if c.mask & hand == c.mask:
                    k = reversed_key(c)
                    if k > tk and (best is None or k < best[0]):
                        best = (k, c)
            return best[1] if best else None
        index = 3 if size == 5 else size - 1
        for i in range(bisect_right(self.groups[seat][index + 4], trick.key), len(group)):
            c = group[i]
            if c.mask & hand == c.mask:
                return c
        return None

    def held(self, seat, index):
        hand = self.game.cards_mask(seat)
        return [c for c in self.group(seat, index) if c.mask & hand == c.mask]

    def bombs(self, seat):
        """The seat's bombs (under ``bombs="anywhere"`` they beat any single, pair, triple)."""
        return [c for c in self.held(seat, 3) if c.category in BOMBS]

    def strongest_single(self, seat):
        singles = self.held(seat, 0)
        if self.game.reversed:
            return max(singles, key=reversed_key)
        return singles[-1]

    def lone_two_blocks(self, seat):
        if not self.rules.no_lone_two_finish:
            return False
        masks = [self.game.cards_mask(s) for s in range(self.n)]
        lone = [m != 0 and m & (m - 1) == 0 and m.bit_length() > 4 * TWO for m in masks]
        return lone[seat] and not all(lone)

    def policy(self, seat):
        """The default policy: lead the weakest single (the opening card when required),
        follow with the weakest play that beats the trick, pass only without one."""
        rules = self.rules
        trick = self.game.trick
        if trick is None:
            if self.lone_two_blocks(seat):
                return PASS
            if self.game.must_include is not None:
                return self.tables.classify((int(self.game.must_include),))
            if rules.alert_rule and self.game.counts[(seat + 1) % self.n] == 1:
                for index in (1, 2):
                    held = self.held(seat, index)
                    if held:
                        return held[0]
                return self.strongest_single(seat)
            if self.game.reversed:
                return min(self.held(seat, 0), key=reversed_key)
            if seat == self.me and self.planner is not None:
                return self.planned(seat)
            if self.kinds is not None and self.kinds[seat]:
                if self.kinds[seat] == RANDOM:
                    return self.at_random(seat)
                return self.in_units(seat)
            low = self.fast.weakest(self.game.cards_mask(seat))
            if seat == self.me:  # shed the weakest card with the most company
                bit = low.mask
                hand = self.game.cards_mask(seat)
                for index in (3, 2, 1):
                    for c in self.group(seat, index):
                        if c.mask & bit and c.mask & hand == c.mask:
                            return c
            return low
        size = len(trick.cards)
        if size == 1 and rules.alert_rule and self.game.counts[(seat + 1) % self.n] == 1:
            top = self.strongest_single(seat)
            if rules.beats(top, trick, self.game.reversed):
                return top
            play = None
        elif seat == self.me and self.planner is not None and not self.game.reversed:
            return self.planned(seat)
        elif self.kinds is not None and self.kinds[seat] == RANDOM:
            return self.at_random(seat)
        elif self.kinds is not None and self.kinds[seat] and size < 5 and not self.game.reversed:
            return self.in_units(seat)
        else:
            play = self.weakest_beating(seat, trick)
        if play is None and size < 5 and rules.bombs == "anywhere":
            bombs = self.bombs(seat)
            if bombs:
                play = bombs[0]
        return PASS if play is None else play

    def danger(self, seat):
        """The fewest cards an opponent of ``seat`` holds (partners are none under teams)."""
        counts = self.game.counts
        if self.rules.teams:
            return min(counts[(seat + 1) % self.n], counts[(seat + 3) % self.n])
        low = min(counts)
        if counts[seat] != low:  # the commonest case: the seat itself is not the fewest
            return low
        return min(counts[:seat] + counts[seat + 1 :])

    def is_boss(self, seat, combo):
        """No opponent of ``seat`` holds a play of the same size that beats ``combo``."""
        size = len(combo.cards)
        if size == 5 or self.rules.bombs == "anywhere":
            return False
        stronger = self.fast.stronger
        teams = self.rules.teams
        for s in range(self.n):
            if s == seat or (teams and s % 2 == seat % 2):
                continue
            hand = self.game.cards_mask(s)
            if size == 1:
                if hand & stronger[combo.key]:
                    return False
                continue
            if size == 2:
                if self.fast.pair_above(hand, combo.key):
                    return False
                continue
            for r in range(combo.key + 1, 13):
                if (hand >> (4 * r) & 15).bit_count() >= 3:
                    return False
        return True

    def planned(self, seat):
        """My own seat's play: the heuristic bot's way, on its plan of the hand (a unit
        is a planned five-card hand, triple, pair or single; top cards are held back)."""
        units = self.planner.units(self.game.cards_mask(seat))
        danger = self.danger(seat)
        trick = self.game.trick
        if trick is None:
            bosses = [u for u in units if self.is_boss(seat, u[2])]
            if bosses and len(units) - len(bosses) <= 1:  # they cannot stop me going out
                return bosses[0][2]
            if danger == 1:  # a single would let them out
                for u in units:
                    if len(u[2].cards) > 1:
                        return u[2]
                return units[-1][2]
            pool = units
            if danger == 2:
                pool = [u for u in units if len(u[2].cards) != 2] or units
            for u in pool:
                if not u[1]:
                    return u[2]
            return pool[0][2]
        size = len(trick.cards)
        key = trick.key
        mine = self.game.counts[seat]
        if danger == 1 and size == 1:  # stop a last card going out
            top = self.strongest_single(seat)
            return top if top.key > key else self.policy_pass(seat)
        beating = [u for u in units if len(u[2].cards) == size and u[2].key > key]
        for u in beating:
            if not u[1]:
                return u[2]
        if beating and (danger <= 4 or mine <= 5):
            return beating[0][2]
        play = self.weakest_beating(seat, trick)
        if play is not None and (danger <= 3 or mine <= 4 or not self.planner.control(play)):
            return play
        if play is None and size < 5 and self.rules.bombs == "anywhere":
            bombs = self.bombs(seat)
            if bombs:
                return bombs[0]
        return self.policy_pass(seat, play)

    def in_units(self, seat):
        """Another seat that plays in units (as people and the heuristic bot do, unlike
        lowest-first): it leads its lowest rank as a whole (a pair, a triple), keeps kings,
        aces and 2s, follows with a rank it holds exactly as many of as the trick needs,
        and breaks a set only near the end.  Five-card hands: the default policy."""
        hand = self.game.cards_mask(seat)
        trick = self.game.trick
        danger = self.danger(seat)
        cards = self.game.counts[seat]
        triples = self.rules.allow_triples
        if trick is None:
            best = None
            for r in range(13):
                k = (hand >> 4 * r & 15).bit_count()
                if not k:
                    continue
                if k == 4 or (k == 3 and not triples):
                    k = 2
                if danger == 1 and k == 1:
                    order = 100 - r  # a single would let them out: its strongest
                else:
                    order = r - SIZE_BONUS[k] + (20 if r >= 10 and k <= 2 else 0)
                if best is None or order < best[0]:
                    best = (order, r, k)
            _, r, k = best
            return self.unit(hand >> 4 * r & 15, r, k)
        size = len(trick.cards)
        if size == 1 and danger == 1:
            top = self.strongest_single(seat)
            return top if top.key > trick.key else self.policy_pass(seat)
        low = (trick.key if size == 3 else trick.key >> 2) + 1
        for r in range(low, 13):
            bits = hand >> 4 * r & 15
            if bits.bit_count() == size and (r < 10 or size == 3 or danger <= 4 or cards <= 5):
                return self.unit(bits, r, size)
        play = self.weakest_beating(seat, trick)
        if play is not None and (danger <= 3 or cards <= 4 or play.key >> 2 < 10):
            return play
        return self.policy_pass(seat, play)

    def at_random(self, seat):
        """Another seat that plays a uniformly random legal move (the random sample bot;
        a beginner): any combination it holds to lead, any that beats the trick or a pass
        to follow."""
        trick = self.game.trick
        if trick is None:
            options = [c for index in (0, 1, 2, 3) for c in self.held(seat, index)]
            return self.rng.choice(options)
        size = len(trick.cards)
        held = self.held(seat, 3 if size == 5 else size - 1)
        if self.game.reversed:
            key = reversed_key(trick)
            options = [c for c in held if reversed_key(c) > key]
        else:
            options = [c for c in held if c.key > trick.key]
        if size < 5 and self.rules.bombs == "anywhere":
            options += self.bombs(seat)
        if not (options and self.game.first_trick and self.rules.no_pass_first_trick):
            options.append(PASS)
        return self.rng.choice(options)

    def policy_pass(self, seat, play=None):
        """A pass, unless the first trick forbids one (then ``play``, or any play)."""
        if self.game.first_trick and self.rules.no_pass_first_trick:
            play = play or self.weakest_beating(seat, self.game.trick)
            if play is None and self.rules.bombs == "anywhere" and len(self.game.trick.cards) < 5:
                bombs = self.bombs(seat)
                play = bombs[0] if bombs else None
            if play is not None:
                return play
        return PASS

    def unit(self, bits, r, k):
        """The combination of the ``k`` weakest of the cards ``bits`` of rank ``r``."""
        key = (bits, r, k)
        combo = self.fast.units.get(key)
        if combo is None:
            ids = sorted(
                (4 * r + i for i in range(4) if bits >> i & 1), key=self.tables.strength.__getitem__
            )
            combo = self.fast.units[key] = self.tables.classify(tuple(ids[:k]))
        return combo

    def apply(self, move):
        """Apply ``move`` for the seat to move (the engine refuses an illegal one); the
        hand's winner when it ends."""
        game = self.game
        game.apply(move)
        return game.winner if game.hand_over else None

    def play_out(self):
        """Play the hand to its end with the default policy; the winner.  Every move is
        the policies' own, legal by construction (tests/e2e/test_expert.py checks them
        against ``legal_moves()``), so the engine plays it without checking it again
        (``Game.apply_legal``); the candidate move before it went through ``apply``."""
        game = self.game
        apply = game.apply_legal
        policy = self.policy
        while not game.hand_over:
            apply(policy(game.turn))
        return game.winner


# a unit's size counts as this many ranks lower when choosing what to lead (as the
# heuristic bot counts it): a five-card hand goes out early, a pair before a single
SIZE_BONUS = {1: 0, 2: 1, 3: 2, 5: 6}


def units_left(mask):
    """How many singles, pairs and triples the cards ``mask`` make, by rank alone."""
    n = 0
    while mask:
        k = (mask & 15).bit_count()
        n += 2 if k == 4 else 1 if k else 0
        mask >>= 4
    return n


class Planner:
    """My seat's plan in the play-outs, per hand mask (remembered: the same hands come
    back in every play-out): the five-card hands that leave the fewest units, then
    triples, pairs and singles; each unit as (lead order, is a top card, combination),
    in lead order (the lowest top rank first, bigger units counting lower)."""

    def __init__(self, rules):
        self.tables = rules.tables
        self.strength = self.tables.strength
        self.triples = rules.allow_triples
        self.five = rules.five_card_hands
        self.memo = {}

    def control(self, combo):
        """A top card: a single or pair of kings, aces or 2s, or a bomb."""
        if combo.category in BOMBS:
            return True
        return len(combo.cards) <= 2 and combo.key >> 2 >= 10

    def units(self, mask):
        plan = self.memo.get(mask)
        if plan is None:
            if len(self.memo) > 50_000:
                self.memo.clear()
            plan = self.memo[mask] = self.make(mask)
        return plan

    def make(self, mask):
        strength = self.strength
        classify = self.tables.classify
        combos = []
        left = mask
        if self.five and left.bit_count() >= 5:
            ids = [c for c in range(52) if mask >> c & 1]
            fives = [f for f in self.tables.fives(ids) if f.category not in BOMBS]
            while left.bit_count() >= 5:
                best = None
                best_rest = units_left(left)
                for f in fives:
                    if f.mask & left == f.mask:
                        rest = units_left(left & ~f.mask) + 1
                        if rest < best_rest:
                            best, best_rest = f, rest
                if best is None:
                    break
                combos.append(best)
                left &= ~best.mask
        for r in range(13):
            bits = left >> (4 * r) & 15
            if not bits:
                continue
            ids = sorted((4 * r + i for i in range(4) if bits >> i & 1), key=strength.__getitem__)
            k = len(ids)
            if k == 4:
                parts = [ids[:2], ids[2:]]
            elif k == 3 and not self.triples:
                parts = [ids[:1], ids[1:]]
            else:
                parts = [ids]
            combos.extend(classify(tuple(p)) for p in parts)
        plan = []
        for c in combos:
            top = max(strength[x] for x in c.cards)
            order = ((top >> 2) - SIZE_BONUS[len(c.cards)], top)
            plan.append((order, self.control(c), c))
        plan.sort(key=lambda u: u[0])
        return plan


class Singles:
    """Tables for singles on card masks, per rule set: the cards stronger than each
    strength, each card's single, and the weakest card of a mask."""

    def __init__(self, rules):
        self.rules = rules
        strength = rules.tables.strength
        self.stronger = [sum(1 << c for c in range(52) if strength[c] > k) for k in range(52)]
        self.single = [rules.tables.classify((c,)) for c in range(52)]
        self.by_strength = sorted(range(52), key=strength.__getitem__)
        self.identity = self.by_strength == list(range(52))
        self.rank_masks = [0b1111 << (4 * r) for r in range(13)]
        self.units = {}

    def pair_above(self, hand, key):
        """Whether ``hand`` holds a pair that beats a pair of key ``key`` (its stronger
        card stronger than the key)."""
        above = hand & self.stronger[key]
        return any(above & rm and (hand & rm).bit_count() >= 2 for rm in self.rank_masks)

    def in_sets(self, hand):
        """The cards of ``hand`` whose rank it holds more than once."""
        out = 0
        for rm in self.rank_masks:
            m = hand & rm
            if m & (m - 1):
                out |= m
        return out

    def weakest(self, mask):
        """The single of the weakest card in ``mask`` (not empty)."""
        if self.identity:  # suit order DCHS: strength order is id order
            return self.single[(mask & -mask).bit_length() - 1]
        for c in self.by_strength:
            if mask >> c & 1:
                return self.single[c]
        raise ValueError("no card")


class ExpertBot(Bot):
    name = "expert"

    def __init__(self, seed=None, budget_ms=None, rollouts=None):
        env = os.environ
        self.seed = seed if seed is not None else env.get("EXPERT_SEED", "0")
        if budget_ms is None and env.get("EXPERT_BUDGET_MS"):
            budget_ms = float(env["EXPERT_BUDGET_MS"])
        self.budget_ms = budget_ms
        if rollouts is None and env.get("EXPERT_ROLLOUTS"):
            rollouts = int(env["EXPERT_ROLLOUTS"])
        self.rollouts = rollouts
        self.rng = random.Random(f"expert/{self.seed}")
        self.opening = None
        self.fast = None
        self.planner = None
        self.seat = None
        self.rules = None
        self.shown = []
        self.actions = []
        self.stats = {"deals": 0, "moves": 0}

    # ----- what the other seats are like ------------------------------------------------
    def kinds(self):
        """Per seat, the model of it for the play-outs: in units once a hand of this match
        has shown it is not lowest-first, else lowest-first (``EXPERT_OPP=low``, ``units``
        or ``random`` fixes it for every seat)."""
        fixed = os.environ.get("EXPERT_OPP", "auto")
        if fixed != "auto":
            kind = {"units": UNITS, "random": RANDOM}.get(fixed, LOW)
            return [kind] * len(self.shown) if self.shown else None
        return [UNITS if x else LOW for x in self.shown] if any(self.shown) else None

    def on_event(self, action):
        self.actions.append(action)

    def on_hand_end(self, result):
        """What the hand just ended showed of each other seat, from its public moves (the
        referee does not show a bot the others' cards left)."""
        if self.rules is None or len(self.shown) != self.rules.players:
            return
        actions = [a for a in self.actions if a.hand == result.hand]
        shown = not_lowest_first(self.rules, actions, self.seat)
        self.shown = [a or b for a, b in zip(self.shown, shown, strict=True)]

    # ----- hooks ------------------------------------------------------------------------
    def on_match_start(self, observation):
        self.planner = None
        self.seat = observation.seat
        self.rules = observation.rules
        self.shown = [False] * observation.rules.players  # seats shown not lowest-first
        self.actions = []
        self.rng = random.Random(f"expert/{self.seed}/{observation.seat}")

    def on_hand_start(self, observation):
        self.opening = observation.must_include
        self.actions = []

    # ----- the decision -----------------------------------------------------------------
    def budget(self):
        """Seconds to search this move: the budget asked for, else the default, never
        more than half the referee's allowance (the rest covers messages and start-up)."""
        ms = self.budget_ms if self.budget_ms is not None else DEFAULT_BUDGET_MS
        allowance = getattr(self, "move_ms", None)  # None with an SDK older than Bot.move_ms
        if allowance:
            ms = min(ms, allowance / 2)
        return max(ms, 1.0) / 1000

    def act(self, observation):
        # the search makes many short-lived objects and no cycles: a collection now would
        # only pause it past its deadline
        collecting = gc.isenabled()
        gc.disable()
        try:
            return self.search(observation)
        finally:
            if collecting:
                gc.enable()

    def search(self, observation):
        started = time.perf_counter()
        legal = observation.legal_moves
        if len(legal) == 1:
            return legal[0]
        candidates = self.candidates(observation)
        if len(candidates) == 1:
            return candidates[0]
        deadline = started + self.budget() - 0.002
        if self.fast is None or self.fast.rules != observation.rules:
            self.fast = Singles(observation.rules)
        search = Search(observation, self.opening, self.rng, self.fast)
        if os.environ.get("EXPERT_SELF", "plan") == "plan":
            if self.planner is None or self.planner.tables is not observation.rules.tables:
                self.planner = Planner(observation.rules)
            search.planner = self.planner
        kinds = self.kinds()
        if os.environ.get("EXPERT_OPP", "auto") == "auto":
            deviant = search.deviant(observation)
            if any(deviant):
                kinds = [
                    k or (UNITS if d else LOW)
                    for k, d in zip(kinds or deviant, deviant, strict=True)
                ]
        search.kinds = kinds
        totals = [0.0] * len(candidates)
        deals = 0
        partial = []
        while self.rollouts is None or deals < self.rollouts:
            if self.rollouts is None and time.perf_counter() >= deadline:
                break
            masks = search.sample()
            groups = search.deal_groups(masks)
            world = search.world(masks)
            scores = []
            for move in candidates:
                if self.rollouts is None and time.perf_counter() >= deadline:
                    break
                scores.append(search.rollout(world, masks, groups, move))
            if len(scores) < len(candidates):
                partial = scores
                break
            for i, sc in enumerate(scores):
                totals[i] += sc
            deals += 1
        self.stats["deals"] += deals
        self.stats["moves"] += 1
        if not deals:  # out of time before one whole deal: what the part of it says
            totals = partial or [0.0]
        best = max(range(len(totals)), key=lambda i: (totals[i], -i))
        return candidates[best]

    def candidates(self, observation):
        """The moves worth searching: every legal move, but when leading only the weakest
        singles (and the strongest) and the weakest five-card hands of each category."""
        legal = list(observation.legal_moves)
        if observation.trick is not None:
            return legal
        singles = [m for m in legal if m.size == 1]
        if len(singles) > LEAD_SINGLES:
            singles = singles[: LEAD_SINGLES - 1] + singles[-1:]
        fives = [m for m in legal if m.size == 5]
        if len(fives) > LEAD_FIVES:
            by_cat = {}
            for m in fives:
                by_cat.setdefault(m.category, []).append(m)
            picked = []
            while len(picked) < LEAD_FIVES:
                for lst in by_cat.values():
                    if lst and len(picked) < LEAD_FIVES:
                        picked.append(lst.pop(0))
            fives = picked
        return singles + [m for m in legal if m.size in (2, 3)] + fives


def not_lowest_first(rules, actions, me):
    """Per seat, whether its public moves in ``actions`` (one hand's, in order) show it is
    not lowest-first: it led more than one card, later played a card weaker than a single
    it led, passed on a single it held a stronger card than, or followed a single with a
    card when it held a weaker one that beat it (the cards a seat plays later in the hand,
    it held all along).  Not judged under a revolution, nor under the alert rule while
    the next seat holds one card: they change what lowest-first may play."""
    n = rules.players
    out = [False] * n
    if rules.revolution:
        return out
    strength = rules.tables.strength
    counts = [rules.hand_size] * n
    trick = None  # the play to beat before each action
    for i, a in enumerate(actions):
        s = a.seat
        before = None if a.lead else trick
        alert = rules.alert_rule and counts[(s + 1) % n] == 1
        if a.move is not PASS:
            trick = a.move
            counts[s] -= len(a.move.cards)
        elif a.lead:
            trick = None
        if s == me or out[s] or alert:
            continue
        later = [strength[c] for b in actions[i + 1 :] if b.seat == s for c in b.move.cards]
        if not later:
            continue
        if a.move is PASS:
            out[s] = before is not None and before.size == 1 and max(later) > before.key
        elif a.lead:
            out[s] = a.move.size > 1 or min(later) < strength[a.move.cards[0]]
        elif a.move.size == 1 and before is not None:
            mine = strength[a.move.cards[0]]
            out[s] = any(before.key < x < mine for x in later)
    return out


class Search:
    """The public position of one decision, and deals of the hidden cards for it."""

    def __init__(self, observation, opening, rng, fast):
        self.obs = observation
        self.rng = rng
        rules = observation.rules
        self.rules = rules
        self.tables = rules.tables
        n = rules.players
        self.n = n
        me = observation.seat
        self.me = me
        mine = 0
        for c in observation.hand:
            mine |= 1 << c
        self.mine = mine
        played = 0
        hand_no = observation.hand_no
        actions = [a for a in observation.history if a.hand == hand_no]
        for a in actions:
            played |= a.move.mask
        hidden = ((1 << 52) - 1) & ~mine & ~played
        # under 2 or 3 players the opening card was the lowest dealt: weaker cards never were
        undealt = 0
        total_dealt = rules.hand_size * n
        if opening is not None and total_dealt < 52:
            strength = self.tables.strength
            low = strength[opening]
            for c in range(52):
                if hidden >> c & 1 and strength[c] < low:
                    undealt |= 1 << c
        self.pool = [c for c in range(52) if (hidden & ~undealt) >> c & 1]
        self.counts = list(observation.cards_left)
        self.others = [s for s in range(n) if s != me]
        g = self.tables.groups(observation.hand, rules.five_card_hands)
        if len(g) == 3:
            g.append([])
        self.my_groups = [*g, *([c.key for c in x] for x in g)]
        self.fast = fast
        self.planner = None
        self.kinds = None
        self.stronger = fast.stronger
        self.actions = actions
        self.evidence = self.passes(actions) if not rules.revolution else []

    def deviant(self, observation):
        """Per seat, whether this hand has already shown it is not lowest-first."""
        return not_lowest_first(self.rules, self.actions, self.me)

    def passes(self, actions):
        """(seat, size, key of the trick, cards it played later) for every pass on a
        single or a pair: what a deal must explain."""
        out = []
        trick = None
        for i, a in enumerate(actions):
            if a.move is PASS:
                if trick is not None and trick.size <= 2 and a.seat != self.me:
                    later = 0
                    for b in actions[i + 1 :]:
                        if b.seat == a.seat:
                            later |= b.move.mask
                    out.append((a.seat, trick.size, trick.key, later))
            else:
                trick = a.move
            if a.lead and a.move is not PASS:
                trick = a.move
        return out

    def contradictions(self, masks):
        """How many passes seen the deal ``masks`` contradicts (the seat held a play)."""
        stronger = self.stronger
        kinds = self.kinds
        bad = 0
        for seat, size, key, later in self.evidence:
            if kinds is not None and kinds[seat]:  # it passes by choice, not for want
                continue
            cards = masks[seat] | later
            if size == 1:
                bad += bool(cards & stronger[key])
            else:
                bad += self.fast.pair_above(cards, key)
        return bad

    def sample(self):
        """Every seat's cards on one deal consistent with the public record (masks)."""
        rng = self.rng
        pool = self.pool
        for _ in range(20):
            rng.shuffle(pool)
            masks = [0] * self.n
            masks[self.me] = self.mine
            i = 0
            for s in self.others:
                k = self.counts[s]
                m = 0
                for c in pool[i : i + k]:
                    m |= 1 << c
                masks[s] = m
                i += k
            if not self.evidence:
                return masks
            bad = self.contradictions(masks)
            if not bad or rng.random() < PASS_EVIDENCE**bad:
                return masks
        return masks

    def deal_groups(self, masks):
        """Every seat's combinations on this deal: mine, and a place for each other seat's
        (made when a play-out first needs them, from the deal's cards: :meth:`Sim.group`)."""
        return [self.my_groups if s == self.me else None for s in range(self.n)]

    def world(self, masks):
        """The deal ``masks`` as an engine game: the observation's position and history,
        every other seat holding its cards of the deal (``Game.from_observation``)."""
        return Game.from_observation(self.obs, [cards_from_mask(m) for m in masks])

    def rollout(self, world, masks, groups, move):
        """The rule set's score of this seat after ``move`` and a play-out by the policies
        on a copy of the deal's game ``world`` (``masks``: the deal's cards; ``groups``:
        their combinations, shared by the candidates)."""
        sim = Sim(world.clone(history=False), masks, groups, self.fast)
        sim.me = self.me
        sim.planner = self.planner
        sim.kinds = self.kinds
        sim.rng = self.rng
        winner = sim.apply(move)
        if winner is None:
            sim.play_out()
        return sim.game.results[-1].scores[self.me]  # the engine's scoring of the hand
