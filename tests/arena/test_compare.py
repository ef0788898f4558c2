"""`arena compare`: the sequential test on paired deals, end to end and statistically."""

import itertools
import json
import math
import multiprocessing
import random
import selectors
import signal
import subprocess
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import pytest
import typer

from arena import cli
from arena.ladder.compare import engine_samples, plan_budget, run_engine_compare
from arena.ladder.sprt import NELO_SCALE, SPRT
from bigtwo import RuleSet
from bigtwo.loader import load_bot_class

from testkit import arena, arena_command, arena_main

ROOT = Path(__file__).resolve().parents[2]
RAISER = str(ROOT / "tests" / "adversarial" / "bots" / "raiser.py")  # raises in every act()
SLEEPER = str(ROOT / "tests" / "adversarial" / "bots" / "sleeper.py")  # 0.6 s every move
RandomBot = load_bot_class(str(ROOT / "sample_bots" / "random"))


def compare(*args, as_json=True, in_process=False):
    """``arena compare`` with in-process bots; ``in_process``: run by ``arena.cli.main`` in
    this process (for bad input, which ends before any bot starts)."""
    options = ["--sandbox", "inproc", *(["--json"] if as_json else [])]
    if in_process:
        return arena_main("compare", *options, *args)
    return arena("compare", *options, *args, timeout=600)


def strict_json(text):
    """json.loads that refuses Infinity, -Infinity and NaN, as most parsers outside Python
    do; the output must also be exactly one line."""

    def refuse(constant):
        raise ValueError(f"not strict JSON: {constant}")

    assert text.count("\n") == 1 and text.endswith("\n"), text
    return json.loads(text, parse_constant=refuse)


def test_heuristic_is_better_than_random_within_its_budget():
    proc = compare("--elo1", "50", "--max-matches", "25", "heuristic", "random")
    assert proc.returncode == 0, proc.stderr
    verdict = json.loads(proc.stdout)
    assert verdict["decision"] == "better" and verdict["samples"] <= 100
    assert verdict["llr"] >= verdict["upper"] and verdict["elo_low"] > 0


def test_random_is_not_better_than_heuristic_within_its_budget():
    proc = compare("--elo1", "50", "--max-matches", "25", "random", "heuristic")
    assert proc.returncode == 1, proc.stderr
    verdict = json.loads(proc.stdout)
    assert verdict["decision"] == "not better" and verdict["llr"] <= verdict["lower"]


def test_undecided_at_the_budget_exits_2():
    proc = compare("--max-matches", "1", "--batch", "2", "random", "greedy")
    assert proc.returncode == 2 and json.loads(proc.stdout)["decision"] == "undecided"


def test_a_forfeit_stops_the_test():
    """The fallback that plays a forfeited seat is not the bot: a crashing NEW is not
    better (exit 1), a crashing OLD decides nothing (exit 2); both say why."""
    new_crashes = compare("--no-check", "--max-matches", "5", RAISER, "random")
    assert new_crashes.returncode == 1, new_crashes.stderr
    verdict = strict_json(new_crashes.stdout)  # no -Infinity for the interval of 0 samples
    assert verdict["decision"] == "not better" and "NEW (raiser) forfeited" in verdict["reason"]
    assert "RuntimeError: boom" in verdict["reason"]
    assert verdict["samples"] == 0 and verdict["elo_low"] is None and verdict["elo_high"] is None
    assert verdict["exit_code"] == 1
    old_crashes = compare("--no-check", "--max-matches", "5", "random", RAISER)
    assert old_crashes.returncode == 2, old_crashes.stderr
    assert "OLD (raiser)" in strict_json(old_crashes.stdout)["reason"]


@pytest.mark.parametrize("order", ["new", "old"])
def test_a_bot_that_fails_its_check_is_refused_before_any_sample(order):
    """Checked first (one hand against copies of itself): a bot that forfeits at once is
    bad input (64) with its own error, not a verdict and not a sample."""
    bots = [RAISER, "random"] if order == "new" else ["random", RAISER]
    proc = compare("--max-matches", "5", *bots)
    assert proc.returncode == 64, proc.stderr
    out = strict_json(proc.stdout)
    assert out["error"] == "refused" and out["decision"] is None
    which = "NEW" if order == "new" else "OLD"
    assert f"{which} (raiser) was refused" in out["message"]
    assert "RuntimeError: boom" in out["message"] and "raiser.py:" in out["message"]


