"""Tries io_uring_setup (a kernel attack surface the Debian engine's default allows)."""

import ctypes

from bigtwo import Bot

NR_IO_URING_SETUP = 425  # the same on x86_64 and aarch64


class IoUring(Bot):
    done = False

    def act(self, observation):
        if not self.done:
            self.done = True
            libc = ctypes.CDLL(None, use_errno=True)
            params = ctypes.create_string_buffer(120)
            fd = libc.syscall(NR_IO_URING_SETUP, 4, params)
            if fd >= 0:
                raise RuntimeError("BREACH: io_uring_setup worked")
        return observation.legal_moves[0]
