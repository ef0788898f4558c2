"""Tries the side channels by which two bot instances alive at the same time (the next
rotation's, started early, and the current one) could pass cards to each other through a
file both can read, or a later instance could learn what an earlier one read: file locks,
leases, inotify, and page-cache probes.  Each that works is a breach; it reports how many
it tried ("DENIED: n of n"), so a probe that did not run cannot pass."""

import ctypes
import errno
import fcntl
import mmap
import os
import struct

from bigtwo import Bot

SHARED = "/usr/lib/os-release"  # on every image; read-only to the bot


def probes():
    libc = ctypes.CDLL(None, use_errno=True)

    def flock():
        with open(SHARED, "rb") as f:
            fcntl.flock(f, fcntl.LOCK_SH | fcntl.LOCK_NB)

    def posix_lock():
        with open(SHARED, "rb") as f:
            fcntl.fcntl(f, fcntl.F_SETLK, struct.pack("hhqqi", fcntl.F_RDLCK, 0, 0, 1, 0))

    def get_lock():
        with open(SHARED, "rb") as f:
            fcntl.fcntl(f, fcntl.F_GETLK, struct.pack("hhqqi", fcntl.F_WRLCK, 0, 0, 1, 0))

    def ofd_lock():
        with open(SHARED, "rb") as f:
            fcntl.fcntl(f, 37, struct.pack("hhqqi", fcntl.F_RDLCK, 0, 0, 1, 0))  # F_OFD_SETLK

    def inotify():
        fd = libc.inotify_init1(0)
        if fd < 0:
            raise OSError(ctypes.get_errno(), "inotify_init1")
        os.close(fd)

    def fadvise():
        fd = os.open(SHARED, os.O_RDONLY)
        try:
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        finally:
            os.close(fd)

    def nowait_read():
        fd = os.open(SHARED, os.O_RDONLY)
        try:
            os.preadv(fd, [bytearray(16)], 0, os.RWF_NOWAIT)
        finally:
            os.close(fd)

    def mincore():
        page = mmap.mmap(-1, mmap.PAGESIZE)  # any page: success shows mincore is allowed
        vec = ctypes.create_string_buffer(1)
        addr = ctypes.addressof(ctypes.c_char.from_buffer(page))
        res = libc.mincore(ctypes.c_void_p(addr), ctypes.c_size_t(mmap.PAGESIZE), vec)
        err = ctypes.get_errno()
        if res != 0:
            raise OSError(err, "mincore")

    return [flock, posix_lock, get_lock, ofd_lock, inotify, fadvise, nowait_read, mincore]


class Covert(Bot):
    done = False

    def act(self, observation):
        if not self.done:
            self.done = True
            worked = []
            tried = probes()
            for probe in tried:
                try:
                    probe()
                    worked.append(probe.__name__)
                except OSError as exc:
                    if exc.errno not in (errno.EPERM, errno.ENOSYS):  # it ran: not denied
                        worked.append(f"{probe.__name__} ({exc.strerror})")
            if worked:
                raise RuntimeError(f"BREACH: {', '.join(worked)}")
            raise RuntimeError(f"DENIED: {len(tried)} of {len(tried)} side channels")
        return observation.legal_moves[0]
