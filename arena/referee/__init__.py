"""The referee: a grpc.aio server that deals, asks each seat to move, enforces the rules and
the clock, records faults, and writes a replayable record of every match."""

from .service import RefereeServer
from .session import MatchSession, SeatSpec, TimeControl

__all__ = ["MatchSession", "RefereeServer", "SeatSpec", "TimeControl"]
