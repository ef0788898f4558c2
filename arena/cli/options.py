"""The options that mean the same in every command that takes them (rules, time control,
database, the new-bot check), declared once so their help and limits never drift apart."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from bigtwo import PRESETS

RulesOpt = Annotated[
    str,
    typer.Option(
        "--rules",
        "-r",
        help=f"Preset ({', '.join(PRESETS)}) or a JSON file of rule options.",
    ),
]
# the time control, the same options wherever bots are refereed (TimeControl's fields)
MoveMsOpt = Annotated[int, typer.Option(min=1, help="Time allowed per move.")]
BankMsOpt = Annotated[int, typer.Option(min=0, help="Time bank per seat per match.")]
StartupMsOpt = Annotated[int, typer.Option(min=1, help="Time from launch to a bot's Hello.")]
MaxStrikesOpt = Annotated[int, typer.Option(min=1, help="Faults before a seat forfeits.")]
SetOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--set",
        "-s",
        help="Override one rule option, OPTION=VALUE (repeatable), e.g. --set bombs=anywhere. "
        "See `arena rules` for every option.",
    ),
]
DbOpt = Annotated[str, typer.Option(help="SQLite file or database URL.")]
CheckOpt = Annotated[
    bool,
    typer.Option(
        "--check/--no-check",
        help="Check each new bot first (one hand against copies of itself) and refuse "
        "one that cannot start or forfeits. --no-check enters bots unchecked; a bot that "
        "then cannot start still stops the ladder, unrated.",
    ),
]
# remote seats' TCP port (--listen): TLS unless --insecure
InsecureOpt = Annotated[
    bool,
    typer.Option(
        "--insecure",
        help="Serve --listen as plain TCP, unencrypted: anyone on the network can read each "
        "remote seat's token and cards. Without it the port speaks TLS with the arena's own CA.",
    ),
]
TlsDirOpt = Annotated[
    Path | None,
    typer.Option(
        "--tls-dir",
        help="Folder of the arena's CA and server certificate for --listen, made on first use "
        "(default: $XDG_STATE_HOME/arena/tls, i.e. ~/.local/state/arena/tls).",
    ),
]
TlsNameOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--tls-name",
        help="A host name or IP address students dial, added to the server certificate "
        "(repeatable); needed with --listen 0.0.0.0:PORT for any address but this machine's "
        "name and loopback. The first is the address in the printed command.",
    ),
]
