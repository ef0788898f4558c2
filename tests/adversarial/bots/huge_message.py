"""Sends an 8 MiB message (the referee accepts 64 KiB)."""

import bigtwo.client as client
from bigtwo import Bot
from bigtwo.v1 import referee_pb2 as pb

_real = client._handle


async def _huge(bot, call, view, msg):
    if msg.WhichOneof("msg") == "turn":
        detail = "x" * (8 << 20)
        await call.write(
            pb.BotMessage(action=pb.Action(turn_id=msg.turn.turn_id, error_detail=detail))
        )
    return await _real(bot, call, view, msg)


client._handle = _huge
client.MAX_MESSAGE_BYTES = 64 << 20


class Huge(Bot):
    def act(self, observation):
        return observation.legal_moves[0]
