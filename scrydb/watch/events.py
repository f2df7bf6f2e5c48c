"""File events: a debounced signal of the changes under a root that can change the index
(the walk's own rule decides, ``walk.Selector``)."""

from __future__ import annotations

import contextlib
import os
import threading
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from scrydb.config import CONFIG_NAME, IndexConfig
from scrydb.index import Index
from scrydb.walk import Selector

#: Quiet time after the last relevant event before a sync starts: a save or a burst of
#: them (a checkout, a build) syncs once, about half a second after it ends.
DEBOUNCE_S = 0.5
#: Longest a stream of events that never goes quiet postpones a sync.
MAX_DELAY_S = 5.0
#: Longest a sync waits for a running git command (``.git/index.lock``) to finish.
GIT_BUSY_MAX_S = 30.0
#: How often the wait re-checks ``.git/index.lock`` and the stop flag.
TICK_S = 0.1
#: Seconds between tries while another process holds the writer lock.
LOCKED_RETRY_S = 1.0
#: Texts per model call in the embedding phase, which gives way to new file events
#: between two calls: about 0.5 s of the packaged model on 2 cores (two forward passes of
#: ``scrydb.embed.local.DOC_BATCH``).
EMBED_SLICE = 16
#: Most vectors an abandoned embedding batch keeps for the next one.
KEEP_MAX = 4096
#: What loading the model embeds (in the background, before the first embedding sync).
WARM_TEXT = "def warm_up(): return 'model'"
#: The polling observer's interval, used when inotify is unavailable (watch limit).
POLL_S = 2.0
#: Event types that can change what is indexed (open and close-without-write cannot;
#: a plain read by the sync itself must never trigger the next sync).
CHANGE_EVENTS = frozenset({"created", "deleted", "modified", "moved"})
#: Ignore-rule files: a change to one of them changes what the walk keeps.
RULE_FILES = frozenset({".gitignore", ".scryignore"})


