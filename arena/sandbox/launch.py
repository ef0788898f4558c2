"""Set resource limits, then exec the bot:  ``python -m arena.sandbox.launch AS_MB CPU_S
FSIZE_MB NOFILE -- COMMAND...``.

The process sandbox starts bots through this tiny launcher instead of a ``preexec_fn``:
running Python code between fork and exec in a process that has gRPC threads can deadlock
or abort the child, while a plain fork+exec (or vfork) is safe."""

import os
import resource
import sys


def main() -> None:
    if len(sys.argv) < 7 or sys.argv[5] != "--":
        sys.exit("usage: python -m arena.sandbox.launch AS_MB CPU_S FSIZE_MB NOFILE -- CMD...")
    as_mb, cpu_s, fsize_mb, nofile = (int(x) for x in sys.argv[1:5])
    resource.setrlimit(resource.RLIMIT_AS, (as_mb << 20, as_mb << 20))
    resource.setrlimit(resource.RLIMIT_CPU, (cpu_s, cpu_s + 1))
    resource.setrlimit(resource.RLIMIT_FSIZE, (fsize_mb << 20, fsize_mb << 20))
    resource.setrlimit(resource.RLIMIT_NOFILE, (nofile, nofile))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    cmd = sys.argv[6:]
    os.execv(cmd[0], cmd)


if __name__ == "__main__":
    main()
