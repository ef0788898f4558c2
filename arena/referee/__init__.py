"""The referee: a grpc.aio server that deals, asks each seat to move, enforces the rules and
the clock, records faults, and writes a replayable record of every match.

Import what you use from its modules (:mod:`.session` the match loop, :mod:`.service` the
server, :mod:`.time_control` the clock the layers above set): the package itself loads
nothing, so naming a time control does not start up the gRPC server's code."""
