"""Tries to reach the machine's devices: opens disks, memory and the kernel log, makes
device nodes of its own, and checks what its /dev holds, how every mount is flagged and
which uid it runs as.  Opening or making a device is reported as "BREACH: ...";
otherwise it reports on purpose, as its one fault, "DENIED: n of n probes" with any /dev
node beyond the minimal set and any mount lacking nodev or nosuid (from the mount table
where there is one, else from the flags of the mounts it can name), for the test to
judge."""

import os
import stat
import sys

from bigtwo import Bot

DEVICES = [
    "/dev/sda",
    "/dev/vda",
    "/dev/nvme0n1",
    "/dev/mem",
    "/dev/kmem",
    "/dev/port",
    "/dev/kmsg",
    "/dev/kvm",
    "/dev/console",
    "/dev/tty0",
    "/dev/loop0",
    "/dev/loop-control",
    "/dev/fuse",
    "/dev/net/tun",
    "/dev/dri/card0",
]
NODES = [("sda", stat.S_IFBLK, 8, 0), ("mem", stat.S_IFCHR, 1, 1), ("vda", stat.S_IFBLK, 254, 0)]
MINIMAL = {"null", "zero", "full", "random", "urandom", "tty", "pts", "ptmx", "shm", "fd"}
MINIMAL |= {"stdin", "stdout", "stderr", "core"}
# the harmless nodes bound from the host, and a private pty filesystem
DEVICE_BINDS = {"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty"}
DEVICE_BINDS.add("/dev/pts")


def mounts():
    """(mount point or place, nodev, nosuid) for every mount the bot can name: the mount
    table where there is one (docker), and the flags of the mount holding each place a
    bot's files and runtime live in (the process sandbox has no /proc to list them)."""
    found = {}
    try:
        with open("/proc/self/mountinfo") as f:
            for line in f:
                fields = line.split()
                options = fields[5].split(",")
                found[fields[4]] = ("nodev" in options, "nosuid" in options)
    except OSError:
        pass
    places = ["/", "/tmp", "/dev", "/dev/pts", "/dev/shm", "/bot", "/run/arena", "/proc"]
    places += ["/usr", "/lib", "/etc", os.path.dirname(sys.executable), *sys.path]
    for place in places:
        if place in found or not place:
            continue
        try:
            flags = os.statvfs(place).f_flag
        except OSError:
            continue
        found[place] = (bool(flags & os.ST_NODEV), bool(flags & os.ST_NOSUID))
    return [(point, *flags) for point, flags in sorted(found.items())]


class Devices(Bot):
    done = False

    def act(self, observation):
        if not self.done:
            self.done = True
            breaches, probes = [], 0
            for path in DEVICES:
                probes += 1
                try:
                    fd = os.open(path, os.O_RDWR)
                    os.close(fd)
                    breaches.append(f"opened {path}")
                except OSError:
                    pass
            for name, kind, major, minor in NODES:
                probes += 1
                path = f"/tmp/{name}"
                try:
                    os.mknod(path, kind | 0o666, os.makedev(major, minor))
                except OSError:
                    continue
                try:
                    fd = os.open(path, os.O_RDONLY)
                    os.close(fd)
                    breaches.append(f"made and opened {path}")
                except OSError:
                    pass
            if os.getuid() == 0 or os.geteuid() == 0:
                breaches.append("runs as uid 0")
            if breaches:
                raise RuntimeError("BREACH: " + "; ".join(breaches))
            extra = sorted(set(os.listdir("/dev")) - MINIMAL)
            no_nodev, no_nosuid = [], []
            for point, nodev, nosuid in mounts():
                if not nosuid:
                    no_nosuid.append(point)
                if not nodev and point not in DEVICE_BINDS:
                    no_nodev.append(point)
            raise RuntimeError(
                f"DENIED: {probes} of {probes} probes; extra /dev: {' '.join(extra) or '-'}; "
                f"no nodev: {' '.join(no_nodev) or '-'}; no nosuid: {' '.join(no_nosuid) or '-'}"
            )
        return observation.legal_moves[0]
