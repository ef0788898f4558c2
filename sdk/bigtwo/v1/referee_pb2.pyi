from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class BotError(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    BOT_ERROR_NONE: _ClassVar[BotError]
    BOT_ERROR_EXCEPTION: _ClassVar[BotError]
    BOT_ERROR_INVALID_RETURN: _ClassVar[BotError]
BOT_ERROR_NONE: BotError
BOT_ERROR_EXCEPTION: BotError
BOT_ERROR_INVALID_RETURN: BotError

class BotMessage(_message.Message):
    __slots__ = ("hello", "action")
    HELLO_FIELD_NUMBER: _ClassVar[int]
    ACTION_FIELD_NUMBER: _ClassVar[int]
    hello: Hello
    action: Action
    def __init__(self, hello: _Optional[_Union[Hello, _Mapping]] = ..., action: _Optional[_Union[Action, _Mapping]] = ...) -> None: ...

class Hello(_message.Message):
    __slots__ = ("match_id", "seat", "token", "bot_name", "bot_version", "protocol_version")
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    TOKEN_FIELD_NUMBER: _ClassVar[int]
    BOT_NAME_FIELD_NUMBER: _ClassVar[int]
    BOT_VERSION_FIELD_NUMBER: _ClassVar[int]
    PROTOCOL_VERSION_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    seat: int
    token: str
    bot_name: str
    bot_version: str
    protocol_version: int
    def __init__(self, match_id: _Optional[str] = ..., seat: _Optional[int] = ..., token: _Optional[str] = ..., bot_name: _Optional[str] = ..., bot_version: _Optional[str] = ..., protocol_version: _Optional[int] = ...) -> None: ...

class Action(_message.Message):
    __slots__ = ("turn_id", "cards", "error", "error_detail")
    TURN_ID_FIELD_NUMBER: _ClassVar[int]
    PASS_FIELD_NUMBER: _ClassVar[int]
    CARDS_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    ERROR_DETAIL_FIELD_NUMBER: _ClassVar[int]
    turn_id: int
    cards: _containers.RepeatedScalarFieldContainer[int]
    error: BotError
    error_detail: str
    def __init__(self, turn_id: _Optional[int] = ..., cards: _Optional[_Iterable[int]] = ..., error: _Optional[_Union[BotError, str]] = ..., error_detail: _Optional[str] = ..., **kwargs) -> None: ...

class RefereeBatch(_message.Message):
    __slots__ = ("messages",)
    MESSAGES_FIELD_NUMBER: _ClassVar[int]
    messages: _containers.RepeatedCompositeFieldContainer[RefereeMessage]
    def __init__(self, messages: _Optional[_Iterable[_Union[RefereeMessage, _Mapping]]] = ...) -> None: ...

class RefereeMessage(_message.Message):
    __slots__ = ("match_start", "hand_start", "move", "trick_won", "hand_end", "match_end", "turn", "fault")
    MATCH_START_FIELD_NUMBER: _ClassVar[int]
    HAND_START_FIELD_NUMBER: _ClassVar[int]
    MOVE_FIELD_NUMBER: _ClassVar[int]
    TRICK_WON_FIELD_NUMBER: _ClassVar[int]
    HAND_END_FIELD_NUMBER: _ClassVar[int]
    MATCH_END_FIELD_NUMBER: _ClassVar[int]
    TURN_FIELD_NUMBER: _ClassVar[int]
    FAULT_FIELD_NUMBER: _ClassVar[int]
    match_start: MatchStart
    hand_start: HandStart
    move: MoveEvent
    trick_won: TrickWon
    hand_end: HandEnd
    match_end: MatchEnd
    turn: TurnRequest
    fault: Fault
    def __init__(self, match_start: _Optional[_Union[MatchStart, _Mapping]] = ..., hand_start: _Optional[_Union[HandStart, _Mapping]] = ..., move: _Optional[_Union[MoveEvent, _Mapping]] = ..., trick_won: _Optional[_Union[TrickWon, _Mapping]] = ..., hand_end: _Optional[_Union[HandEnd, _Mapping]] = ..., match_end: _Optional[_Union[MatchEnd, _Mapping]] = ..., turn: _Optional[_Union[TurnRequest, _Mapping]] = ..., fault: _Optional[_Union[Fault, _Mapping]] = ...) -> None: ...

class Rules(_message.Message):
    __slots__ = ("players", "direction", "suit_order", "opening", "allow_triples", "five_card_hands", "straights", "lowest_straight_tops", "flush_compare", "bombs", "pass_locks_out", "alert_rule", "no_pass_first_trick", "revolution", "no_lone_two_finish", "scoring", "twos_double_penalty", "match_end", "match_end_value", "teams")
    PLAYERS_FIELD_NUMBER: _ClassVar[int]
    DIRECTION_FIELD_NUMBER: _ClassVar[int]
    SUIT_ORDER_FIELD_NUMBER: _ClassVar[int]
    OPENING_FIELD_NUMBER: _ClassVar[int]
    ALLOW_TRIPLES_FIELD_NUMBER: _ClassVar[int]
    FIVE_CARD_HANDS_FIELD_NUMBER: _ClassVar[int]
    STRAIGHTS_FIELD_NUMBER: _ClassVar[int]
    LOWEST_STRAIGHT_TOPS_FIELD_NUMBER: _ClassVar[int]
    FLUSH_COMPARE_FIELD_NUMBER: _ClassVar[int]
    BOMBS_FIELD_NUMBER: _ClassVar[int]
    PASS_LOCKS_OUT_FIELD_NUMBER: _ClassVar[int]
    ALERT_RULE_FIELD_NUMBER: _ClassVar[int]
    NO_PASS_FIRST_TRICK_FIELD_NUMBER: _ClassVar[int]
    REVOLUTION_FIELD_NUMBER: _ClassVar[int]
    NO_LONE_TWO_FINISH_FIELD_NUMBER: _ClassVar[int]
    SCORING_FIELD_NUMBER: _ClassVar[int]
    TWOS_DOUBLE_PENALTY_FIELD_NUMBER: _ClassVar[int]
    MATCH_END_FIELD_NUMBER: _ClassVar[int]
    MATCH_END_VALUE_FIELD_NUMBER: _ClassVar[int]
    TEAMS_FIELD_NUMBER: _ClassVar[int]
    players: int
    direction: str
    suit_order: str
    opening: str
    allow_triples: bool
    five_card_hands: bool
    straights: str
    lowest_straight_tops: bool
    flush_compare: str
    bombs: str
    pass_locks_out: bool
    alert_rule: bool
    no_pass_first_trick: bool
    revolution: bool
    no_lone_two_finish: bool
    scoring: str
    twos_double_penalty: bool
    match_end: str
    match_end_value: int
    teams: bool
    def __init__(self, players: _Optional[int] = ..., direction: _Optional[str] = ..., suit_order: _Optional[str] = ..., opening: _Optional[str] = ..., allow_triples: _Optional[bool] = ..., five_card_hands: _Optional[bool] = ..., straights: _Optional[str] = ..., lowest_straight_tops: _Optional[bool] = ..., flush_compare: _Optional[str] = ..., bombs: _Optional[str] = ..., pass_locks_out: _Optional[bool] = ..., alert_rule: _Optional[bool] = ..., no_pass_first_trick: _Optional[bool] = ..., revolution: _Optional[bool] = ..., no_lone_two_finish: _Optional[bool] = ..., scoring: _Optional[str] = ..., twos_double_penalty: _Optional[bool] = ..., match_end: _Optional[str] = ..., match_end_value: _Optional[int] = ..., teams: _Optional[bool] = ...) -> None: ...

class TimeControl(_message.Message):
    __slots__ = ("move_ms", "bank_ms", "startup_ms", "max_strikes")
    MOVE_MS_FIELD_NUMBER: _ClassVar[int]
    BANK_MS_FIELD_NUMBER: _ClassVar[int]
    STARTUP_MS_FIELD_NUMBER: _ClassVar[int]
    MAX_STRIKES_FIELD_NUMBER: _ClassVar[int]
    move_ms: int
    bank_ms: int
    startup_ms: int
    max_strikes: int
    def __init__(self, move_ms: _Optional[int] = ..., bank_ms: _Optional[int] = ..., startup_ms: _Optional[int] = ..., max_strikes: _Optional[int] = ...) -> None: ...

class MatchStart(_message.Message):
    __slots__ = ("match_id", "seat", "players", "rules", "time_control", "seat_names")
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    PLAYERS_FIELD_NUMBER: _ClassVar[int]
    RULES_FIELD_NUMBER: _ClassVar[int]
    TIME_CONTROL_FIELD_NUMBER: _ClassVar[int]
    SEAT_NAMES_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    seat: int
    players: int
    rules: Rules
    time_control: TimeControl
    seat_names: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, match_id: _Optional[str] = ..., seat: _Optional[int] = ..., players: _Optional[int] = ..., rules: _Optional[_Union[Rules, _Mapping]] = ..., time_control: _Optional[_Union[TimeControl, _Mapping]] = ..., seat_names: _Optional[_Iterable[str]] = ...) -> None: ...

