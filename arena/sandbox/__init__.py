"""Where bots run.  One interface, several backends (see DESIGN.md, Sandboxes):

- ``docker``: one container per bot per match, from a bot image the arena builds;
- ``process``: each bot in its own OS process, confined by bubblewrap, with resource limits;
- ``inproc``: trusted bots as tasks in the referee's own process (tests, benchmarks)."""

from .base import BotHandle, Sandbox, make_sandbox

__all__ = ["BotHandle", "Sandbox", "make_sandbox"]
