"""The round-by-round planner: which groups of entrants a ladder's next round plays.

Pure (standard library only): it sees what the ladder knows of each active entrant — its
rating and that rating's standard error, how many matches it has, whether it is new — and
which pairs have already met, and returns the round's groups.  Seating inside a group (the
rotation of circular orders) and the deals stay :mod:`.planning`'s.

**Small fields keep the old plan.**  When C(n, seats) <= 70 a round is every group once
(so a ladder of up to 8 bots plays exactly as before); with fewer entrants than seats they
repeat in rotation, as :func:`.planning.groups_for` does.

**Large fields: a cover chosen where the doubt is.**  A round seats every active entrant
once (a few twice: the last, short group is filled with the entrants that have played
least), so after r rounds every entrant has about r matches whatever the field's size —
a fixed sample of groups, replayed round after round, left bots unseated for ever — and
the top of the table a second time.  The groups are built in five parts:

1. *Placement.*  A new entrant (or a new version) with a rated field beside it plays its
   first match against opponents drawn from each stratum of the field's rating range (one
   from the top, one from the middle, one from the bottom, …): one match then says roughly
   where it stands, which a group of close-rated opponents at a random level cannot.
2. *Exploration.*  A share (:data:`EXPLORE`) of the others is dealt into random groups,
   the least-met of a few random partitions: every entrant keeps meeting a broad sample of
   the field, so a wrong rating is found out and a contest's comparisons do not decompose
   into strata that never met.
3. *Thompson sampling.*  Every other entrant gets a strength drawn from its rating's
   posterior, N(elo, stderr) (an unrated one from a wide prior around the field's mean),
   the field is sorted by the draws and cut into consecutive groups.  Entrants whose order
   is well known are seldom drawn out of it and meet their neighbours, whom they are least
   certain to beat; those whose intervals overlap (the order uncertain: probability of
   superiority near ½) are drawn in either order and meet each other; a wide interval
   moves its entrant around the table until it settles.  A match between entrants of
   equal strength is also the most informative one: in Plackett–Luce a comparison teaches
   p(1 − p) — a quarter at p = ½, a twentieth at 500 Elo apart.  The group cut short (when
   the pool is not a multiple of ``seats``) is put at a random place below the table's top
   quarter (:data:`SHORT_FROM`), so the cut points move between rounds while the top
   always plays in full groups of its closest rivals.
4. *Bridges.*  If the comparison graph over the active entrants (the pairs in ``met`` and
   this round's groups) is still not connected — the first round of a ladder, or after
   retirements cut it — extra groups link its components in a chain, each seating
   entrants that have only one seat this round: from the first round on every active
   entrant is compared, through some chain of matches, with every other.
5. *Extras at the top.*  :data:`EXTRA_GROUPS` more groups (one) seat a second time the
   entrants at the top of a fresh Thompson draw that have one seat so far: the leaders,
   and whoever may be one of them by the width of its interval.  A contest is decided at
   the top, where the order is closest.

The contract, precisely: every active entrant gets one or two seats a round (so seat
counts differ by at most one within a round); the groups beyond one cover
(``ceil(n / seats)``) are the bridges, while the graph is split, and at most
:data:`EXTRA_GROUPS` extras.  Planning is a function of its
arguments only: the random choices come from ``random.Random(f"{seed}/{round_no}")`` and
everything is taken in entrant order, never in the order of a dict or of the input.
"""

from __future__ import annotations

import itertools
import math
import random
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

MAX_ALL_GROUPS = 70
"""C(8, 4): up to this many groups a round is every group once (``planning.MAX_ALL_GROUPS``;
repeated here so that this module imports nothing of the database's)."""

EXPLORE = 0.0625
"""The share of a large field dealt into random (least-met) groups each round: at least one
group once the field has four groups' worth.  Bridges keep the graph connected; this keeps
it broad.  More costs the top of the table its informative matches: in
bench/matchmaking.py, a top-3 order needs about as many matches with 0 to 12% exploration."""

PRIOR_SD = 250.0
"""The least standard deviation (Elo) of the prior an unrated entrant's strength is drawn
from: wider than most fields' spread, so a newcomer is tried all over the table."""

DRAW_SCALE = 1.0
"""A Thompson draw's standard deviation, in standard errors (1: the posterior itself; 0.3
and 0.5 measured no better in bench/matchmaking.py)."""

DRAW_FLOOR = 5.0
"""The least standard deviation (Elo) of a Thompson draw: keeps entrants whose ratings are
already sharp moving a little across the cut points."""

