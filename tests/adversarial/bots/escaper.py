"""Tries to reach the operator's terminal through every text a bot controls.

Its Hello name, its stderr and the message of an exception in ``act()`` carry terminal
escape sequences (window title, screen clear, an OSC 8 hyperlink, a C1 CSI, a
right-to-left override, backspaces, a carriage return) and rich markup (``[blink]``,
``[link=…]``).  On its first turn ``act()`` raises; a moment later the bot writes one more
hostile line to stderr and exits with code 1, so that line is the tail the sandbox reports.
``AtStart`` does the same while it is being created: the bot fails to start.

Every piece carries the marker ``ESCAPER-PROBE``, so a test can tell the probe ran (and
that its words were shown, made harmless)."""

import os
import threading
import time

from bigtwo import Bot

MARKER = "ESCAPER-PROBE"
# no line breaks here (a stderr tail is its last line): title, clear + home, OSC 8 link,
# C1 CSI (red), a C1 OSC title, right-to-left override, backspaces over the marker, BEL
PAYLOAD = (
    "\x1b]0;pwned\x07"
    "\x1b[2J\x1b[H"
    "\x1b]8;;https://example.invalid/\x1b\\click-me\x1b]8;;\x1b\\"
    "\x9b31m"
    "\x9d0;c1-title\x9c"
    "\u202e"
    f"[blink]{MARKER}[/blink] [link=https://example.invalid/]markup-link[/link] "
    "[bold red on white]styled[/]"
    "\b\b\b\b\a"
)


def _say(text: str) -> None:
    os.write(2, (text + "\n").encode("utf-8", "surrogatepass"))


def _die_soon() -> None:
    time.sleep(0.3)
    _say(f"stderr {PAYLOAD}")
    os._exit(1)


class Escaper(Bot):
    name = f"name {PAYLOAD}\rOVERWRITTEN"
    raised = False

    def act(self, observation):
        if not self.raised:
            self.raised = True
            _say(f"startup {PAYLOAD}")
            threading.Thread(target=_die_soon, daemon=True).start()
            raise RuntimeError(f"act {PAYLOAD}\rOVERWRITTEN")
        time.sleep(30)  # asked again before it dies: let the exit come first
        return observation.legal_moves[0]


class AtStart(Bot):
    name = Escaper.name

    def __init__(self):
        _say(f"init {PAYLOAD}")
        raise RuntimeError(f"init {PAYLOAD}")
