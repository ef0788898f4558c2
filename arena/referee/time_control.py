"""The clock a match is played under: what every seat may spend, and how many faults it may
make before it forfeits.

Its own module because everything above the referee sets it — the CLI's options, the
ladder, the web's tables and validation matches — while the match loop (:mod:`.session`)
and the seats' start message (:mod:`.messages`) only read it: none of them need the match
loop to name a time control."""

from __future__ import annotations

from dataclasses import asdict, dataclass

from bigtwo.v1 import referee_pb2 as pb


@dataclass(frozen=True)
class TimeControl:
    """Per-move allowance, a per-match bank spent when a move overruns it, the allowance
    from launch to Hello, and the strikes that forfeit a seat."""

    move_ms: int = 1000
    bank_ms: int = 10_000
    startup_ms: int = 15_000
    max_strikes: int = 3

    def __post_init__(self) -> None:
        for name in ("move_ms", "bank_ms", "startup_ms", "max_strikes"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise ValueError(f"time control {name} must be a whole number ≥ 0, got {value!r}")
        if self.move_ms == 0 or self.startup_ms == 0 or self.max_strikes == 0:
            raise ValueError("move_ms, startup_ms and max_strikes must be at least 1")

    def to_pb(self) -> pb.TimeControl:
        return pb.TimeControl(**asdict(self))
