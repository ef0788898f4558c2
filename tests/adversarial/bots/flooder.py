"""Floods its stream with out-of-turn actions and junk (by patching the SDK it runs in)."""

import bigtwo.client as client
from bigtwo import Bot
from bigtwo.v1 import referee_pb2 as pb

_real = client._handle


async def _flood(bot, call, view, msg):
    if msg.WhichOneof("msg") == "turn":
        for i in range(300):
            await call.write(pb.BotMessage(action=pb.Action(turn_id=10_000 + i)))
            await call.write(pb.BotMessage())
    return await _real(bot, call, view, msg)


client._handle = _flood


class Flooder(Bot):
    def act(self, observation):
        return observation.legal_moves[0]
