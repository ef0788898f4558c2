"""Train a small Big Two policy with REINFORCE against random bots, on CPU, numpy only.

    python examples/train_reinforce.py                      # ~10 CPU minutes at most
    python examples/train_reinforce.py --hands 2000 --out /tmp/w.npz

The policy (examples/reinforce_bot/reinforce_policy.py) scores each legal action by a
linear function of its features and plays a softmax over them; it starts uniform over the
legal moves, i.e. exactly the sample ``random`` bot.  It learns in
:class:`bigtwo.env.BigTwoGymEnv` — one seat, the other seats the sample ``random`` bot —
from each hand's score (the reward), with a running-mean baseline and Adam.  Every
``--eval-every`` hands it prints its points per hand on fixed evaluation deals (the same
deals and the same random opponents each time: the curve), and at the end it saves the
weights where ``examples/reinforce_bot/bot.py`` reads them, so the bot plays in the arena:

    arena compare examples/reinforce_bot random --max-matches 64
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE / "reinforce_bot"))

from reinforce_policy import LinearPolicy  # noqa: E402

from bigtwo import Bot, deal, play_local  # noqa: E402
from bigtwo.env import BigTwoGymEnv, PolicyBot, sample_bot  # noqa: E402
from bigtwo.env.aec import rules_of  # noqa: E402


def evaluate(policy: LinearPolicy, rules: str, deals: int, seed: int = 12345) -> float:
    """Points per hand of ``policy`` (greedy: its most likely action) at seat 0 against
    seeded random bots, on ``deals`` fixed deals: the same deals and opponents every call,
    so two policies' figures differ only by how they play."""
    return evaluate_bot(lambda: PolicyBot(policy), rules, deals, seed)


def evaluate_bot(make: Callable[[], Bot], rules: str, deals: int, seed: int = 12345) -> float:
    """Points per hand of the bot ``make()`` at seat 0 on :func:`evaluate`'s deals and
    opponents (``evaluate_bot(lambda: sample_bot("random"), ...)``: the baseline)."""
    ruleset = rules_of(rules)
    total = 0
    for d in range(deals):
        opponents = [sample_bot("random", seed=seed + 7 * d + s) for s in range(1, ruleset.players)]
        result = play_local(
            [make(), *opponents],
            ruleset,
            deals=[deal(ruleset, f"eval-{seed}", d)],
            strict=True,
        )
        total += result.scores[0]
    return total / deals


def train(
    hands: int,
    rules: str = "hk",
    seed: int = 0,
    batch: int = 16,
    lr: float = 0.05,
    eval_every: int = 0,
    eval_deals: int = 200,
    minutes: float = 10.0,
    log: bool = True,
) -> tuple[LinearPolicy, list[tuple[int, float]]]:
    """Train for ``hands`` hands (or ``minutes`` of CPU time); returns the policy and the
    curve ``[(hands trained, points per evaluation hand), ...]``."""
    rng = np.random.default_rng(seed)
    env = BigTwoGymEnv(rules, seed=seed, seat=None)  # a random seat each hand
    policy = LinearPolicy()
    w = policy.weights
    m = np.zeros_like(w)
    v = np.zeros_like(w)
    baseline = 0.0
    grad = np.zeros_like(w)
    curve: list[tuple[int, float]] = []
    start = time.process_time()
    step = 0
    if eval_every:
        curve.append((0, evaluate(policy, rules, eval_deals)))
        if log:
            print(f"hands {0:6d}  points/hand on the evaluation deals {curve[-1][1]:+7.2f}")
    for hand in range(1, hands + 1):
        obs, _ = env.reset()
        chosen = []  # (features, row) of each of the learner's decisions
        reward, done = 0.0, False
        while not done:
            action, f, row = policy.sample(obs["observation"], obs["action_mask"], rng)
            chosen.append((f, row))
            obs, r, done, _, _ = env.step(action)
            reward += r
        g = reward / 20.0  # hk penalties are tens of points: keep the steps moderate
        advantage = g - baseline
        baseline += 0.02 * (g - baseline)
        for f, row in chosen:  # d log softmax / d w = f[row] - E_pi[f]
            p = policy.probabilities(f)
            grad += advantage * (f[row] - p @ f)
        if hand % batch == 0:
            step += 1
            gr = grad / batch
            m = 0.9 * m + 0.1 * gr
            v = 0.999 * v + 0.001 * gr * gr
            w += lr * (m / (1 - 0.9**step)) / (np.sqrt(v / (1 - 0.999**step)) + 1e-8)
            grad[:] = 0
        if eval_every and hand % eval_every == 0:
            curve.append((hand, evaluate(policy, rules, eval_deals)))
            if log:
                print(f"hands {hand:6d}  points/hand on the evaluation deals {curve[-1][1]:+7.2f}",
                      flush=True)  # fmt: skip
        if time.process_time() - start > minutes * 60:
            if log:
                print(f"stopping after {hand} hands: {minutes:g} CPU minutes")
            break
    return policy, curve


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hands", type=int, default=20000, help="hands to train on")
    parser.add_argument("--minutes", type=float, default=10.0, help="CPU time limit")
    parser.add_argument("--rules", default="hk", help="a preset name")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--eval-every", type=int, default=1000)
    parser.add_argument("--eval-deals", type=int, default=200)
    parser.add_argument(
        "--out", default=str(HERE / "reinforce_bot" / "weights.npz"), help="weights file"
    )
    args = parser.parse_args()
    policy, _curve = train(
        args.hands, args.rules, args.seed, eval_every=args.eval_every,
        eval_deals=args.eval_deals, minutes=args.minutes,
    )  # fmt: skip
    policy.save(args.out)
    print(f"saved {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
