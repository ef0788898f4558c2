"""Plans its hand into combinations, keeps its top cards for winning the lead back, and
reacts to opponents' card counts.

The plan: the five-card hands that leave the fewest units behind, then triples, pairs and
singles from what is left.  Leading, it plays the planned unit with the lowest top card,
big units counting as lower (they shed more cards).  Following, it plays the weakest
planned unit that beats the trick; when none does, it breaks a unit (a pair, a triple, a
five-card hand: whichever costs least) rather than give up the lead for good.  It keeps its
top cards (a king, ace or 2 single or pair, a bomb) until an opponent is close to going
out or it is close itself, and it counts cards: when every unit but one is sure to win its
trick (nothing unseen beats it), it plays them and goes out.

Two rules come from how a field that always plays when it can (lowest-first) loses:

- the endgame: a unit anyone can beat loses its trick, and the next lead is someone's
  lowest single, which a single of mine can still beat to go out, a pair never.  So with
  four units or fewer it leads its sets first, and with two it leads the set (it may win
  and leave the single to go out on) or the lower single, keeping the higher one;
- the lead is worth a card it would otherwise keep: when five or more cards wait in sets
  that can lose and it holds a single nobody can beat, it follows with its lowest top
  card — it takes the trick, or draws their top cards out and leaves its own the boss.

Measured against three lowest-first players (bench/strength.py, cards-left points per
hand, 2000 hands): from +5.4 to +6.2 (hk), +5.2 to +5.8 (family), +5.2 to +6.0 (pusoy).

Everything compares cards by rank and ``rules.strength`` (never a key of one size against
a key of another), and everything it knows about legality comes from
``observation.legal_moves`` and ``rules.legal_plays``, so it plays every preset.
"""

from bigtwo import BOMBS, PASS, Bot, Rank

# a unit's size counts as this many ranks lower when choosing what to lead: a five-card
# hand goes out early, a pair before a single of the same rank
SIZE_BONUS = {1: 0, 2: 1, 3: 2, 5: 6}
# with this many units or fewer left, lead the sets (pairs, triples, five-card hands) first
ENDGAME_UNITS = 4
# a card nobody can beat takes the lead when this many cards wait in sets that can lose
SETS_WORTH_A_LEAD = 5


def leftover_units(cards):
    """How many units (singles, pairs, triples) ``cards`` make, counted by rank alone."""
    counts = {}
    for c in cards:
        counts[c.rank] = counts.get(c.rank, 0) + 1
    return sum(2 if n == 4 else 1 for n in counts.values())


def plan(observation):
    """Split the hand into non-overlapping combinations: the five-card hands that leave
    the fewest units behind (and then the weakest), then triples, pairs, singles."""
    rules = observation.rules
    left = list(observation.hand)
    units = []
    while len(left) >= 5:
        fives = [c for c in rules.legal_plays(left) if c.size == 5 and c.category not in BOMBS]
        if not fives:
            break
        best_rest = leftover_units(left)
        best = None
        for five in fives:
            held = five.mask
            rest = leftover_units([c for c in left if not held >> c & 1])
            if rest + 1 < best_rest or (rest + 1 == best_rest and best is None):
                best, best_rest = five, rest + 1
        if best is None:  # no five-card hand makes the hand simpler
            break
        units.append(best)
        left = [c for c in left if not best.mask >> c & 1]
    used = 0
    for u in units:
        used |= u.mask
    for size in (3, 2, 1):  # weakest first, each card in one unit
        for combo in rules.legal_plays(left):
            if combo.size == size and not combo.mask & used:
                units.append(combo)
                used |= combo.mask
    return units