SHORT_FROM = 0.25
"""The short group of a round is cut at a random place below this share of the table: the
top, where a contest is decided, always plays in full groups of its closest rivals."""

PARTITION_TRIES = 8
"""How many random partitions of the exploration pool are tried (the least-met is kept)."""

EXTRA_GROUPS = 1
"""Extra groups a large round adds at the top of the table.  They seat entrants that have
one seat so far, so no entrant gets more than two seats a round.  They cost matches like
any others (at 30 bots one group in nine, at 200 one in 51); they buy the top of the
table, where a contest is decided and its order is closest, twice the comparisons of the
rest.  More (one in eight of a round's groups) measured no better at 200 bots."""


@dataclass(frozen=True)
class Standing:
    """What the planner knows of one active entrant when it plans a round."""

    entrant: int
    """The entrant's version id (the ladder's key for it)."""
    matches: int
    """Matches it has been seated in so far in this ladder (finished or planned)."""
    elo: float | None = None
    """Its current rating on the Elo scale, None while unrated."""
    stderr: float | None = None
    """That rating's standard error (Elo points), None while unrated."""
    new: bool = False
    """Joined (or entered a new version) since the last planned round."""


@dataclass(frozen=True)
class RoundPlan:
    round_no: int
    groups: tuple[tuple[int, ...], ...]
    """Each of ``seats`` entrants, sorted (a field smaller than a table: the rotation
    ``planning.groups_for`` gives)."""


def _field(standings: Sequence[Standing]) -> dict[int, Standing]:
    """One standing per entrant, in entrant order (a repeated entrant: the standing with
    the most matches, so that the input's order never matters)."""
    out: dict[int, Standing] = {}
    for s in sorted(standings, key=_standing_key):
        out.setdefault(s.entrant, s)
    if len(out) < 2:
        raise ValueError("a ladder needs at least two distinct bots")
    return dict(sorted(out.items()))


def _standing_key(s: Standing) -> tuple:
    elo, err = _num(s.elo), _num(s.stderr)
    return (
        s.entrant,
        -s.matches,
        not s.new,
        math.inf if elo is None else elo,
        math.inf if err is None else err,
    )


def _num(x: float | None) -> float | None:
    """``x`` as a rating can use it: None when missing or not a finite number."""
    return float(x) if x is not None and math.isfinite(x) else None


def _check_seats(seats: int) -> None:
    if isinstance(seats, bool) or not isinstance(seats, int) or seats < 2:
        raise ValueError("seats must be an integer of at least 2")


def plan_round(
    standings: Sequence[Standing],
    *,
    round_no: int,
    seed: str,
    seats: int = 4,
    met: Mapping[tuple[int, int], int] | None = None,
) -> RoundPlan:
    """The groups of round ``round_no`` for the active entrants ``standings``; ``met``:
    how often each pair (a, b), a < b, has shared a match (the history the comparison graph
    is made of).  See the module's docstring for how they are chosen."""
    _check_seats(seats)
    field = _field(standings)
    ids = list(field)
    n = len(ids)
    if n <= seats:
        return RoundPlan(round_no, (tuple(ids[i % n] for i in range(seats)),))
    if math.comb(n, seats) <= MAX_ALL_GROUPS:
        return RoundPlan(round_no, tuple(itertools.combinations(ids, seats)))
    rng = random.Random(f"{seed}/{round_no}")
    return RoundPlan(round_no, _Round(field, seats, met or {}, rng).plan())