class HandStart(_message.Message):
    __slots__ = ("hand", "cards", "cards_left", "leader", "must_include")
    HAND_FIELD_NUMBER: _ClassVar[int]
    CARDS_FIELD_NUMBER: _ClassVar[int]
    CARDS_LEFT_FIELD_NUMBER: _ClassVar[int]
    LEADER_FIELD_NUMBER: _ClassVar[int]
    MUST_INCLUDE_FIELD_NUMBER: _ClassVar[int]
    hand: int
    cards: _containers.RepeatedScalarFieldContainer[int]
    cards_left: _containers.RepeatedScalarFieldContainer[int]
    leader: int
    must_include: int
    def __init__(self, hand: _Optional[int] = ..., cards: _Optional[_Iterable[int]] = ..., cards_left: _Optional[_Iterable[int]] = ..., leader: _Optional[int] = ..., must_include: _Optional[int] = ...) -> None: ...

class MoveEvent(_message.Message):
    __slots__ = ("hand", "seat", "cards", "lead", "category", "by_referee")
    HAND_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    PASS_FIELD_NUMBER: _ClassVar[int]
    CARDS_FIELD_NUMBER: _ClassVar[int]
    LEAD_FIELD_NUMBER: _ClassVar[int]
    CATEGORY_FIELD_NUMBER: _ClassVar[int]
    BY_REFEREE_FIELD_NUMBER: _ClassVar[int]
    hand: int
    seat: int
    cards: _containers.RepeatedScalarFieldContainer[int]
    lead: bool
    category: str
    by_referee: bool
    def __init__(self, hand: _Optional[int] = ..., seat: _Optional[int] = ..., cards: _Optional[_Iterable[int]] = ..., lead: _Optional[bool] = ..., category: _Optional[str] = ..., by_referee: _Optional[bool] = ..., **kwargs) -> None: ...

