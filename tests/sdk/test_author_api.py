"""The bot author's API (issue 10): typed, documented, names instead of magic strings and
numbers, one name for the play to beat, the order of ``legal_moves`` kept as documented, and
the SDK README a guide whose examples run."""

import ast
import random
import re
import tomllib
import typing
import warnings
from pathlib import Path

import pytest

import bigtwo
from bigtwo import (
    BOMBS,
    FOUR_OF_A_KIND,
    PASS,
    STRAIGHT_FLUSH,
    Bot,
    Card,
    Category,
    Game,
    Move,
    Observation,
    Rank,
    RuleSet,
    Suit,
)

ROOT = Path(__file__).resolve().parents[2]
SDK = ROOT / "sdk"


def test_the_package_is_typed():
    assert (SDK / "bigtwo" / "py.typed").is_file()
    config = tomllib.loads((SDK / "pyproject.toml").read_text())
    assert "py.typed" in config["tool"]["setuptools"]["package-data"]["bigtwo"]


def test_act_is_typed_to_return_a_move():
    hints = typing.get_type_hints(Bot.act)
    assert hints["return"] == Move and hints["observation"] is Observation


def test_every_observation_field_is_documented():
    tree = ast.parse((SDK / "bigtwo" / "observation.py").read_text())
    cls = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Observation")
    body = cls.body
    documented = {}
    for i, node in enumerate(body):
        if isinstance(node, ast.AnnAssign):
            nxt = body[i + 1] if i + 1 < len(body) else None
            doc = (
                nxt.value.value
                if isinstance(nxt, ast.Expr) and isinstance(nxt.value, ast.Constant)
                else ""
            )
            documented[node.target.id] = doc
    fields = {f.name for f in Observation.__dataclass_fields__.values()}
    assert set(documented) == fields
    assert [name for name, doc in documented.items() if len(doc) < 20] == []
    order = documented["legal_moves"]
    for words in ("leading", "following", "pass is always last", "ascending ``key``", "reversed"):
        assert words in order, words


def test_rank_suit_and_category_names_are_exported():
    assert Card("AS").rank is Rank.ACE and Rank.ACE == 11 and Card("2D").rank is Rank.TWO
    assert Card("3D").suit is Suit.DIAMONDS and Card("3S").suit is Suit.SPADES
    assert [r.name for r in Rank][:2] == ["THREE", "FOUR"] and len(Rank) == 13
    assert f"{Card('KH').rank}" == "10"  # still an int where an int was printed
    for cat in Category:
        assert getattr(bigtwo, cat.name) is cat
    assert {FOUR_OF_A_KIND, STRAIGHT_FLUSH} == BOMBS
    heuristic = (ROOT / "sample_bots" / "heuristic" / "bot.py").read_text()
    assert ".name in (" not in heuristic and "rank >= 11" not in heuristic
    assert "Rank.KING" in heuristic and "BOMBS" in heuristic


def test_game_trick_is_the_one_name():
    g = Game(RuleSet.preset("hk"), seed=3)
    g.apply(g.legal_moves()[0])
    assert g.trick is not None and g.observation(g.turn).trick == g.trick
    assert not hasattr(g, "current")  # the deprecated alias is gone
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        g.trick  # noqa: B018 — the name does not warn


def _check_order(obs: Observation) -> None:
    """``legal_moves`` in the documented order."""
    moves = list(obs.legal_moves)
    assert moves, "act's observation always has a move"
    if PASS in moves:
        assert moves[-1] is PASS and moves.count(PASS) == 1
        moves = moves[:-1]
    if obs.trick is None:
        sizes = [m.size for m in moves]
        assert sizes == sorted(sizes)  # singles, pairs, triples, five-card hands
        groups = [[m for m in moves if m.size == n] for n in (1, 2, 3, 5)]
        if obs.must_include is not None:
            assert all(obs.must_include in m.cards for m in moves)
    else:
        same = [m for m in moves if m.size == obs.trick.size]
        bombs = [m for m in moves if m.size != obs.trick.size]
        assert moves == same + bombs and all(m.category in BOMBS for m in bombs)
        groups = [same, bombs]
    for group in groups:
        keys = [m.key for m in group]
        assert keys == sorted(keys)


@pytest.mark.parametrize(
    "rules",
    [
        RuleSet.preset("hk"),
        RuleSet.preset("family").replace(bombs="anywhere", revolution=True),
        RuleSet.preset("pusoy").replace(players=3, no_pass_first_trick=True),
    ],
    ids=["hk", "family+bombs+revolution", "pusoy3"],
)
def test_legal_moves_keep_the_documented_order(rules):
    seen_reversed = seen_bombs = 0
    for seed in range(60):
        g = Game(rules.replace(match_end="hands", match_end_value=1), seed=seed)
        rng = random.Random(seed)
        while not g.hand_over:
            obs = g.observation(g.turn)
            _check_order(obs)
            seen_reversed += obs.reversed
            seen_bombs += obs.trick is not None and any(
                m.size != obs.trick.size for m in obs.legal_moves if m is not PASS
            )
            plays = [m for m in obs.legal_moves if m is not PASS]
            # prefer big plays now and then, so revolutions and bombs happen
            pick = max(plays, key=lambda m: m.size) if plays and rng.random() < 0.3 else None
            g.apply(pick or rng.choice(obs.legal_moves))
    if rules.revolution:
        assert seen_reversed and seen_bombs  # the cases the order is subtle in were met


def test_the_sdk_readme_is_a_guide_whose_examples_run(monkeypatch, capsys):
    text = (SDK / "README.md").read_text()
    for topic in (
        "## Install",
        "## The Bot class",
        "## What a bot sees",
        "### The order of `legal_moves`",
        "## Hooks",
        "play_local",
        "## Test against the sample bots",
        "arena match",
        "--logs",
        "--sandbox inproc",
        "## Common mistakes",
        "deals=[",
    ):
        assert topic in text, topic
    for name in Observation.__dataclass_fields__:
        assert f"| `{name}` |" in text, name
    for hook in ("on_match_start", "on_hand_start", "on_event", "on_hand_end", "on_match_end"):
        assert f"`{hook}(" in text, hook
    assert "`on_fault(kind, detail)`" in text
    blocks = re.findall(r"```python\n(.*?)```", text, re.S)
    assert len(blocks) >= 5
    monkeypatch.chdir(ROOT)  # the examples load the sample bots from the repository
    namespace: dict = {"__name__": "sdk_readme"}
    for i, block in enumerate(blocks):
        exec(compile(block, f"sdk/README.md python block {i + 1}", "exec"), namespace)
    assert "my points over 20 matches" in capsys.readouterr().out


def test_the_root_readme_points_at_the_guide():
    text = (ROOT / "README.md").read_text()
    section = text[text.index("## Writing a bot") :]
    section = section[: section.index("\n## ", 1)]
    assert "sdk/README.md" in section and "class MyBot" not in section