class _Round:
    """One large round in the making: who has how many seats, and the groups so far."""

    def __init__(
        self,
        field: dict[int, Standing],
        seats: int,
        met: Mapping[tuple[int, int], int],
        rng: random.Random,
    ) -> None:
        self.field, self.seats, self.met, self.rng = field, seats, met, rng
        self.ids = list(field)
        self.count = dict.fromkeys(self.ids, 0)
        self.groups: list[tuple[int, ...]] = []
        rated = [x for x in (_num(s.elo) for s in field.values()) if x is not None]
        self.mean = statistics.fmean(rated) if rated else 0.0
        spread = statistics.pstdev(rated) if len(rated) > 1 else 0.0
        self.prior_sd = max(PRIOR_SD, 2 * spread)
        # one tiebreak per entrant, drawn in entrant order
        self.tiebreak = {e: rng.random() for e in self.ids}

    def seat(self, group: Sequence[int]) -> None:
        for e in group:
            self.count[e] += 1
        self.groups.append(tuple(sorted(group)))

    def plan(self) -> tuple[tuple[int, ...], ...]:
        free = self.placement()
        free = self.explore(free)
        self.thompson(free)
        self.bridge()
        self.extras()
        return tuple(self.groups)

    def rated(self, e: int) -> bool:
        s = self.field[e]
        return _num(s.elo) is not None and not s.new

    def placement(self) -> list[int]:
        """Groups for the new entrants: each with one opponent from each stratum of the
        rated field's range; returns the entrants still unseated."""
        k = self.seats - 1
        newcomers = [e for e in self.ids if self.field[e].new]
        self.rng.shuffle(newcomers)
        pool = sorted((e for e in self.ids if self.rated(e)), key=self.position)
        for e in newcomers:
            if len(pool) < k:
                break
            picked = _spread(pool, k, self.rng)
            for o in picked:
                pool.remove(o)
            self.seat([e, *picked])
        return [e for e in self.ids if self.count[e] == 0]

    def position(self, e: int) -> float:
        elo = _num(self.field[e].elo)
        return self.mean if elo is None else elo

    def explore(self, free: list[int]) -> list[int]:
        """Deal a share of ``free`` into random groups, the least-met of a few partitions;
        returns the rest."""
        groups = round(EXPLORE * len(free) / self.seats)
        if len(free) >= 4 * self.seats:
            groups = max(groups, 1)
        size = self.seats * groups
        if size == 0:
            return free
        pool = self.rng.sample(free, size)
        best: list[list[int]] = []
        best_met = math.inf
        for _ in range(PARTITION_TRIES):
            self.rng.shuffle(pool)
            parts = [pool[i : i + self.seats] for i in range(0, size, self.seats)]
            total = sum(self.met_count(a, b) for g in parts for a, b in _pairs(g))
            if total < best_met:
                best, best_met = [list(g) for g in parts], total
            if total == 0:
                break
        for g in best:
            self.seat(g)
        chosen = set(pool)
        return [e for e in free if e not in chosen]

    def met_count(self, a: int, b: int) -> int:
        return self.met.get((a, b) if a < b else (b, a), 0)

    def draw(self, e: int) -> float:
        s = self.field[e]
        elo, sd = _num(s.elo), _num(s.stderr)
        if elo is None:
            return self.rng.gauss(self.mean, self.prior_sd)
        if sd is None or sd <= 0:
            sd = self.prior_sd
        return self.rng.gauss(elo, max(DRAW_SCALE * sd, DRAW_FLOOR))

    def thompson(self, free: list[int]) -> None:
        """Sort ``free`` by a draw from each rating's posterior and cut into groups; the
        one short group, at a random place below the top quarter, is filled with the
        entrants that have played least (the nearest in the draw among them)."""
        if not free:
            return
        drawn = {e: self.draw(e) for e in free}  # drawn in entrant order
        order = sorted(free, key=lambda e: (-drawn[e], e))
        short = len(order) % self.seats
        chunks = len(order) // self.seats + (1 if short else 0)
        at = self.rng.randrange(int(SHORT_FROM * chunks), chunks) if short else -1
        i, cut = 0, []
        for c in range(chunks):
            size = short if c == at else self.seats
            group = order[i : i + size]
            i += size
            if size < self.seats:
                cut = group
            else:
                self.seat(group)
        if cut:  # filled once every other entrant has its seat
            where = statistics.fmean(drawn[e] for e in cut)
            self.seat(cut + self.fillers(cut, where, drawn))

    def fillers(self, group: list[int], where: float, drawn: dict[int, float]) -> list[int]:
        """Entrants to complete a short group: those that have played least (seats this
        round, then matches), the nearest to ``where`` among them."""
        inside = set(group)

        def key(e: int) -> tuple:
            near = abs(drawn.get(e, self.position(e)) - where)
            return (self.count[e], self.field[e].matches, near, self.tiebreak[e])

        return sorted((e for e in self.ids if e not in inside), key=key)[: self.seats - len(group)]

    def extras(self) -> None:
        """Extra groups at the top of the table: a fresh Thompson draw of the rated
        entrants, the best of it that have one seat so far cut into groups.  An entrant
        drawn near the top is one that may be the best, by its rating or by its doubt, and
        the top's order is the one most worth knowing."""
        rated = [e for e in self.ids if self.rated(e)]
        want = EXTRA_GROUPS * self.seats
        if len(rated) < 2 * self.seats:
            return
        drawn = {e: self.draw(e) for e in rated}  # drawn in entrant order
        order = sorted((e for e in rated if self.count[e] == 1), key=lambda e: (-drawn[e], e))
        pool = order[: min(want, len(order) // self.seats * self.seats)]
        for i in range(0, len(pool), self.seats):
            self.seat(pool[i : i + self.seats])

    def bridge(self) -> None:
        """Link the components of the comparison graph (``met`` among the active entrants,
        and this round's groups) with a chain of groups, each reaching into up to
        ``seats`` components and sharing one with the next."""
        comps = self.components()
        if len(comps) < 2:
            return
        self.rng.shuffle(comps)
        step = self.seats - 1
        for start in range(0, len(comps) - 1, step):
            members: list[int] = []
            for comp in comps[start : start + self.seats]:
                members.append(self.representative(comp, members))
            while len(members) < self.seats:  # the chain's last group: any others
                members.append(self.representative(self.ids, members))
            self.seat(members)

    def representative(self, comp: Sequence[int], taken: list[int]) -> int:
        """The member of ``comp`` to seat once more: one seat so far this round, fewest
        matches, then at random."""
        options = [e for e in comp if e not in taken]
        if not options:  # cannot happen: a component has at least `seats` members
            options = [e for e in self.ids if e not in taken]
        return min(options, key=lambda e: (self.count[e], self.field[e].matches, self.tiebreak[e]))

    def components(self) -> list[list[int]]:
        parent = {e: e for e in self.ids}

        def root(e: int) -> int:
            while parent[e] != e:
                parent[e] = parent[parent[e]]
                e = parent[e]
            return e

        def join(a: int, b: int) -> None:
            ra, rb = root(a), root(b)
            if ra != rb:
                parent[max(ra, rb)] = min(ra, rb)

        for (a, b), times in self.met.items():
            if times > 0 and a in parent and b in parent:
                join(a, b)
        for g in self.groups:
            for e in g[1:]:
                join(g[0], e)
        comps: dict[int, list[int]] = {}
        for e in self.ids:
            comps.setdefault(root(e), []).append(e)
        return sorted(comps.values())


def _pairs(group: Sequence[int]) -> list[tuple[int, int]]:
    return [(a, b) if a < b else (b, a) for a, b in itertools.combinations(group, 2) if a != b]


def _spread(pool: Sequence[int], k: int, rng: random.Random) -> list[int]:
    """``k`` members of ``pool`` (sorted by rating), one at random from each of ``k`` equal
    strata."""
    out = []
    for j in range(k):
        lo, hi = j * len(pool) // k, (j + 1) * len(pool) // k
        out.append(pool[rng.randrange(lo, max(hi, lo + 1))])
    return out


def placement_groups(
    newcomer: Standing,
    field: Sequence[Standing],
    *,
    seed: str,
    seats: int = 4,
    count: int = 2,
) -> tuple[tuple[int, ...], ...]:
    """``count`` groups that place ``newcomer`` at once (a bot joining mid-round): the
    newcomer with opponents spread over the field's rating range — together the groups
    take one opponent from each of ``count × (seats − 1)`` strata, and each group one from
    every part of the range.  Unrated members of the field count at its mean.  A field
    smaller than that lends opponents to several groups; smaller than a table, they repeat
    in rotation as a small ladder's group does."""
    _check_seats(seats)
    if isinstance(count, bool) or not isinstance(count, int) or count < 1:
        raise ValueError("count must be a positive integer")
    others = _field([s for s in field if s.entrant != newcomer.entrant] + [newcomer])
    del others[newcomer.entrant]
    if not others:
        raise ValueError("a ladder needs at least two distinct bots")
    rng = random.Random(f"{seed}/placement/{newcomer.entrant}")
    rated = [x for x in (_num(s.elo) for s in others.values()) if x is not None]
    mean = statistics.fmean(rated) if rated else 0.0

    def position(e: int) -> tuple[float, float, int]:
        elo = _num(others[e].elo)
        return (-(mean if elo is None else elo), rng.random(), e)

    keys = {e: position(e) for e in others}  # drawn in entrant order
    pool = sorted(others, key=keys.__getitem__)
    k = seats - 1
    if len(pool) < k:  # fewer entrants than seats: the rotation of a small ladder
        ids = sorted([newcomer.entrant, *pool])
        return tuple(tuple(ids[i % len(ids)] for i in range(seats)) for _ in range(count))
    strata = count * k
    if len(pool) >= strata:
        picked = _spread(pool, strata, rng)  # stratum j: group j % count
        groups = [picked[g::count] for g in range(count)]
    else:
        groups = [_spread(pool, k, rng) for _ in range(count)]
    return tuple(tuple(sorted([newcomer.entrant, *g])) for g in groups)