class ChangeWatcher:
    """A debounced signal of relevant file changes under ``root``.

    ``ignore`` lists absolute paths whose events never count (the index file, its WAL,
    SHM and lock files). ``config`` gives the ignore patterns (``[index]``).
    ``wait(stop)`` blocks until a change has been quiet for ``debounce`` seconds (True)
    or ``stop`` is set (False).
    """

    def __init__(
        self,
        root: str | os.PathLike[str],
        *,
        ignore: Iterable[str | os.PathLike[str]] = (),
        debounce: float = DEBOUNCE_S,
        max_delay: float = MAX_DELAY_S,
        config: IndexConfig | None = None,
    ) -> None:
        self.root = Path(root).resolve()
        self.ignore = {os.path.abspath(os.fspath(p)) for p in ignore}
        self.debounce = debounce
        self.max_delay = max_delay
        self.config = config or IndexConfig()
        self.kind = "off"  #: "inotify" (or the platform's native observer), "polling", "off"
        self.events = 0  #: relevant events seen so far
        self.config_changed = False  #: ``.scry.toml`` changed since the flag was cleared
        self._cond = threading.Condition()
        self._dirty = False
        self._first = 0.0
        self._last = 0.0
        self._select: Selector | None = None
        self._observer: Any = None

    @classmethod
    def for_index(cls, ix: Index, debounce: float = DEBOUNCE_S) -> ChangeWatcher:
        """Changes that concern ``ix``: under its root, not its own files, by its rules."""
        db = str(ix.db_path)
        own = [db + s for s in ("", "-wal", "-shm", "-journal", ".lock")]
        return cls(ix.root, ignore=own, debounce=debounce, config=ix.config.index)

    # -- lifecycle ---------------------------------------------------------------------

    def start(self) -> None:
        """Start watching (native events; polling when they are unavailable)."""
        from watchdog.events import (
            DirCreatedEvent,
            DirDeletedEvent,
            DirMovedEvent,
            FileCreatedEvent,
            FileDeletedEvent,
            FileModifiedEvent,
            FileMovedEvent,
            FileSystemEventHandler,
        )
        from watchdog.observers import Observer
        from watchdog.observers.polling import PollingObserver

        watcher = self

        class _Handler(FileSystemEventHandler):
            def on_any_event(self, event: Any) -> None:
                watcher._on_event(event)

        wanted: list[Any] = [
            FileCreatedEvent,
            FileDeletedEvent,
            FileModifiedEvent,
            FileMovedEvent,
            DirCreatedEvent,
            DirDeletedEvent,
            DirMovedEvent,
        ]
        handler = _Handler()
        try:
            obs: Any = Observer()
            obs.schedule(handler, str(self.root), recursive=True, event_filter=wanted)
            obs.start()
            self.kind = type(obs).__name__.removesuffix("Observer").lower() or "native"
        except OSError as e:  # e.g. the inotify watch limit (ENOSPC): poll instead
            with contextlib.suppress(Exception):
                obs.stop()
            obs = PollingObserver(timeout=POLL_S)
            obs.schedule(handler, str(self.root), recursive=True, event_filter=wanted)
            obs.start()
            self.kind = f"polling ({e.strerror or e})"
        self._observer = obs

    def stop(self) -> None:
        """Stop watching and wake every ``wait``."""
        obs, self._observer = self._observer, None
        if obs is not None:
            with contextlib.suppress(Exception):
                obs.stop()
                obs.join(timeout=2)
        with self._cond:
            self._cond.notify_all()

    # -- the signal --------------------------------------------------------------------

    def poke(self) -> None:
        """Count as a change now (e.g. to retry a sync that could not run)."""
        with self._cond:
            now = time.monotonic()
            if not self._dirty:
                self._first = now
            self._dirty = True
            self._last = now
            self._cond.notify_all()

    @property
    def dirty(self) -> bool:
        """Whether a change arrived that no ``wait`` has returned for yet."""
        return self._dirty

    def quiet_and(self, predicate: Callable[[], bool]) -> bool:
        """``not dirty and predicate()``, atomically with respect to ``wait``."""
        with self._cond:
            return not self._dirty and predicate()

    def wait(
        self,
        stop: threading.Event | None = None,
        timeout: float | None = None,
        on_fire: Callable[[], None] | None = None,
    ) -> bool:
        """Block until changes have been quiet for ``debounce`` (True), or ``stop`` is
        set or ``timeout`` passes (False). ``on_fire`` runs, under the watcher's lock,
        just before True is returned."""
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._cond:
            while not (stop is not None and stop.is_set()):
                now = time.monotonic()
                if deadline is not None and now >= deadline:
                    return False
                if self._dirty:
                    quiet = now - self._last
                    waited = now - self._first
                    if (quiet >= self.debounce or waited >= self.max_delay) and not (
                        self._git_busy() and waited < GIT_BUSY_MAX_S
                    ):
                        self._dirty = False
                        if on_fire is not None:
                            on_fire()
                        return True
                    pause = max(0.01, min(TICK_S, self.debounce - quiet))
                else:
                    pause = TICK_S
                self._cond.wait(pause if deadline is None else min(pause, deadline - now))
        return False

    def _git_busy(self) -> bool:
        return (self.root / ".git" / "index.lock").exists()

    # -- filtering ---------------------------------------------------------------------

    def _on_event(self, event: Any) -> None:
        if event.event_type not in CHANGE_EVENTS:
            return
        paths = [os.fsdecode(event.src_path)]
        if getattr(event, "dest_path", None):
            paths.append(os.fsdecode(event.dest_path))
        if not any(self.relevant(p, event.is_directory) for p in paths):
            return
        self.events += 1
        self.poke()

    def relevant(self, path: str, is_dir: bool = False) -> bool:
        """Whether an event on ``path`` (absolute) can change the index."""
        path = os.path.abspath(path)
        if path in self.ignore:
            return False
        rel = os.path.relpath(path, self.root)
        if rel == "." or rel == ".." or rel.startswith(".." + os.sep):
            return False
        parts = rel.split(os.sep)
        rel = "/".join(parts)
        if parts[0] == ".git":
            return rel == ".git/info/exclude" and self._reset_rules()
        if parts[-1] in RULE_FILES:
            return self._reset_rules()
        if rel == CONFIG_NAME:
            self.config_changed = True
            return self._reset_rules()
        return not self._skipped(rel, is_dir)

    def use_config(self, config: IndexConfig) -> None:
        """Judge events by new ignore patterns (``.scry.toml`` was reloaded)."""
        self.config = config
        self._reset_rules()

    def _reset_rules(self) -> bool:
        self._select = None
        return True

    def _skipped(self, rel: str, is_dir: bool) -> bool:
        """The walk's own rule (``walk.Selector``), its ignore files loaded lazily for the
        directories events touch. A file's size is not judged: a file that grew too
        large is the sync's business."""
        try:
            if self._select is None:
                self._select = Selector(self.root, self.config)
            return self._select.reason(rel, None, is_dir) is not None
        except Exception:  # a rule we cannot read: let the sync decide
            return False
