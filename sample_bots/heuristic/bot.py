"""Plans its hand into combinations, keeps control cards (2s, aces, bombs) for the end,
and reacts to opponents' card counts.

The plan: five-card hands first (they shed the most cards), then triples, pairs and
singles from what is left.  Leading, it plays the weakest planned unit, preferring big
units while it holds many cards.  Following, it plays the weakest legal play that does not
break a planned unit, and spends a control card only when an opponent is close to going
out or when it is close itself.
"""

from bigtwo import BOMBS, PASS, Bot, Rank


def plan(observation):
    """Split the hand into non-overlapping combinations, greedily: bigger first."""
    rules = observation.rules
    left = list(observation.hand)
    units = []
    for size in (5, 3, 2):
        while True:
            options = [c for c in rules.legal_plays(left) if c.size == size]
            if not options:
                break
            best = min(options, key=lambda c: c.key)
            units.append(best)
            held = set(best.cards)
            left = [c for c in left if c not in held]
    units += [c for c in rules.legal_plays(left) if c.size == 1]
    return units


class HeuristicBot(Bot):
    name = "heuristic"

    def is_control(self, observation, move):
        rules = observation.rules
        top = max(move.cards, key=rules.strength)
        return top.rank >= Rank.ACE or move.category in BOMBS

    def danger(self, observation):
        """Fewest cards any opponent holds."""
        return min(n for s, n in enumerate(observation.cards_left) if s != observation.seat)

    def act(self, observation):
        legal = observation.legal_moves
        plays = [m for m in legal if m is not PASS]
        if not plays:
            return PASS
        if len(plays) == 1 and PASS not in legal:
            return plays[0]
        units = {c.mask for c in plan(observation)}
        mine = len(observation.hand)
        danger = self.danger(observation)
        in_plan = [m for m in plays if m.mask in units]
        if observation.trick is None:  # leading
            pool = in_plan or plays
            if danger <= 2:  # lead what they cannot answer: big units or strong singles
                return max(pool, key=lambda m: (m.size, m.key))
            return min(pool, key=lambda m: (-m.size if mine > 6 else 0, m.key))
        # following
        cheap = [m for m in in_plan if not self.is_control(observation, m)]
        if cheap:
            return min(cheap, key=lambda m: m.key)
        if danger <= 3 or mine <= 4:
            pool = in_plan or plays
            return min(pool, key=lambda m: m.key)
        return PASS if PASS in legal else min(plays, key=lambda m: m.key)
