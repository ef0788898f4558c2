"""The pages everyone may read, each with its JSON twin: the leaderboard (live), a bot's
page, the match list and a match's replay, the rules.  Everything here is read through the
ladder's own functions (see ``contest``)."""

from __future__ import annotations

import json
import math
from typing import Annotated, Any

from fastapi import APIRouter, Depends, HTTPException, Query, Request
from fastapi.responses import HTMLResponse, Response
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from bigtwo import RuleSet

from ..ladder.final import view as final_view
from ..ladder.leaderboard import counts
from ..ladder.queries import bot_faults, fault_details, parse_bot, rating_history
from ..ladder.store import Bot, BotVersion, FaultRow, Match, MatchRecord, MatchSeat
from ..public_record import FaultKey, with_details
from ..referee.results import MatchResult
from ..replay_view import rules_summary
from . import answers
from .contest import PUBLIC_SETTINGS, bot_versions, head_to_head, ladder_row, version_labels
from .models import BotOwner, Upload, User
from .pages import render
from .security import Visitor, owner_or_organizer, visitor

router = APIRouter()
Who = Annotated[Visitor, Depends(visitor)]
PAGE_SIZE = 50


def _app(request: Request) -> Any:
    return request.app.state


def owners(session: Session) -> dict[str, str]:
    """Bot name → its owner's account name (bots entered from the command line have none)."""
    return dict(
        session.execute(
            select(Bot.name, User.name)
            .join(BotOwner, BotOwner.bot_id == Bot.id)
            .join(User, User.id == BotOwner.user_id)
        ).all()
    )


def bot_owner_id(session: Session, bot_name: str) -> int | None:
    return session.scalar(
        select(BotOwner.user_id).join(Bot, Bot.id == BotOwner.bot_id).where(Bot.name == bot_name)
    )


# ----- leaderboard ----------------------------------------------------------------------------
def standings_data(request: Request) -> dict[str, Any]:
    state = _app(request)
    config = state.config
    kept = state.standings.get(state.engine, config.ladder)
    with Session(state.engine) as session:
        who_owns = owners(session)
        status = counts(session, config.ladder)  # what `arena ladder list` counts
    rows = []
    for row in kept.rows:
        base = parse_bot(row["bot"])[0]
        rows.append({**row, "owner": who_owns.get(base)})
    return {
        "ladder": config.ladder,
        # the matches the rows reflect (they may trail the store by a refit): the page's
        # script refreshes the table when this number moves
        "matches_done": kept.done,
        "matches_pending": status.get("pending", 0) + status.get("running", 0),
        "rows": rows,
        # the final evaluation: the marker when final, the phase when under way (or nulls)
        **final_view(state.engine, config.ladder).to_dict(),
    }


def _charts(request: Request, rows: list[dict[str, Any]]) -> dict[str, Any]:
    from . import charts

    state = _app(request)
    rated = [r for r in rows if r.get("rated")]
    out: dict[str, Any] = {"bars": {}, "chart": "", "heatmap": ""}
    if rated:

        def draw() -> tuple[dict[str, str], str]:
            scale = charts.common_scale(rated)
            bars = {
                r["bot"]: charts.interval_bar(
                    r["elo"], r["elo_low"], r["elo_high"], scale, in_field=r.get("in_field", True)
                )
                for r in rated
            }
            labels = [r["bot"] for r in rated]
            heatmap = charts.superiority_heatmap(
                labels, {r["bot"]: r.get("superiority", {}) for r in rated}
            )
            return bars, heatmap

        # drawn once per fit (45 ms for 200 bots), not once per view
        key = tuple((r["bot"], r["elo"], r["elo_low"], r["elo_high"]) for r in rated)
        out["bars"], out["heatmap"] = state.standings.memo(key, draw)
    with Session(state.engine) as session:
        ladder_id = ladder_row(session, state.config.ladder).id
    history, _ = state.standings.history(
        state.engine, state.config.ladder, ladder_id, rating_history
    )
    out["chart"] = charts.rating_chart(history, [r["bot"] for r in rated[:8]] or None)
    return out


@router.get("/", response_class=HTMLResponse, include_in_schema=False)
def leaderboard_page(request: Request, who: Who) -> Response:
    data = standings_data(request)
    return render(request, who, "leaderboard.html", {**data, **_charts(request, data["rows"])})


