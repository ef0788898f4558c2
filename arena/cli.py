"""The ``arena`` command.  One entry point, a subcommand per job, ``--help`` everywhere."""

from __future__ import annotations

import json
import sys
from typing import Annotated

import typer
from rich.console import Console

from bigtwo import OPTION_NAMES, PRESETS, RulesError, RuleSet

from .demo import DemoPrinter, match_summary, play_match, standings_table
from .rules_options import load_rules

app = typer.Typer(
    help="Big Two Arena: deal, referee and rate Big Two bots.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

RulesOpt = Annotated[
    str,
    typer.Option(
        "--rules",
        "-r",
        help=f"Preset ({', '.join(PRESETS)}) or a JSON file of rule options.",
    ),
]
SetOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--set",
        "-s",
        help="Override one rule option, OPTION=VALUE (repeatable), e.g. --set bombs=anywhere. "
        "See `arena rules` for every option.",
    ),
]


def _fail(message: str, code: int = 2) -> typer.Exit:
    Console(stderr=True, soft_wrap=True).print(f"[red]error:[/red] {message}", highlight=False)
    return typer.Exit(code)


@app.command()
def demo(
    rules: RulesOpt = "hk",
    set_: SetOpt = None,
    seed: Annotated[int, typer.Option(help="Seed of the deals (and of the random players).")] = 7,
    hands: Annotated[
        int | None,
        typer.Option(min=1, help="Stop after this many hands even if the match is not over."),
    ] = None,
    quiet: Annotated[
        bool, typer.Option("--quiet", "-q", help="Show hands and scores only.")
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the result as JSON only.")] = False,
) -> None:
    """Play a whole match between random players and show every deal, play and score.

    Example: arena demo --rules pusoy --seed 3 --set players=3
    """
    try:
        ruleset = load_rules(rules, set_ or ())
    except RulesError as exc:
        raise _fail(str(exc)) from None
    console = Console(quiet=as_json, highlight=False)
    console.print(
        f"[bold]Demo match[/bold] — rules {ruleset.preset_name or rules + ' (modified)'}, "
        f"seed {seed}, {ruleset.players} random players"
    )
    try:
        game = play_match(ruleset, seed, hands, DemoPrinter(console, ruleset, not quiet))
    except KeyboardInterrupt:
        raise _fail("interrupted", 130) from None
    if as_json:
        sys.stdout.write(json.dumps(match_summary(game)) + "\n")
        return
    console.print(standings_table(game))
    if not game.match_over:
        console.print(f"(stopped after {len(game.results)} hands; the match was not over)")


@app.command("rules")
def show_rules(
    rules: RulesOpt = "hk",
    set_: SetOpt = None,
) -> None:
    """Print every rule option of a preset (with overrides applied) as JSON.

    Save the output to a file, edit it, and pass the file back with --rules FILE.
    """
    try:
        ruleset = load_rules(rules, set_ or ())
    except RulesError as exc:
        raise _fail(str(exc)) from None
    sys.stdout.write(json.dumps(ruleset.to_dict(), indent=2) + "\n")


def main() -> None:
    app()


__all__ = ["OPTION_NAMES", "RuleSet", "app", "main"]
