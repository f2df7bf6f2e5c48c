"""Seeing another writer try the index's writer lock, so that a test waits for tries
instead of sleeping while they (maybe) happen.

A try (``store/lock.py``, ``wait=False``: the watcher and ``scry serve``) opens
``<db>.lock`` for writing and, while someone else holds the lock, closes it again at
once; inotify reports each such close (IN_CLOSE_WRITE) to a watchdog observer, from any
process. Opening it read-only (``writer_active()``, ``scry status``) is not a try.
inotify merges identical events that nobody has read yet, so ``count`` is a lower bound:
wait for "at least".
"""

from __future__ import annotations

import os
import threading
from pathlib import Path
from types import TracebackType
from typing import Any

from watchdog.events import FileClosedEvent, FileSystemEventHandler
from watchdog.observers import Observer


class LockTries:
    """Counts closes-after-write of ``<db>.lock`` while open (a context manager)."""

    def __init__(self, db: Path) -> None:
        self.path = os.path.abspath(f"{db}.lock")
        self.count = 0
        self._cond = threading.Condition()
        self._observer: Any = None

    def __enter__(self) -> LockTries:
        tries = self

        class _Handler(FileSystemEventHandler):
            def on_closed(self, event: Any) -> None:
                if os.path.abspath(os.fsdecode(event.src_path)) == tries.path:
                    with tries._cond:
                        tries.count += 1
                        tries._cond.notify_all()

        obs = Observer()
        obs.schedule(
            _Handler(), os.path.dirname(self.path), recursive=False, event_filter=[FileClosedEvent]
        )
        obs.start()
        self._observer = obs
        return self

    def __exit__(
        self,
        typ: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._observer.stop()
        self._observer.join(timeout=5)

    def wait_for(self, n: int, timeout: float) -> bool:
        """Whether ``count`` reached ``n`` within ``timeout`` seconds."""
        with self._cond:
            return self._cond.wait_for(lambda: self.count >= n, timeout)
