"""The bot side of the wire: connect to a referee, keep this seat's view of the match from
the referee's messages, and answer every turn request with the bot's choice.

The view is rebuilt only from what the referee sends this seat (its own cards and public
events), so a bot cannot learn more than its seat may know.  Errors in the bot's own code
are caught here, logged on the bot's side, and reported to the referee, which records the
fault; the connection survives.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import hashlib
import logging
import socket
import ssl
import time
import traceback
from collections.abc import Iterable
from typing import Any

import grpc

from .answers import InvalidReturn, encode_move, folder_of
from .bot import Bot
from .cards import CARDS, cards_from_mask
from .combos import PASS, Combination
from .game import Action, HandResult
from .legality import Position
from .loader import describe_error
from .observation import Observation
from .rules import RuleSet
from .scoring import winning_team
from .v1 import referee_pb2 as pb
from .v1 import referee_pb2_grpc as pb_grpc
from .wire import PROTOCOL_VERSION, rules_from_pb

log = logging.getLogger("bigtwo.client")

MAX_MESSAGE_BYTES = 1 << 20
"""Largest message the client sends or accepts (the referee's own limit is smaller)."""


class SeatView:
    """One seat's knowledge of the match, kept from the referee's messages."""

    def __init__(self, start: pb.MatchStart) -> None:
        self.rules: RuleSet = rules_from_pb(start.rules)
        self.seat = start.seat
        self.players = start.players
        self.match_id = start.match_id
        self.seat_names = tuple(start.seat_names)
        self.time_control = start.time_control
        self.hand_no = 0
        self.hand_mask = 0
        self.cards_left = [0] * self.players
        self.history: list[Action] = []
        self.scores = [0] * self.players
        self.results: list[HandResult] = []
        self.trick: Combination | None = None
        self.trick_owner: int | None = None
        # the hand's leader and opening card (HandStart): what a hook observation at the
        # deal shows, as the engine's own observation does; -1/None before the first deal
        self.leader = -1
        self.opening_card: Any = None
        self.position = Position(self.rules, self.seat, 0, list(self.cards_left))
        self._sorted: tuple[Any, ...] = ()
        self._sorted_mask = 0
        self._results: tuple[HandResult, ...] = ()

    def _combo(self, ids: Iterable[int]) -> Combination:
        ids = tuple(ids)
        trick = self.trick
        if trick is not None:  # the play to beat is usually the last one seen: reuse it
            mask = 0
            for i in ids:
                mask |= 1 << i
            if mask == trick.mask:
                return trick
        combo = self.rules.tables.classify(ids) if all(0 <= i < 52 for i in ids) else None
        if combo is None:
            raise ValueError(f"referee sent a play that is no combination: {list(ids)}")
        return combo

    def hand_start(self, msg: pb.HandStart) -> None:
        """Take a new deal: my cards, the counts, the leader and the opening card, and a fresh
        :class:`Position` so legal moves are computed from this hand alone."""
        self.hand_no = msg.hand
        self.hand_mask = 0
        for i in msg.cards:
            self.hand_mask |= 1 << CARDS[i]
        self.cards_left = list(msg.cards_left)
        self.trick = None
        self.trick_owner = None
        self.leader = msg.leader
        self.opening_card = CARDS[msg.must_include] if msg.must_include >= 0 else None
        self.position = Position(self.rules, self.seat, self.hand_mask, self.cards_left)

    def move(self, msg: pb.MoveEvent) -> Action:
        """Apply a public move to this seat's view and return it as an :class:`Action` for the
        bot's ``on_event``; the referee already judged it, so nothing is re-checked here beyond
        the play being a combination."""
        if getattr(msg, "pass"):  # "pass" is a Python keyword
            action = Action(msg.hand, msg.seat, PASS, msg.lead)
        else:
            combo = self._combo(msg.cards)
            action = Action(msg.hand, msg.seat, combo, msg.lead)
            self.cards_left[msg.seat] -= len(combo.cards)
            if msg.seat == self.seat:
                self.hand_mask &= ~combo.mask
            self.trick = combo
            self.trick_owner = msg.seat
        self.history.append(action)
        return action

    def trick_won(self, msg: pb.TrickWon) -> None:
        """Everyone else passed: the table is clear and the winner leads next."""
        self.trick = None
        self.trick_owner = None

    def hand_end(self, msg: pb.HandEnd) -> HandResult:
        """Close the hand and return its result as the bot sees it: only this seat's remaining
        cards, since the referee never reveals the others'."""
        mine = tuple(self.rules.sort_cards(cards_from_mask(self.hand_mask)))
        result = HandResult(
            hand=msg.hand,
            winner=msg.winner,
            cards_left=tuple(msg.cards_left),
            remaining=tuple(mine if s == self.seat else () for s in range(self.players)),
            penalties=tuple(msg.penalties),
            scores=tuple(msg.scores),
            cumulative=tuple(msg.cumulative),
            winning_team=winning_team(self.rules, msg.winner),
        )
        self.scores = list(msg.cumulative)
        self.results.append(result)
        return result

    def observation(self, turn: pb.TurnRequest | None = None) -> Observation:
        """The bot's observation; with a turn request, including the legal moves.  Without
        one (the hooks at match and hand start) it shows the deal's leader and opening card,
        field for field what :func:`bigtwo.play_local` gives in-process."""
        legal: tuple[Any, ...] = ()
        to_beat = None
        must = self.opening_card
        reversed_ = False
        locked: frozenset[int] = frozenset()
        if turn is not None:
            self.cards_left = list(turn.cards_left)
            to_beat = self._combo(turn.to_beat) if turn.to_beat else None
            must = CARDS[turn.must_include] if turn.must_include >= 0 else None
            reversed_ = turn.reversed
            locked = frozenset(turn.locked_out)
            p = self.position
            p.hand = self.hand_mask
            p.cards_left = self.cards_left
            p.to_beat = to_beat
            p.must_include = must
            p.reversed = reversed_
            p.first_trick = turn.first_trick
            p.lone_two_lifted = turn.lone_two_lifted
            legal = tuple(p.legal_moves())
        if self._sorted_mask != self.hand_mask:
            self._sorted = tuple(self.rules.sort_cards(cards_from_mask(self.hand_mask)))
            self._sorted_mask = self.hand_mask
        if len(self._results) != len(self.results):
            self._results = tuple(self.results)
        return Observation(
            rules=self.rules,
            seat=self.seat,
            hand=self._sorted,
            turn=self.seat if turn is not None else self.leader,
            trick=to_beat if turn is not None else self.trick,
            trick_owner=self.trick_owner,
            cards_left=tuple(self.cards_left),
            history=self.history,  # the view's own list: no copy per turn
            hand_no=self.hand_no,
            scores=tuple(self.scores),
            results=self._results,
            legal_moves=legal,
            must_include=must,
            locked_out=locked,
            reversed=reversed_,
        )


def decide(bot: Bot, turn_id: int, observation: Observation) -> pb.Action:
    """Ask the bot; turn whatever happens into an Action message."""
    try:
        move = bot.act(observation)
        is_pass, cards = encode_move(move)
    except InvalidReturn as exc:
        log.error("%s", exc)
        return pb.Action(
            turn_id=turn_id, error=pb.BOT_ERROR_INVALID_RETURN, error_detail=str(exc)[:1000]
        )
    except Exception as exc:  # the bot's own code failed: report it, keep the connection
        log.error("act() raised:\n%s", traceback.format_exc())
        detail = describe_error(exc, folder_of(bot))[:1000]
        return pb.Action(turn_id=turn_id, error=pb.BOT_ERROR_EXCEPTION, error_detail=detail)
    flags: dict[str, Any] = {"pass": is_pass}  # a Python keyword: only by name
    return pb.Action(turn_id=turn_id, cards=cards, **flags)


def _call_hook(hook: Any, *args: Any) -> None:
    try:
        hook(*args)
    except Exception:
        log.error("%s raised:\n%s", getattr(hook, "__name__", hook), traceback.format_exc())


def is_tcp(address: str) -> bool:
    """Whether ``address`` is a TCP one (``host:port``), where TLS applies; a Unix socket
    (``unix://…``, what the arena gives the bots it starts) never speaks TLS."""
    return not address.startswith(("unix:", "unix-abstract:"))


def channel(address: str, ca: bytes | None = None, options: Any = None) -> grpc.aio.Channel:
    """The channel to the referee: over TCP with ``ca`` (PEM), TLS that verifies the
    referee's certificate against that CA alone (the arena's own, whose fingerprint it
    prints), for the name or address dialled; else plain."""
    if ca is not None and is_tcp(address):
        creds = grpc.ssl_channel_credentials(root_certificates=ca)
        return grpc.aio.secure_channel(address, creds, options=options)
    return grpc.aio.insecure_channel(address, options=options)


async def play_match(
    bot: Bot, address: str, match_id: str, seat: int, token: str, ca: bytes | None = None
) -> pb.MatchEnd | None:
    """Connect, play the whole match, return its MatchEnd (None if the referee closed the
    stream first).  ``ca``: the arena's CA certificate (PEM) for a referee that speaks TLS
    (``arena match --listen``).  gRPC errors propagate as ``grpc.aio.AioRpcError``
    (:func:`explain` says what one means)."""
    options = [
        ("grpc.max_send_message_length", MAX_MESSAGE_BYTES),
        ("grpc.max_receive_message_length", MAX_MESSAGE_BYTES),
    ]
    tls = ca is not None and is_tcp(address)
    log.info("connecting to %s for seat %d%s", address, seat, " over TLS" if tls else "")
    started = time.monotonic()
    async with channel(address, ca, options) as chan:
        stub = pb_grpc.RefereeStub(chan)  # type: ignore[no-untyped-call]  # generated, untyped
        call = stub.Play()
        await call.write(
            pb.BotMessage(
                hello=pb.Hello(
                    match_id=match_id,
                    seat=seat,
                    token=token,
                    bot_name=bot.display_name,
                    bot_version=str(bot.version),
                    protocol_version=PROTOCOL_VERSION,
                )
            )
        )
        view: SeatView | None = None
        while True:
            batch = await call.read()
            if batch is grpc.aio.EOF:
                return None
            if view is None:  # the referee accepted the Hello: the seat is ours
                log.info("seat %d taken %.3f s after connecting", seat, time.monotonic() - started)
            for msg in batch.messages:
                view, end = await _handle(bot, call, view, msg)
                if end is not None:
                    await call.done_writing()
                    return end


async def _handle(
    bot: Bot, call: Any, view: SeatView | None, msg: pb.RefereeMessage
) -> tuple[SeatView | None, pb.MatchEnd | None]:
    """Handle one message of a batch; returns the (new) view, and the MatchEnd when over."""
    kind = msg.WhichOneof("msg")
    if kind == "match_start":
        # everything loaded so far lives as long as the process: keep it out of the
        # collector's scans, so garbage collection pauses stay short during play
        gc.freeze()
        view = SeatView(msg.match_start)
        bot.move_ms = view.time_control.move_ms or None  # the allowance, for bots that search
        _call_hook(bot.on_match_start, view.observation())
        return view, None
    if view is None:
        raise RuntimeError(f"referee sent {kind} before match_start")
    if kind == "turn":
        action = decide(bot, msg.turn.turn_id, view.observation(msg.turn))
        await call.write(pb.BotMessage(action=action))
    elif kind == "move":
        _call_hook(bot.on_event, view.move(msg.move))
    elif kind == "hand_start":
        view.hand_start(msg.hand_start)
        _call_hook(bot.on_hand_start, view.observation())
    elif kind == "trick_won":
        view.trick_won(msg.trick_won)
    elif kind == "hand_end":
        _call_hook(bot.on_hand_end, view.hand_end(msg.hand_end))
    elif kind == "fault":
        f = msg.fault
        log.warning("referee fault: %s (%s), strikes %d", f.kind, f.detail, f.strikes)
        _call_hook(bot.on_fault, f.kind, f.detail)
    elif kind == "match_end":
        end = msg.match_end
        _call_hook(bot.on_match_end, tuple(end.scores), tuple(end.places))
        return view, end
    return view, None


def run(
    bot: Bot, address: str, match_id: str, seat: int, token: str, ca: bytes | None = None
) -> pb.MatchEnd | None:
    """Blocking wrapper around :func:`play_match`."""
    return asyncio.run(play_match(bot, address, match_id, seat, token, ca))


TLS_NEEDED = "the referee speaks TLS: run with --ca FILE (printed by arena)"


def fingerprint(ca: bytes) -> str:
    """SHA-256 of the (first) certificate in a PEM file, as the arena prints it."""
    with contextlib.suppress(ValueError):
        der = ssl.PEM_cert_to_DER_cert(ca.decode("ascii", "replace").strip())
        digest = hashlib.sha256(der).hexdigest().upper()
        return ":".join(digest[i : i + 2] for i in range(0, len(digest), 2))
    return "?"


def explain(
    code: str, details: str, address: str, ca: bytes | None, ca_name: str = "the CA file"
) -> str:
    """What a failed call means for the person running the bot.  When the referee could
    not be reached over TCP, one more connection asks it how it speaks: TLS to a plain
    client (no ``--ca``), a certificate the CA does not vouch for, or plain TCP to a TLS
    client."""
    said = f"{code}: {details}"
    if code != "UNAVAILABLE" or not is_tcp(address):
        return said
    if "speaks TLS" in details:
        return TLS_NEEDED
    host, port = _host_port(address)
    if host is None:
        return said
    probe = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    probe.set_alpn_protocols(["h2"])
    if ca is None:
        probe.check_hostname = False
        probe.verify_mode = ssl.CERT_NONE
    else:
        try:
            probe.load_verify_locations(cadata=ca.decode("ascii", "replace"))
        except (ssl.SSLError, ValueError) as exc:
            return f"{ca_name} is not a usable CA certificate: {exc}"
    try:
        with (
            socket.create_connection((host, port), timeout=5) as raw,
            probe.wrap_socket(raw, server_hostname=host),
        ):
            pass
    except ssl.SSLCertVerificationError as exc:
        if exc.verify_code == 62:  # X509_V_ERR_HOSTNAME_MISMATCH (and IP address mismatch)
            return (
                f"the referee's certificate does not name {host}: dial the address the "
                f"arena printed, or have it add --tls-name {host} ({exc.verify_message})"
            )
        return (
            f"the referee's certificate is not vouched for by {ca_name} "
            f"({exc.verify_message}): that file's SHA-256 fingerprint is "
            f"{fingerprint(ca or b'')} — is it the one the arena printed?"
        )
    except (ssl.SSLError, ConnectionError) as exc:
        if ca is not None:
            return (
                f"the referee does not speak TLS (an arena started with --insecure?): "
                f"run without --ca ({type(exc).__name__}: {exc})"
            )
        return said
    except OSError:
        return said
    return TLS_NEEDED if ca is None else said


def _host_port(address: str) -> tuple[str | None, int]:
    address = address.removeprefix("dns:///").removeprefix("ipv4:").removeprefix("ipv6:")
    host, _, port = address.rpartition(":")
    if not host or not port.isdigit():
        return None, 0
    return host.strip("[]"), int(port)