BAD_INPUT = [  # arguments, what the error names
    (["--elo0", "5", "--elo1", "5", "random", "greedy"], "elo1"),
    (["--opponent", "random", "random", "greedy"], "1 opponents"),
    (["no_such_bot", "greedy"], "no_such_bot"),
    (["--rules", "no_such_preset", "random", "greedy"], "no_such_preset"),
    (["--set", "bombz=anywhere", "random", "greedy"], "bombz"),
    (["--sandbox", "nowhere", "random", "greedy"], "nowhere"),
    (["--alpha", "0.7", "random", "greedy"], "alpha"),
    # click's own usage errors: out of range, not a number, unknown option, missing argument
    (["--max-matches", "0", "random", "greedy"], "--max-matches"),
    (["--move-ms", "0", "random", "greedy"], "--move-ms"),
    (["--elo1", "ten", "random", "greedy"], "--elo1"),
    (["--no-such-option", "random", "greedy"], "--no-such-option"),
    (["random"], "OLD"),
]


@pytest.mark.parametrize(("args", "named"), BAD_INPUT)
def test_bad_input_exits_64_never_a_verdict_code(args, named):
    """Bad input is 64 (EX_USAGE), whoever finds it (the command or click), so that a CI
    script's 2 always means "undecided"; --json prints an error object, and without it
    stdout stays empty."""
    proc = compare(*args, in_process=True)
    assert proc.returncode == 64, (proc.returncode, proc.stderr)
    assert named in proc.stderr and "Traceback" not in proc.stderr
    error = strict_json(proc.stdout)
    assert error["exit_code"] == 64 and error["decision"] is None
    assert error["error"] == "bad input" and named in error["message"]
    plain = compare(*args, as_json=False, in_process=True)
    assert plain.returncode == 64 and plain.stdout == "" and named in plain.stderr


def test_help_documents_the_exit_codes_and_time_control():
    proc = compare("--help", as_json=False)
    assert proc.returncode == 0
    for words in ("0    better", "1    not better", "2    undecided", "64   bad input"):
        assert words in proc.stdout
    for option in ("--move-ms", "--bank-ms", "--startup-ms", "--max-strikes"):
        assert option in proc.stdout


def test_time_control_options_reach_the_referee():
    """--move-ms, --bank-ms and --max-strikes as for `arena match`: a bot that takes 0.6 s
    a move forfeits at its first move under 100 ms with no bank and one strike."""
    proc = compare(
        *("--move-ms", "100", "--bank-ms", "0", "--max-strikes", "1"),
        *("--max-matches", "1", "--batch", "1", "--no-check", SLEEPER, "random"),
    )  # (checked, it is refused for the same timeout: see the next test)
    assert proc.returncode == 1, proc.stderr
    verdict = strict_json(proc.stdout)
    assert verdict["decision"] == "not better" and "NEW (sleeper) forfeited" in verdict["reason"]
    assert "timeout" in verdict["reason"] and "100 ms" in verdict["reason"]


def test_the_check_plays_under_the_time_control_given():
    proc = compare("--move-ms", "100", "--bank-ms", "0", "--max-matches", "1", SLEEPER, "random")
    assert proc.returncode == 64, proc.stderr
    message = strict_json(proc.stdout)["message"]
    assert "NEW (sleeper) was refused" in message and "no action within 100 ms" in message