class TrickWon(_message.Message):
    __slots__ = ("hand", "seat")
    HAND_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    hand: int
    seat: int
    def __init__(self, hand: _Optional[int] = ..., seat: _Optional[int] = ...) -> None: ...

class HandEnd(_message.Message):
    __slots__ = ("hand", "winner", "cards_left", "penalties", "scores", "cumulative")
    HAND_FIELD_NUMBER: _ClassVar[int]
    WINNER_FIELD_NUMBER: _ClassVar[int]
    CARDS_LEFT_FIELD_NUMBER: _ClassVar[int]
    PENALTIES_FIELD_NUMBER: _ClassVar[int]
    SCORES_FIELD_NUMBER: _ClassVar[int]
    CUMULATIVE_FIELD_NUMBER: _ClassVar[int]
    hand: int
    winner: int
    cards_left: _containers.RepeatedScalarFieldContainer[int]
    penalties: _containers.RepeatedScalarFieldContainer[int]
    scores: _containers.RepeatedScalarFieldContainer[int]
    cumulative: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, hand: _Optional[int] = ..., winner: _Optional[int] = ..., cards_left: _Optional[_Iterable[int]] = ..., penalties: _Optional[_Iterable[int]] = ..., scores: _Optional[_Iterable[int]] = ..., cumulative: _Optional[_Iterable[int]] = ...) -> None: ...

