"""Where bots run.  One interface, several backends (see DESIGN.md, Sandboxes):

- ``process``: each bot in its own OS process and session, with resource limits;
- ``inproc``: trusted bots as tasks in the referee's own process (tests, benchmarks).

Docker comes with the sandbox issue."""

from .base import BotHandle, Sandbox, make_sandbox

__all__ = ["BotHandle", "Sandbox", "make_sandbox"]