class HeuristicBot(Bot):
    name = "heuristic"

    def top_rank(self, observation, move):
        """The rank of the move's strongest card (under a revolution, counted downwards)."""
        strength = observation.rules.strength
        if observation.reversed:
            return Rank.TWO - min(c.rank for c in move.cards)
        return max(move.cards, key=strength).rank

    def is_control(self, observation, move):
        """A top card: a single or pair of kings, aces or 2s, or a bomb."""
        if move.category in BOMBS:
            return True
        return move.size <= 2 and self.top_rank(observation, move) >= Rank.KING

    def danger(self, observation):
        """Fewest cards any opponent holds (partners are no danger under teams)."""
        rules = observation.rules
        me = observation.seat
        return min(
            n
            for s, n in enumerate(observation.cards_left)
            if s != me and not (rules.teams and s % 2 == me % 2)
        )

    def bosses(self, observation):
        """The strongest single, pair and triple key anyone else could still hold (None
        when no one can hold one); a unit above it wins its trick for sure."""
        strength = observation.rules.strength
        best = {1: None, 2: None, 3: None}
        by_rank = {}
        for c in observation.unseen_cards():  # weakest first
            by_rank.setdefault(c.rank, []).append(c)
        for rank, cards in by_rank.items():
            top = strength(cards[-1])
            for size, key in ((1, top), (2, top), (3, int(rank))):
                if len(cards) >= size and (best[size] is None or key > best[size]):
                    best[size] = key
        return best

    def is_boss(self, observation, move, best):
        """No one else can beat ``move`` (singles, pairs, triples; no revolution, no bombs
        on small tricks)."""
        if move.size not in best or observation.reversed:
            return False
        if observation.rules.bombs == "anywhere":
            return False
        return best[move.size] is None or move.key > best[move.size]

    def lead_order(self, observation, move):
        strength = observation.rules.strength
        top = max(strength(c) for c in move.cards)
        return (self.top_rank(observation, move) - SIZE_BONUS[move.size], top)

    def act(self, observation):
        legal = observation.legal_moves
        plays = [m for m in legal if m is not PASS]
        if not plays:
            return PASS
        if len(plays) == 1 and PASS not in legal:
            return plays[0]
        units = plan(observation)
        unit_masks = {u.mask for u in units}
        mine = len(observation.hand)
        danger = self.danger(observation)
        in_plan = [m for m in plays if m.mask in unit_masks]
        order = lambda m: self.lead_order(observation, m)  # noqa: E731
        best = self.bosses(observation)
        if observation.trick is None:  # leading
            pool = in_plan or plays
            bosses = [m for m in pool if self.is_boss(observation, m, best)]
            if bosses and len(units) - len(bosses) <= 1:  # they cannot stop me going out
                return min(bosses, key=order)
            if len(pool) > 1 and mine == sum(m.size for m in pool) and len(units) == 2:
                # two units left: lead a pair (or bigger) while it may still win its trick,
                # else the lower single, and keep the higher one to beat the next lead with
                multi = [m for m in pool if m.size > 1]
                return max(multi, key=order) if multi else min(pool, key=order)
            if len(units) <= ENDGAME_UNITS and danger > 2:
                # near the end, lead the sets first: a single can still go out on someone
                # else's lead, a pair or five-card hand only on mine
                sets = [m for m in pool if m.size > 1 and not self.is_control(observation, m)]
                if sets:
                    return min(sets, key=order)
            if danger == 1:  # a single would let them out: lead a bigger unit, or a top card
                bigger = [m for m in pool if m.size > 1]
                return min(bigger, key=order) if bigger else max(pool, key=order)
            if danger == 2:
                bigger = [m for m in pool if m.size != 2]
                pool = bigger or pool
            cheap = [m for m in pool if not self.is_control(observation, m)]
            return min(cheap or pool, key=order)
        # following
        trick_owner = observation.trick_owner
        partner = observation.rules.teams and trick_owner is not None
        if partner and trick_owner % 2 == observation.seat % 2 and danger > 2:
            return PASS if PASS in legal else min(plays, key=order)  # my partner's trick
        if danger == 1 and observation.trick.size == 1:  # stop a last card going out
            return max(plays, key=order)
        bosses = [m for m in in_plan if self.is_boss(observation, m, best)]
        if bosses and len(units) - len(bosses) <= 1:  # win the lead and go out
            return min(bosses, key=order)
        cheap = [m for m in in_plan if not self.is_control(observation, m)]
        if cheap:
            return min(cheap, key=order)
        controls = [m for m in in_plan if self.is_control(observation, m)]
        if controls and (danger <= 4 or mine <= 5):
            return min(controls, key=order)
        # sets wait for a lead of mine and I hold a card nobody can beat: play my lowest
        # top card (it takes the trick, or draws out theirs and leaves mine the boss)
        sets = sum(u.size for u in units if u.size > 1 and not self.is_boss(observation, u, best))
        sure = any(self.is_boss(observation, m, best) for m in controls)
        if sure and sets >= SETS_WORTH_A_LEAD:
            return min(controls, key=order)
        # break a unit: the weakest non-top play, from whatever unit it costs least to break
        broken = [m for m in plays if not self.is_control(observation, m)]
        if broken:
            return min(broken, key=lambda m: (self.breaks(m, units), order(m)))
        if danger <= 3 or mine <= 4:
            return min(plays, key=order)
        return PASS if PASS in legal else min(plays, key=order)

    def breaks(self, move, units):
        """How many planned cards become loose if ``move`` is played."""
        return sum(u.size for u in units if u.mask & move.mask and u.mask != move.mask)
