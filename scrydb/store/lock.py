"""The writer lock: an advisory ``flock`` on ``<index>.lock``, held for a whole sync.
One process writes at a time; readers never take it. The kernel releases it when its
holder dies, however it dies."""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import time
from collections.abc import Callable
from pathlib import Path

from scrydb.errors import LockedError, ScryError

#: Seconds between tries while waiting a bounded time for the writer lock.
LOCK_POLL_S = 0.05


class WriterLock:
    """The writer lock of the index file ``index``."""

    def __init__(self, index: Path) -> None:
        self.index = index
        self.path = str(index) + ".lock"
        self._fd: int | None = None

    @property
    def held(self) -> bool:
        """Whether this object holds the lock."""
        return self._fd is not None

    def take(self, wait: bool | float = True, on_wait: Callable[[], None] | None = None) -> None:
        """Take the advisory writer lock (``<db>.lock``) for a whole sync.

        ``wait=True`` blocks (calling ``on_wait()`` once first) until the other writer is
        done; a number waits at most that many seconds; ``False`` does not wait. A lock
        that could not be taken raises :class:`LockedError`. The kernel releases the lock
        when its process dies, however it dies.
        """
        if self._fd is not None:
            return
        lock_path = self.path
        try:
            fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as e:
            raise ScryError(f"cannot create lock file {lock_path}: {e.strerror}") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as e:
            if e.errno not in (errno.EWOULDBLOCK, errno.EAGAIN):
                os.close(fd)
                raise
            if wait is False:
                os.close(fd)
                raise LockedError(
                    f"another scry process is indexing {self.index}; try again when it is done"
                ) from None
            if on_wait is not None:
                on_wait()
            try:
                if wait is True:
                    fcntl.flock(fd, fcntl.LOCK_EX)
                elif not _flock_within(fd, float(wait)):
                    raise LockedError(
                        f"another scry process has been indexing {self.index} for over "
                        f"{float(wait):.0f}s; try again when it is done"
                    )
            except BaseException:
                os.close(fd)
                raise
        self._fd = fd

    def active(self) -> bool:
        """Whether some process (this one included) holds the writer lock right now."""
        if self._fd is not None:
            return True
        try:
            fd = os.open(self.path, os.O_RDONLY)
        except OSError:
            return False
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except OSError:
            return True
        else:
            fcntl.flock(fd, fcntl.LOCK_UN)
            return False
        finally:
            os.close(fd)

    def release(self) -> None:
        """Release the writer lock if this store holds it."""
        if self._fd is not None:
            with contextlib.suppress(OSError):
                fcntl.flock(self._fd, fcntl.LOCK_UN)
                os.close(self._fd)
            self._fd = None


def _flock_within(fd: int, seconds: float) -> bool:
    """Take an exclusive flock on ``fd`` within ``seconds`` (polling); False if it stayed busy."""
    deadline = time.monotonic() + seconds
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except OSError as e:
            if e.errno not in (errno.EWOULDBLOCK, errno.EAGAIN):
                raise
        if time.monotonic() >= deadline:
            return False
        time.sleep(LOCK_POLL_S)