class MatchEnd(_message.Message):
    __slots__ = ("scores", "places", "forfeited")
    SCORES_FIELD_NUMBER: _ClassVar[int]
    PLACES_FIELD_NUMBER: _ClassVar[int]
    FORFEITED_FIELD_NUMBER: _ClassVar[int]
    scores: _containers.RepeatedScalarFieldContainer[int]
    places: _containers.RepeatedScalarFieldContainer[int]
    forfeited: _containers.RepeatedScalarFieldContainer[bool]
    def __init__(self, scores: _Optional[_Iterable[int]] = ..., places: _Optional[_Iterable[int]] = ..., forfeited: _Optional[_Iterable[bool]] = ...) -> None: ...

class TurnRequest(_message.Message):
    __slots__ = ("turn_id", "hand", "move_ms_left", "bank_ms_left", "to_beat", "must_include", "cards_left", "reversed", "first_trick", "lone_two_lifted", "locked_out")
    TURN_ID_FIELD_NUMBER: _ClassVar[int]
    HAND_FIELD_NUMBER: _ClassVar[int]
    MOVE_MS_LEFT_FIELD_NUMBER: _ClassVar[int]
    BANK_MS_LEFT_FIELD_NUMBER: _ClassVar[int]
    TO_BEAT_FIELD_NUMBER: _ClassVar[int]
    MUST_INCLUDE_FIELD_NUMBER: _ClassVar[int]
    CARDS_LEFT_FIELD_NUMBER: _ClassVar[int]
    REVERSED_FIELD_NUMBER: _ClassVar[int]
    FIRST_TRICK_FIELD_NUMBER: _ClassVar[int]
    LONE_TWO_LIFTED_FIELD_NUMBER: _ClassVar[int]
    LOCKED_OUT_FIELD_NUMBER: _ClassVar[int]
    turn_id: int
    hand: int
    move_ms_left: int
    bank_ms_left: int
    to_beat: _containers.RepeatedScalarFieldContainer[int]
    must_include: int
    cards_left: _containers.RepeatedScalarFieldContainer[int]
    reversed: bool
    first_trick: bool
    lone_two_lifted: bool
    locked_out: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, turn_id: _Optional[int] = ..., hand: _Optional[int] = ..., move_ms_left: _Optional[int] = ..., bank_ms_left: _Optional[int] = ..., to_beat: _Optional[_Iterable[int]] = ..., must_include: _Optional[int] = ..., cards_left: _Optional[_Iterable[int]] = ..., reversed: _Optional[bool] = ..., first_trick: _Optional[bool] = ..., lone_two_lifted: _Optional[bool] = ..., locked_out: _Optional[_Iterable[int]] = ...) -> None: ...

class Fault(_message.Message):
    __slots__ = ("turn_id", "kind", "detail", "strikes", "forfeited")
    TURN_ID_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    DETAIL_FIELD_NUMBER: _ClassVar[int]
    STRIKES_FIELD_NUMBER: _ClassVar[int]
    FORFEITED_FIELD_NUMBER: _ClassVar[int]
    turn_id: int
    kind: str
    detail: str
    strikes: int
    forfeited: bool
    def __init__(self, turn_id: _Optional[int] = ..., kind: _Optional[str] = ..., detail: _Optional[str] = ..., strikes: _Optional[int] = ..., forfeited: _Optional[bool] = ...) -> None: ...