@pytest.mark.parametrize(("sig", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_an_interrupted_test_still_prints_json(sig, code):
    """Ctrl-C (130) or SIGTERM (143, a CI timeout): with --json, the test so far (decision
    "interrupted"), stopped mid-match."""
    proc = subprocess.Popen(
        [
            *arena_command("compare", "--sandbox", "inproc", "--json"),
            *("--max-matches", "100000", "random", "random"),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        with selectors.DefaultSelector() as ready:  # never wait for ever on a line
            ready.register(proc.stderr, selectors.EVENT_READ)
            assert ready.select(timeout=60), "nothing on stderr within 60 s"
        assert "expected deals" in proc.stderr.readline()  # printed as the test starts
        time.sleep(1.5)
        proc.send_signal(sig)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == code, err
    verdict = strict_json(out)
    assert verdict["decision"] == "interrupted" and verdict["exit_code"] == code
    assert verdict["new"] == "random" and verdict["budget"] == 400_000
    assert f"interrupted after {verdict['samples']} deals" in err


def _said_better(runs: range) -> list[bool]:
    """For each run of ``runs``: did random against itself, over the run's own fixed
    seeds, come out "better"?  (Module level: a worker process calls it.)"""
    rules = RuleSet.preset("hk")
    said = []
    for run in runs:
        counter = itertools.count()

        def make(run=run, counter=counter):
            return RandomBot(seed=f"{run}/{next(counter)}")

        samples = engine_samples(make, make, [make, make, make], rules, f"fp/{run}")
        verdict = run_engine_compare(samples, SPRT(elo0=0, elo1=150, alpha=0.05), 400)
        said.append(verdict.decision == "better")
    return said


@pytest.mark.slow
def test_false_positive_rate_of_random_against_itself_stays_near_alpha():
    """The same bot twice, over a fixed set of seeds: "better" about alpha of the time.
    The 60 runs are independent and seeded: two processes (one a core) take them one at a
    time, the same runs and verdicts in about half the time (2 of 60 say "better")."""
    runs = 60
    spawn = multiprocessing.get_context("spawn")  # not fork: this process has gRPC's threads
    with ProcessPoolExecutor(2, mp_context=spawn) as pool:
        parts = pool.map(_said_better, [range(run, run + 1) for run in range(runs)])
        said = [b for part in parts for b in part]
    better = sum(said)
    assert len(said) == runs
    # alpha = 0.05 plus sampling error over 60 runs
    assert better / runs <= 0.10, f"{better} of {runs} said better (at most {runs // 10})"


@pytest.mark.parametrize("elo1", [150.0, 100.0])
def test_few_deals_never_decide_on_a_tiny_variance_estimate(elo1):
    """With no minimum, a test decided after 2–3 samples whose spread happened to be small
    (|t̂| huge): a NEW equal to OLD was called "better" 12% (elo1 150) and 11% (elo1 100) of
    the time at α = 0.05.  2,000 tests on normal samples of true effect 0: the rate must be
    within three standard errors of α, and no test decides before its minimum."""
    rng = random.Random(f"minimum/{elo1}")
    runs, better, shortest = 2000, 0, math.inf
    for _ in range(runs):
        samples = (rng.gauss(0.0, 1.0) for _ in itertools.count())
        verdict = run_engine_compare(samples, SPRT(elo0=0, elo1=elo1, alpha=0.05), 100_000)
        better += verdict.decision == "better"
        shortest = min(shortest, verdict.samples)
    assert better / runs <= 0.05 + 3 * math.sqrt(0.05 * 0.95 / runs)
    assert shortest >= SPRT().minimum == 16


def test_the_minimum_is_checked():
    with pytest.raises(ValueError, match="minimum"):
        SPRT(minimum=1)
    test = SPRT(elo0=0, elo1=150, minimum=5)
    decisions = [test.add(x) for x in (1.0, 1.01, 0.99, 1.0, 1.02)]  # t̂ ≈ 100
    assert decisions == [None] * 4 + ["H1"]


def wald_asn(elo0, elo1, alpha, beta):
    """Wald's average sample numbers written out from the closed forms at H0, H1 and m = 0."""
    a, b = math.log(beta / (1 - alpha)), math.log((1 - beta) / alpha)
    delta = (elo1 - elo0) / NELO_SCALE
    return (
        ((1 - alpha) * a + alpha * b) / (-(delta**2) / 2),
        (beta * a + (1 - beta) * b) / (delta**2 / 2),
        -a * b / delta**2,
    )


@pytest.mark.parametrize(
    ("elo0", "elo1", "alpha", "beta"),
    [(0, 10, 0.05, 0.05), (0, 50, 0.05, 0.05), (-3, 7, 0.01, 0.2), (5, 150, 0.1, 0.05)],
)
def test_expected_samples_are_walds_approximation(elo0, elo1, alpha, beta):
    test = SPRT(elo0=elo0, elo1=elo1, alpha=alpha, beta=beta)
    asn = test.asn()
    h0, h1, mid = wald_asn(elo0, elo1, alpha, beta)
    assert asn["h0"] == pytest.approx(h0, rel=1e-9)
    assert asn["h1"] == pytest.approx(h1, rel=1e-9)
    assert asn["midpoint"] == pytest.approx(mid, rel=1e-9)
    # smooth through the midpoint (where the general formula is 0/0), finite far away
    near = [test.expected_samples((elo0 + elo1) / 2 + eps) for eps in (-1e-7, 1e-9, 1e-7, 1e-3)]
    assert near == pytest.approx([mid] * 4, rel=1e-4)
    assert test.expected_samples(1e6) == 16.0 and test.expected_samples(-1e6) == 16.0  # minimum
    # a true difference far above elo1 decides quickly, one in between slowly
    assert test.expected_samples(elo1 + 300) < asn["h1"] < asn["midpoint"] * 1.0001


def test_the_readme_bounds_take_thousands_of_deals():
    """The issue's numbers: at elo1 10 a decision takes thousands of deals; +186 nElo takes
    about 196 (the 200-deal budget), and halving elo1 − elo0 takes four times as many."""
    test = SPRT(elo0=0, elo1=10)
    assert 6000 < test.asn()["h0"] < 7000 and 6000 < test.asn()["h1"] < 7000
    assert 190 < test.expected_samples(186) < 200
    assert SPRT(elo0=0, elo1=5).asn()["h1"] == pytest.approx(4 * test.asn()["h1"])


@pytest.mark.parametrize("true_elo", [0.0, 25.0, 50.0])
def test_expected_samples_match_the_test_on_normal_samples(true_elo):
    """The prediction against the stopping rule itself, on normal samples whose normalized
    Elo is known (fast: no games; bench/compare.py checks engine samples)."""
    rng = random.Random(f"asn/{true_elo}")
    t = true_elo / NELO_SCALE
    lengths = []
    for _ in range(300):
        samples = (rng.gauss(t, 1.0) for _ in itertools.count())
        lengths.append(run_engine_compare(samples, SPRT(elo0=0, elo1=50), 100_000).samples)
    predicted = SPRT(elo0=0, elo1=50).expected_samples(true_elo)
    assert sum(lengths) / len(lengths) == pytest.approx(predicted, rel=0.15)


def test_a_budget_too_small_for_the_bounds_is_warned_about_with_advice():
    proc = compare("--elo1", "10", "--max-matches", "1", "--batch", "1", "random", "greedy")
    verdict = strict_json(proc.stdout)
    assert verdict["budget"] == 1
    assert verdict["expected_samples"]["h0"] == pytest.approx(6397.7, abs=0.1)
    assert "expected deals to a decision" in proc.stderr and "6398" in proc.stderr
    assert "warning: the budget of 1 deals is below the 6398" in proc.stderr
    assert "--max-matches 12796" in proc.stderr  # twice the expected count
    assert verdict["budget_warning"] and "most runs will end undecided" in verdict["budget_warning"]


def test_the_default_budget_covers_the_default_bounds():
    """At elo1 10 and 50 × 4 deals (the old defaults) every run warned; the defaults must
    give about 9 decisions in 10 without a word of advice."""
    params = {p.name: p.default for p in typer.main.get_command(cli.app).commands["compare"].params}
    test = SPRT(
        elo0=params["elo0"], elo1=params["elo1"], alpha=params["alpha"], beta=params["beta"]
    )
    plan = plan_budget(test, params["max_matches"], params["batch"])
    assert plan.warning is None
    assert plan.budget >= 2 * max(plan.expected["h0"], plan.expected["h1"])


def test_no_warning_when_the_budget_covers_the_bounds():
    proc = compare("--elo1", "150", "--max-matches", "30", "heuristic", "random")
    assert proc.returncode == 0, proc.stderr
    verdict = strict_json(proc.stdout)
    assert verdict["budget_warning"] is None and "warning" not in proc.stderr
    assert verdict["expected_samples"]["h1"] == pytest.approx(28.4, abs=0.1)


@pytest.mark.parametrize(("elo1", "matches", "batch"), [(10, 50, 4), (5, 25, 4), (50, 20, 2)])
def test_the_advice_would_reach_a_decision(elo1, matches, batch):
    plan = plan_budget(SPRT(elo0=0, elo1=elo1), matches, batch)
    worst = max(plan.expected["h0"], plan.expected["h1"])
    assert plan.warning and plan.budget < worst
    assert plan.max_matches * batch >= 2 * worst > (plan.max_matches - 1) * batch
    wider = SPRT(elo0=0, elo1=plan.elo1).asn()
    assert 2 * max(wider["h0"], wider["h1"]) <= plan.budget
    assert f"--max-matches {plan.max_matches}" in plan.warning
    assert f"--elo1 {plan.elo1:g}" in plan.warning
