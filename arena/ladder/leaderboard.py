"""The leaderboard: a ladder's ratings, fitted on its finished matches, as one row per
entrant, and their history (``snapshot``).  The evidence is defined here (``rated_blocks``:
each deal's duplicate block, a forfeited seat's hands counting as last) and kept per match
as its digest (:mod:`.digests`, written with the match); the leaderboard is fitted from the
digests (:mod:`.rated`, :mod:`.fitting`), the maths is :mod:`.ratings`'.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session, selectinload

from ..referee.results import MatchResult, SeatResult
from .duplicate import block_rankings
from .explain import attach_order_notes
from .ratings import Fit
from .store import BotVersion, Entry, Ladder, Match, MatchSeat, RatingSnapshot


def leaderboard(
    session: Session, ladder_name: str, retired: bool = False, notes: bool = True
) -> tuple[Fit | None, list[dict[str, Any]]]:
    """The ladder's ratings and one row per entrant: the rated in rank order, then those
    with no rating yet (``rated`` False: entered but not played, or no complete deal yet).
    Retired entrants' rows (``retired`` True) only with ``retired``; the ratings are always
    fitted on every finished match, theirs included.  ``rank`` and ``separated_from_next``
    are among the rows returned.

    The ratings and every column come from the matches' digests; ``order_note`` (why a row
    stands above the next with fewer points a hand) needs each game's points, so with
    ``notes`` the results of the matches seating such a pair's bots are read — only when a
    pair disagrees.  Without ``notes`` every row's ``order_note`` is None."""
    ladder = session.scalar(select(Ladder).where(Ladder.name == ladder_name))
    if ladder is None:
        raise ValueError(f"no ladder named {ladder_name!r}")
    entered = list(
        session.scalars(
            select(Entry)
            .where(Entry.ladder_id == ladder.id)
            # each version and its bot in two queries, not two per entrant (its label)
            .options(selectinload(Entry.version).selectinload(BotVersion.bot))
        )
    )
    entries = {e.version_id: e.version for e in entered}
    is_retired = {e.version_id: e.retired for e in entered}
    from .rated import Played, rate  # the evidence: each match's digest, not its result

    rated = rate(session, ladder)
    played_in = {v: p.matches for v, p in rated.played.items()}
    if rated.fit is None:
        rows = _unrated(entries, is_retired, played_in, [], retired)
        attach_order_notes(rows, [], ladder.settings["rotations"], {}, None)
        return None, rows
    fit: Fit[Any] = rated.fit
    skill = rated.skill
    out: list[dict[str, Any]] = []
    ranked = fit.ratings
    versions = {r.bot: entries.get(r.bot) or session.get(BotVersion, r.bot) for r in ranked}
    labels = {b: v.label if v else str(b) for b, v in versions.items()}
    for i, r in enumerate(ranked):
        mine = rated.played.get(r.bot, Played())
        played = range(mine.matches)
        points, hands = mine.points, mine.hands
        firsts, faults, forfeits = mine.first_places, mine.faults, mine.forfeits
        below = ranked[i + 1] if i + 1 < len(ranked) else None
        out.append(
            {
                "rank": i + 1,
                "bot": labels[r.bot],
                "elo": round(r.elo, 1),
                "elo_low": round(r.low, 1),
                "elo_high": round(r.high, 1),
                "openskill": round(skill[r.bot], 2),
                "matches": len(played),
                "points_per_hand": round(points / hands, 3) if hands else None,
                "first_places": firsts,
                "faults": faults,
                "forfeits": forfeits,
                # P(this bot stronger than that one), as BayesElo's likelihood of superiority
                "superiority": {
                    labels[o.bot]: round(fit.superiority[r.bot][o.bot], 4)
                    for o in ranked
                    if o.bot != r.bot
                },
                "separated_from_next": bool(below and fit.separated(r.bot, below.bot)),
                # False: always behind (or ahead of) part of the field so far, so no finite
                # rating yet; its interval is the ridge's, and it is not in the anchor mean
                "in_field": r.in_field,
                "rated": True,
                "retired": is_retired.get(r.bot, False),
            }
        )
    if not retired:  # hidden: rank and "next" among the rows shown
        out = [row for row in out if not row["retired"]]
        vid = {label: b for b, label in labels.items()}
        for i, row in enumerate(out):
            row["rank"] = i + 1
            next_row = out[i + 1] if i + 1 < len(out) else None
            row["separated_from_next"] = bool(
                next_row and fit.separated(vid[row["bot"]], vid[next_row["bot"]])
            )
    rows = out + _unrated(entries, is_retired, played_in, [r.bot for r in ranked], retired)
    # why a row stands above the next with fewer points a hand (see .explain): the blocks
    # of the matches seating the bots of such pairs only, read when there is one
    rotations = ladder.settings["rotations"]
    attach_order_notes(
        rows,
        lambda wanted: rated_blocks(_done_seating(session, ladder.id, wanted), rotations),
        rotations,
        {label: b for b, label in labels.items()},
        fit if notes else None,
    )
    return fit, rows


def _done_seating(session: Session, ladder_id: int, versions: set[Any]) -> list[Match]:
    """The ladder's finished matches in which any of ``versions`` holds a seat."""
    seated = select(MatchSeat.match_id).where(MatchSeat.version_id.in_(list(versions)))
    return list(
        session.scalars(
            select(Match).where(
                Match.ladder_id == ladder_id, Match.status == "done", Match.id.in_(seated)
            )
        )
    )


