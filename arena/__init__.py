"""Big Two Arena: referee, sandboxes, ladder and command line around the `bigtwo` engine."""

import os

# The arena forks bot processes while gRPC threads run; gRPC's fork handlers are not needed
# (children exec at once) and would log a warning per fork.
os.environ.setdefault("GRPC_ENABLE_FORK_SUPPORT", "0")

__version__ = "0.1.0"
