"""Run a bot against a referee:  ``python -m bigtwo.run BOT [options]``.

BOT is ``path/to/bot.py[:Class]``, a folder holding ``bot.py``, or ``module:Class``.
The arena starts bots with the connection details in the environment (ARENA_ADDRESS,
ARENA_MATCH_ID, ARENA_SEAT, ARENA_TOKEN or ARENA_TOKEN_FILE); for a bot run by hand, give
them as options, e.g.

    python -m bigtwo.run my_bot.py --address 192.0.2.10:50051 --match-id m1 --seat 2 \\
        --token-file token.txt --ca ca.pem

A referee listening on TCP (``arena match --listen``) speaks TLS: --ca names the arena's CA
certificate (it prints where it is and its SHA-256 fingerprint: check that your copy has
the same with -v), and the referee's certificate is checked against it alone.

Exit codes: 0 match played, 1 connection or protocol error, 2 bad arguments or bot.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from pathlib import Path

from .loader import BotLoadError, describe_error, load_bot_class


def _args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        prog="python -m bigtwo.run",
        description=__doc__.split("\n\n")[0],
        epilog=__doc__.split("\n\n", 1)[1],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("bot", help="path/to/bot.py[:Class], a folder with bot.py, or module:Class")
    p.add_argument(
        "--address",
        default=os.environ.get("ARENA_ADDRESS"),
        help="referee address: unix:///path/to.sock or host:port [$ARENA_ADDRESS]",
    )
    p.add_argument("--match-id", default=os.environ.get("ARENA_MATCH_ID"), help="[$ARENA_MATCH_ID]")
    p.add_argument("--seat", type=int, default=os.environ.get("ARENA_SEAT"), help="[$ARENA_SEAT]")
    p.add_argument(
        "--token", default=os.environ.get("ARENA_TOKEN"), help="secret seat token [$ARENA_TOKEN]"
    )
    p.add_argument(
        "--token-file",
        default=os.environ.get("ARENA_TOKEN_FILE"),
        help="file holding the token [$ARENA_TOKEN_FILE]",
    )
    p.add_argument(
        "--ca",
        default=os.environ.get("ARENA_CA") or None,
        help="the arena's CA certificate (PEM), for a referee that speaks TLS [$ARENA_CA]",
    )
    p.add_argument("-v", "--verbose", action="store_true", help="log every fault and hook error")
    args = p.parse_args(argv)
    if args.token is None and args.token_file:
        try:
            args.token = Path(args.token_file).read_text(encoding="utf-8").strip()
        except OSError as exc:
            p.error(f"--token-file: {exc}")
    missing = [n for n in ("address", "match_id", "seat", "token") if getattr(args, n) is None]
    if missing:
        p.error("missing " + ", ".join("--" + m.replace("_", "-") for m in missing))
    args.ca_pem = None
    if args.ca:
        try:
            args.ca_pem = Path(args.ca).read_bytes()
        except OSError as exc:
            p.error(f"--ca: {exc}")
        if b"-----BEGIN CERTIFICATE-----" not in args.ca_pem:
            p.error(f"--ca {args.ca}: not a PEM certificate (the arena's ca.pem)")
    return args


def main(argv: list[str] | None = None) -> int:
    """The ``python -m bigtwo.run`` command: load the bot, connect to the referee and play
    the seat; the exit status tells the caller whether the bot loaded and played."""
    args = _args(argv)
    logging.basicConfig(
        level=logging.INFO if args.verbose else logging.WARNING,
        format="%(asctime)s bot[seat %(seat)s] %(levelname)s %(message)s".replace(
            "%(seat)s", str(args.seat)
        ),
    )
    cls = None
    try:
        cls = load_bot_class(args.bot)
        bot = cls()
    except BotLoadError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except Exception as exc:  # its __init__: where in the author's files
        file = getattr(sys.modules.get(getattr(cls, "__module__", "")), "__file__", None)
        said = describe_error(exc, os.path.dirname(os.path.abspath(file)) if file else None)
        print(f"error: {args.bot}: creating the bot failed: {said}", file=sys.stderr)
        return 2
    import grpc  # only the client needs it

    from .client import explain, fingerprint, run

    if args.ca_pem is not None:
        logging.getLogger("bigtwo.client").info(
            "CA %s, SHA-256 fingerprint %s", args.ca, fingerprint(args.ca_pem)
        )
    try:
        end = run(bot, args.address, args.match_id, args.seat, args.token, args.ca_pem)
    except grpc.aio.AioRpcError as exc:
        said = explain(exc.code().name, exc.details() or "", args.address, args.ca_pem, args.ca)
        print(f"error: referee: {said}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    return 0 if end is not None else 1


if __name__ == "__main__":
    sys.exit(main())
