"""The JSON API's answers, as types: each ``/api`` route names its answer here
(``response_model``), so the OpenAPI document (``/openapi.json``, the ``/api`` page)
describes every field a script can read.

The routes answer exactly the JSON they always did (each returns its data as a
``JSONResponse``: nothing is added, dropped or converted on the way out), so these types
document the answers and the tests hold every live answer to them
(``tests/web/test_api_schema.py`` validates each one, no field left undescribed).  Where an
answer holds a typed value of a lower layer (a final marker, an order note) the type is that
value's own dataclass.
"""

from __future__ import annotations

from typing import Any

from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict, TypeAdapter

from ..ladder.explain import OrderNote
from ..ladder.final import FinalMarker

Number = int | float
"""A number as stored: points are whole in a played match, fractional in a scripted one."""


class Answer(BaseModel):
    """Every field named: an answer with a field not described here fails the tests."""

    model_config = ConfigDict(extra="forbid")


class Me(Answer):
    name: str
    role: str
    """``organizer`` or ``participant``."""


class UploadAccepted(Answer):
    upload: int
    new_code: bool
    """False: the same code as a version already kept (nothing new is entered)."""
    status_url: str


class UploadRow(Answer):
    id: int
    bot: str
    filename: str
    status: str
    """``checking``, ``accepted`` or ``refused``."""
    reason: str
    log: str
    """The end of the bot's own output during its check."""
    created: str | None


class UploadStatus(UploadRow):
    kind: str
    files: int | None
    """Files in the archive; None for a refusal collected without its files."""
    checked: str | None
    playing: bool
    """The contest's player runs (an accepted bot then plays)."""


class RuleEntry(Answer):
    option: str
    value: Any
    """As in ``RuleSet.to_dict()``."""
    section: str
    topic: str
    text: str
    preset_default: bool


class RulesAnswer(Answer):
    summary: str
    rules: dict[str, Any]
    """``RuleSet.to_dict()``."""
    described: list[RuleEntry]
    settings: dict[str, Any]
    """The contest's public settings (time control, rotations, …)."""


class MatchRow(Answer):
    id: int
    status: str
    finished: str | None
    bots: list[str]
    scores: list[Number]
    places: list[int]
    forfeits: list[bool]
    hands: int


class MatchesPage(Answer):
    bot: str | None
    page: int
    pages: int
    total: int
    matches: list[MatchRow]


class ReplaySeat(Answer):
    seat: int
    name: str
    team: str | None
    """``A`` or ``B`` in a team game."""


class ReplayTurn(Answer):
    id: int | str
    """The record's turn number (text, capped, when the record holds no number)."""
    seat: int
    cards: list[str] | None
    """None for a pass."""
    label: str
    lead: bool
    next: int | None
    """The seat to move next (None at the hand's end)."""
    left: int
    """Cards the seat holds after it."""
    by_referee: bool = False
    """Present (true) only when the referee played it (a fault, a forfeited seat)."""
    won: bool = False
    """Present (true) only when it won the trick or ended the hand."""
    locked: list[int] | None = None
    """Present only while some seats are locked out of the trick."""
    reversed: bool = False
    """Present (true) only under a revolution."""


class ReplayHandResult(Answer):
    winner: int
    winning_team: list[int] | None
    cards_left: list[int]
    penalties: list[int]
    scores: list[int]
    cumulative: list[int]


class ReplayHand(Answer):
    hand: int
    leader: int
    must_include: str | None
    deal: list[list[str]]
    turns: list[ReplayTurn]
    result: ReplayHandResult | None


class ReplayFault(Answer):
    hand: int | None
    at: int
    """Turns of the hand played before it."""
    seat: int | None
    kind: str
    reason: str
    detail: str | None
    """The bot's own words: for its owner and the organizer only (else null)."""
    strike: bool
    strikes: str
    forfeited: bool


class ReplayFinal(Answer):
    scores: list[int]
    places: list[int]


class Replay(Answer):
    """The replay viewer's data (``arena.web.replay_data``): the header's facts, each
    seat, each hand with its cards and turns, the faults (public form, with a ``detail``
    only for whom may see it), and whether the record passed the engine's check."""

    valid: bool
    problem: str | None
    complete: bool
    match_id: str
    rules: str
    players: int
    direction: str
    teams: bool
    pass_locks_out: bool
    revolution: bool
    deals: str
    """``seed`` or ``explicit`` (duplicate play)."""
    seats: list[ReplaySeat]
    hands: list[ReplayHand]
    faults: list[ReplayFault]
    faults_omitted: int
    final: ReplayFinal | None


class MatchAnswer(Answer):
    match: MatchRow
    replay: Replay


class LeaderboardRow(Answer):
    """One entrant's row (as ``arena ladder show --json`` has it)."""

    rank: int | None
    bot: str
    elo: float | None
    elo_low: float | None
    elo_high: float | None
    openskill: float | None
    matches: int
    points_per_hand: float | None
    first_places: int
    faults: int
    forfeits: int
    superiority: dict[str, float]
    """P(this bot stronger than each other rated bot)."""
    separated_from_next: bool
    in_field: bool
    rated: bool
    retired: bool
    order_note: OrderNote | None = None
    """Why it stands above the next row with fewer points a hand; null elsewhere."""
    owner: str | None = None
    """Its owner's account (the leaderboard's rows only)."""


class FinalPhaseAnswer(Answer):
    k: int
    budget: int
    started: str
    played: int


class LeaderboardAnswer(Answer):
    ladder: str
    matches_done: int
    matches_pending: int
    rows: list[LeaderboardRow]
    final: FinalMarker | None
    final_phase: FinalPhaseAnswer | None


class VersionRow(Answer):
    version: int
    label: str
    created: str | None
    entered: bool
    retired: bool
    paused: bool


class Against(Answer):
    opponent: str
    deals: int
    ahead: int
    mean_lead: float
    superiority: float | None


class FaultRow(Answer):
    match: int
    bot: str
    hand: int | None
    turn: int | None
    kind: str
    detail: str


class BotFaults(Answer):
    total: int
    kinds: dict[str, int]
    recent: list[FaultRow] | None
    """Its owner's and the organizer's only (null for anyone else)."""


class BotAnswer(Answer):
    bot: str
    owner: str | None
    versions: list[VersionRow]
    standing: list[LeaderboardRow]
    against: list[Against]
    chart: str
    """Its versions' ratings over time, as SVG."""
    recent_matches: list[MatchRow]
    faults: BotFaults
    uploads: list[UploadRow] | None
    logs_visible: bool


API_ANSWERS: dict[tuple[str, str], type[BaseModel]] = {
    ("GET", "/api/me"): Me,
    ("POST", "/api/bots"): UploadAccepted,
    ("GET", "/api/uploads/{upload_id}"): UploadStatus,
    ("GET", "/api/rules"): RulesAnswer,
    ("GET", "/api/matches"): MatchesPage,
    ("GET", "/api/matches/{match_id}"): MatchAnswer,
    ("GET", "/api/leaderboard"): LeaderboardAnswer,
    ("GET", "/api/bots/{name}"): BotAnswer,
}
"""Each JSON route's answer (the record route answers JSON Lines, described as text)."""


_AS_SENT = TypeAdapter(dict[str, Any])


def answer(data: dict[str, Any], status_code: int = 200) -> JSONResponse:
    """``data`` as the JSON API has always sent it (serialized as a plain JSON object, in
    pydantic's JSON mode, as FastAPI serialized the routes' untyped answers): the route's
    ``response_model`` describes it, and changes nothing in it."""
    return JSONResponse(_AS_SENT.dump_python(data, mode="json"), status_code=status_code)
