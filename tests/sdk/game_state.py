"""A game's whole observable state as one comparable value, for "a refused move leaves
the state untouched" checks."""


def snapshot(g):
    return (
        g.turn,
        g.trick,
        g.last_player,
        tuple(g.counts),
        g.hands,
        len(g.history),
        g.hand_over,
        g.first_trick,
        g.reversed,
        g.locked_out,
        tuple(g.scores),
        g.must_include,
    )
