"""Answers every turn it is asked, then answers old turns again and again (by patching the
SDK it runs in): late answers must not be free, nor count as round trips."""

import bigtwo.client as client
from bigtwo import Bot
from bigtwo.v1 import referee_pb2 as pb

STALE = 10  # per turn; fewer than the inbox holds, so the referee reads every one

_real = client._handle


async def _late(bot, call, view, msg):
    result = await _real(bot, call, view, msg)
    if msg.WhichOneof("msg") == "turn":
        turn = msg.turn.turn_id
        for i in range(STALE):  # this turn again, then the ones before it
            await call.write(pb.BotMessage(action=pb.Action(turn_id=max(1, turn - i))))
    return result


client._handle = _late


class LateFlooder(Bot):
    def act(self, observation):
        return observation.legal_moves[0]
