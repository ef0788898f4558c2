"""Reads past the end of its legal moves in every act()."""

from bigtwo import Bot


class OffByMany(Bot):
    def act(self, observation):
        return pick(observation.legal_moves)


def pick(moves):
    return moves[len(moves) + 5]