@router.get("/fragments/leaderboard", response_class=HTMLResponse, include_in_schema=False)
def leaderboard_fragment(request: Request, who: Who) -> Response:
    """The table alone: the page's script swaps it in when matches finish."""
    data = standings_data(request)
    return render(
        request, who, "leaderboard_table.html", {**data, **_charts(request, data["rows"])}
    )


@router.get("/api/leaderboard", tags=["ladder"], response_model=answers.LeaderboardAnswer)
def leaderboard_api(request: Request, who: Who) -> Response:
    """The leaderboard as ``arena ladder show --json`` has it, with each bot's owner.  A row
    ranked above the next with fewer points a hand carries ``order_note``: why, as one line
    (``text``; ``parts`` the same with each bot name a piece of its own) and the counts it
    rests on (``arena.ladder.explain.OrderNote``); null elsewhere.  ``final``: the final
    marker when the standings are final (when, k, budget, matches, separated, stopped, top),
    ``final_phase``: the final evaluation under way (k, budget, started, played), each null
    otherwise."""
    return answers.answer(standings_data(request))


# ----- bots -----------------------------------------------------------------------------------
def bot_data(request: Request, who: Visitor, name: str) -> dict[str, Any]:
    state = _app(request)
    config = state.config
    base, _ = parse_bot(name)
    with Session(state.engine) as session:
        ladder = ladder_row(session, config.ladder)
        versions = bot_versions(session, ladder.id, base)
        if not versions:
            raise HTTPException(404, f"no bot named {base!r}")
        owner_id = bot_owner_id(session, base)
        owner = session.get(User, owner_id) if owner_id is not None else None
        labels = version_labels(session)
        ids = [vid for vid, label in labels.items() if parse_bot(label)[0] == base]
        newest = (  # ids first: sorting whole rows would drag every match's result along
            select(Match.id)
            .join(MatchSeat, MatchSeat.match_id == Match.id)
            .where(
                Match.ladder_id == ladder.id,
                Match.status == "done",
                MatchSeat.version_id.in_(ids),
            )
            .order_by(Match.id.desc())
            .limit(20)
        )
        recent = session.scalars(
            select(Match).where(Match.id.in_(newest.scalar_subquery())).order_by(Match.id.desc())
        )
        matches = [match_row(m, labels) for m in recent]
        results = head_to_head(session, ladder.id, ids, labels)
        uploads = []
        if owner_or_organizer(who, owner_id):
            uploads = [
                upload_row(u)
                for u in session.scalars(
                    select(Upload)
                    .where(Upload.bot_name == base)
                    .order_by(Upload.id.desc())
                    .limit(10)
                )
            ]
    kept = state.standings.get(state.engine, config.ladder)
    standing = [r for r in kept.rows if parse_bot(r["bot"])[0] == base]
    opponents = _against(kept.rows, standing)
    superiority = {a["opponent"]: a["superiority"] for a in opponents}
    for row in results:
        row["superiority"] = superiority.get(row["opponent"])
    total, kinds, faults = bot_faults(state.engine, ladder.id, base, 20, 2000)
    shown = owner_or_organizer(who, owner_id)
    return {
        "bot": base,
        "owner": owner.name if owner else None,
        "versions": versions,
        "standing": standing,
        "against": results,
        "chart": _bot_chart(request, ladder.id, [r["bot"] for r in standing]),
        "recent_matches": matches,
        "faults": {"total": total, "kinds": kinds, "recent": faults if shown else None},
        "uploads": uploads if shown else None,
        "logs_visible": shown,
    }


def _bot_chart(request: Request, ladder_id: int, mine: list[str]) -> str:
    """The bot's versions' ratings over time (the leaderboard's chart, these lines only)."""
    from . import charts

    state = _app(request)
    history, _ = state.standings.history(
        state.engine, state.config.ladder, ladder_id, rating_history
    )
    if not mine:
        return ""
    return charts.rating_chart(history, mine)