def _unrated(
    entries: dict[int, BotVersion],
    is_retired: dict[int, bool],
    played_in: dict[int, int],
    rated: list[Any],
    retired: bool,
) -> list[dict[str, Any]]:
    """Rows for entrants with no rating yet: entered and not played (``matches`` 0), or
    played without a complete deal block so far — shown, not hidden until they play."""
    out: list[dict[str, Any]] = []
    for vid, version in sorted(entries.items()):
        if vid in rated or (is_retired.get(vid) and not retired):
            continue
        out.append(
            {
                "rank": None,
                "bot": version.label,
                "elo": None,
                "elo_low": None,
                "elo_high": None,
                "openskill": None,
                "matches": played_in.get(vid, 0),
                "points_per_hand": None,
                "first_places": 0,
                "faults": 0,
                "forfeits": 0,
                "superiority": {},
                "separated_from_next": False,
                "in_field": False,
                "rated": False,
                "retired": bool(is_retired.get(vid)),
            }
        )
    return out


def finished_result(match: Match) -> MatchResult:
    """A finished match's result (set with its status ``done``, in one transaction), read
    from its stored JSON (every shape ever stored: see ``MatchResult.from_json``)."""
    assert match.result is not None, f"match {match.id} is done without a result"
    return MatchResult.from_json(match.result)


FORFEITED = float("-inf")
"""A seat's points, for the ratings, in a hand its fallback policy played: below anyone's."""


def rated_blocks(matches: list[Match], rotations: int) -> list[list[dict[int, float]]]:
    """The official rating's evidence: per deal of every finished match (in match order),
    the orders of its duplicate block — each game's and each set of cards' (see
    ``block_rankings``).  A seat counts as last from the hand in which it forfeited on:
    the fallback policy that plays it keeps the other seats' results meaningful, but its
    points are not the bot's (a bot that crashes at once must not ride a decent autopilot
    up the ladder)."""
    return [b for m in sorted(matches, key=lambda m: m.id) for b in match_blocks(m, rotations)]


def match_blocks(match: Match, rotations: int) -> list[list[dict[int, float]]]:
    """One finished match's part of :func:`rated_blocks`."""
    return result_blocks(list(match.seats), finished_result(match), rotations)


def result_blocks(
    seats: list[int], result: MatchResult, rotations: int
) -> list[list[dict[int, float]]]:
    """:func:`match_blocks` from a match's seats and result (what its digest is made of)."""
    lost = {  # the hands each seat's fallback played
        s.seat: forfeited_hands(s, len(result.hands)) for s in result.seats if s.forfeit
    }
    by_deal: dict[int, dict[int, list[float]]] = {}
    for hand in result.hands:
        deal_no, rotation = divmod(hand.hand, rotations)
        by_deal.setdefault(deal_no, {})[rotation] = [
            FORFEITED if hand.hand in lost.get(seat, ()) else float(points)
            for seat, points in enumerate(hand.scores)
        ]
    blocks = []
    for deal_no in sorted(by_deal):
        rows = by_deal[deal_no]
        if len(rows) == rotations:
            orders = block_rankings(seats, [rows[r] for r in range(rotations)], rotations)
            if orders:
                blocks.append(orders)
    return blocks


def forfeited_hands(seat: SeatResult, hands: int) -> set[int]:
    """The hands a forfeited seat's fallback played: listed when each rotation had its own
    bot instances (``forfeit_hands``), else every hand from ``forfeit_hand`` on (older
    records without it: the whole match)."""
    if seat.forfeit_hands is not None:
        return set(seat.forfeit_hands)
    return set(range(seat.forfeit_hand or 0, hands))


def rated_totals(blocks: list[list[dict[int, float]]], rotations: int) -> list[dict[int, float]]:
    """Per block, each entrant's summed points over its games, forfeited hands counting as
    a large loss (for OpenSkill's live feedback, which takes one order per block)."""
    out = []
    for orders in blocks:
        total: dict[int, float] = {}
        for game in orders[:rotations]:  # block_rankings puts the games first
            for who, points in game.items():
                total[who] = total.get(who, 0.0) + (points if points != FORFEITED else -1e6)
        out.append(total)
    return out


def snapshot(session: Session, ladder_name: str) -> RatingSnapshot | None:
    """Store the leaderboard as it stands (the ratings' history)."""
    ladder = session.scalar(select(Ladder).where(Ladder.name == ladder_name))
    _, rows = leaderboard(session, ladder_name, retired=True)
    rows = [r for r in rows if r["rated"]]  # the history of ratings: the rated only
    if ladder is None or not rows:
        return None
    done = counts(session, ladder_name).get("done", 0)
    snap = RatingSnapshot(ladder_id=ladder.id, matches=done, ratings=rows)
    session.add(snap)
    return snap


def counts(session: Session, ladder_name: str) -> dict[str, int]:
    ladder = session.scalar(select(Ladder).where(Ladder.name == ladder_name))
    if ladder is None:
        return {}
    rows = session.execute(
        select(Match.status, func.count())
        .where(Match.ladder_id == ladder.id)
        .group_by(Match.status)
    ).all()
    return {status: n for status, n in rows}
