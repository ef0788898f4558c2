"""Big Two Arena: referee, sandboxes, ladder and command line around the `bigtwo` engine."""

import os

# The arena forks bot processes while gRPC threads run; gRPC's fork handlers are not needed
# (children exec at once) and would log a warning per fork.
os.environ.setdefault("GRPC_ENABLE_FORK_SUPPORT", "0")
# gRPC's C core logs what a peer sent (a GOAWAY frame's debug text, say) raw to stderr: a
# bot could write escape sequences to the operator's terminal through it.  Its own log is
# off unless the operator asks for it (then it is theirs to read with care).
os.environ.setdefault("GRPC_VERBOSITY", "NONE")

__version__ = "0.1.0"