def _against(rows: list[dict[str, Any]], mine: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """P(this bot stronger than each opponent), from the ratings (likelihood of superiority)."""
    if not mine:
        return []
    sup = mine[0].get("superiority") or {}
    return [
        {"opponent": k, "superiority": v} for k, v in sorted(sup.items(), key=lambda kv: -kv[1])
    ]


def upload_row(u: Upload) -> dict[str, Any]:
    return {
        "id": u.id,
        "bot": u.bot_name,
        "filename": u.filename,
        "status": u.status,
        "reason": u.reason,
        "log": u.log,
        "created": u.created.isoformat() if u.created else None,
    }


@router.get("/bots/{name}", response_class=HTMLResponse, include_in_schema=False)
def bot_page(request: Request, who: Who, name: str) -> Response:
    data = bot_data(request, who, name)
    return render(request, who, "bot.html", data)


@router.get("/api/bots/{name}", tags=["bots"], response_model=answers.BotAnswer)
def bot_api(request: Request, who: Who, name: str) -> Response:
    """A bot's versions, standing, results against each opponent (deals met, deals ahead,
    mean lead per deal, and P(stronger) from the ratings), recent matches, faults; fault
    details and upload logs for its owner and the organizer only."""
    return answers.answer(bot_data(request, who, name))


# ----- matches --------------------------------------------------------------------------------
def match_row(m: Match, labels: dict[int, str]) -> dict[str, Any]:
    result = MatchResult.from_json(m.result) if m.result else None
    seats = result.seats if result else ()
    return {
        "id": m.id,
        "status": m.status,
        "finished": m.finished.isoformat() if m.finished else None,
        "bots": [labels.get(v, str(v)) for v in m.seats],
        "scores": [s.score for s in seats],
        "places": [s.place for s in seats],
        "forfeits": [s.forfeit for s in seats],
        "hands": len(result.hands) if result else 0,
    }


def matches_data(request: Request, bot: str | None, page: int) -> dict[str, Any]:
    state = _app(request)
    with Session(state.engine) as session:
        ladder = ladder_row(session, state.config.ladder)
        labels = version_labels(session)
        query = select(Match).where(Match.ladder_id == ladder.id, Match.status == "done")
        count = (
            select(func.count())
            .select_from(Match)
            .where(Match.ladder_id == ladder.id, Match.status == "done")
        )
        if bot:
            base, number = parse_bot(bot)
            ids = [
                vid
                for vid, label in labels.items()
                if parse_bot(label)[0] == base and (number is None or label == bot)
            ]
            if not ids:
                raise HTTPException(404, f"no bot named {bot!r}")
            seated = select(MatchSeat.match_id).where(MatchSeat.version_id.in_(ids))
            query = query.where(Match.id.in_(seated))
            count = count.where(Match.id.in_(seated))
        total = int(session.scalar(count) or 0)
        pages = max(1, math.ceil(total / PAGE_SIZE))
        if page > pages:
            raise HTTPException(404, f"page {page} of {pages}: no such page")
        rows = [
            match_row(m, labels)
            for m in session.scalars(
                query.order_by(Match.id.desc()).offset((page - 1) * PAGE_SIZE).limit(PAGE_SIZE)
            )
        ]
    return {"bot": bot, "page": page, "pages": pages, "total": total, "matches": rows}


Page = Annotated[int, Query(ge=1, le=1_000_000, description="page number, from 1")]
BotFilter = Annotated[str | None, Query(max_length=120, description="only this bot's matches")]


@router.get("/matches", response_class=HTMLResponse, include_in_schema=False)
def matches_page(request: Request, who: Who, bot: BotFilter = None, page: Page = 1) -> Response:
    return render(request, who, "matches.html", matches_data(request, bot or None, page))


@router.get("/api/matches", tags=["matches"], response_model=answers.MatchesPage)
def matches_api(request: Request, who: Who, bot: BotFilter = None, page: Page = 1) -> Response:
    """Finished matches, newest first, 50 a page; ``bot`` keeps one bot's (``NAME`` or
    ``NAME@vN``)."""
    return answers.answer(matches_data(request, bot or None, page))


def _record_events(
    request: Request, match_id: int
) -> tuple[Match, dict[int, str], list[dict[str, Any] | None]]:
    state = _app(request)
    with Session(state.engine) as session:
        ladder = ladder_row(session, state.config.ladder)
        m = session.get(Match, match_id)
        if m is None or m.ladder_id != ladder.id:
            raise HTTPException(404, f"no match {match_id}")
        if m.status != "done":
            raise HTTPException(404, f"match {match_id} has not been played yet")
        rec = session.get(MatchRecord, match_id)
        labels = version_labels(session)
        session.expunge(m)
    if rec is None:
        raise HTTPException(404, f"match {match_id} was played before matches kept records")
    from .replay_data import stored_events

    return m, labels, stored_events(rec.data)


def seen_details(request: Request, who: Visitor, m: Match) -> dict[FaultKey, list[str]]:
    """The details of this match's faults that ``who`` may see: those of the seats whose
    bot is theirs (all of them for the organizer), through the one owner-or-organizer rule;
    none for anyone else.  They come from the ``faults`` table, the only place they are
    kept (the stored record is public)."""
    if who.account is None:
        return {}
    state = _app(request)
    with Session(state.engine) as session:
        bots = dict(
            session.execute(
                select(BotVersion.id, Bot.name)
                .join(Bot, Bot.id == BotVersion.bot_id)
                .where(BotVersion.id.in_(list(m.seats)))
            ).all()
        )
        mine = {
            seat
            for seat, vid in enumerate(m.seats)
            if owner_or_organizer(who, bot_owner_id(session, bots.get(vid, "")))
        }
        if not mine:
            return {}
        rows = session.scalars(
            select(FaultRow).where(FaultRow.match_id == m.id).order_by(FaultRow.id)
        ).all()
    return fault_details(m, rows, mine)


def match_data(request: Request, who: Visitor, match_id: int) -> dict[str, Any]:
    """A match and its replay data; a fault's detail only for a viewer who may see it."""
    from .replay_data import replay_data

    m, labels, events = _record_events(request, match_id)
    details = seen_details(request, who, m)
    if details:
        events = with_details(events, details)
    return {"match": match_row(m, labels), "replay": replay_data(events)}


MatchId = Annotated[int, "a match id"]


@router.get("/matches/{match_id}", response_class=HTMLResponse, include_in_schema=False)
def match_page(request: Request, who: Who, match_id: int) -> Response:
    return render(request, who, "match.html", match_data(request, who, match_id))


@router.get("/api/matches/{match_id}", tags=["matches"], response_model=answers.MatchAnswer)
def match_api(request: Request, who: Who, match_id: int) -> Response:
    """A finished match: its result and the replay data the viewer draws (every hand's
    cards, every turn), re-validated against the rules (``replay.valid``).  A fault's
    ``detail`` (the bot's own words) only for its owner and the organizer; everyone sees
    its ``kind`` and ``reason``."""
    return answers.answer(match_data(request, who, match_id))


@router.get(
    "/api/matches/{match_id}/record",
    tags=["matches"],
    response_class=Response,
    responses={
        200: {
            "description": "The record, one JSON event a line",
            "content": {"application/x-ndjson": {"schema": {"type": "string"}}},
        }
    },
)
def match_record_api(request: Request, who: Who, match_id: int) -> Response:
    """The match's record as JSON Lines, as ``arena replay FILE`` takes it: its public
    form, for everyone (faults by kind, place and reason; no details)."""
    _, _, events = _record_events(request, match_id)
    body = "".join(json.dumps(e, separators=(",", ":")) + "\n" for e in events)
    return Response(
        body,
        media_type="application/x-ndjson",
        headers={"content-disposition": f'attachment; filename="match-{match_id}.jsonl"'},
    )


# ----- rules ----------------------------------------------------------------------------------
def rules_data(request: Request) -> dict[str, Any]:
    from .rules_text import describe

    state = _app(request)
    with Session(state.engine) as session:
        ladder = ladder_row(session, state.config.ladder)
        rules = RuleSet.from_dict(ladder.rules)
        settings = {k: ladder.settings[k] for k in PUBLIC_SETTINGS if k in ladder.settings}
    return {
        "summary": rules_summary(rules),
        "rules": rules.to_dict(),
        "described": describe(rules),
        "settings": settings,
    }


@router.get("/rules", response_class=HTMLResponse, include_in_schema=False)
def rules_page(request: Request, who: Who) -> Response:
    return render(request, who, "rules.html", rules_data(request))


@router.get("/api/rules", tags=["ladder"], response_model=answers.RulesAnswer)
def rules_api(request: Request, who: Who) -> Response:
    """The contest's rule set (``RuleSet.to_dict``), in words, and its public settings."""
    return answers.answer(rules_data(request))


# ----- the API's own page -----------------------------------------------------------------
@router.get("/api", response_class=HTMLResponse, include_in_schema=False)
def api_page(request: Request, who: Who) -> Response:
    """The OpenAPI document read as a page (the framework's own pages load a CDN)."""
    spec = request.app.openapi()
    routes = [
        {
            "method": method.upper(),
            "path": path,
            "summary": op.get("summary", ""),
            "description": op.get("description", ""),
            "params": [p.get("name") for p in op.get("parameters", [])],
        }
        for path, ops in spec.get("paths", {}).items()
        for method, op in ops.items()
    ]
    return render(request, who, "api.html", {"routes": routes})
