"""Keep an index fresh from file events: ``scry watch`` and the in-process watcher.

Two pieces, both reusable:

* :class:`ChangeWatcher` turns watchdog's file events under a root into one debounced
  "something changed" signal. It drops what cannot change the index: the index's own
  files, ``.git`` internals, noise directories, paths the ignore rules exclude, and
  events that do not change content (open, close-without-write). A burst (``git
  checkout``, a build) becomes one signal once it has been quiet for ``debounce``
  seconds (``max_delay`` bounds the wait for a stream that never pauses), and a running
  git command (``.git/index.lock``) is waited for, so a sync never sees half a branch.
* :class:`Watcher` runs incremental syncs on those signals in a thread of its own:
  ``Watcher(index_factory, on_sync=callback)`` with ``start()`` / ``stop()``. The sync
  itself walks and stat-diffs the whole tree, so nothing depends on every event being
  seen: editors' atomic-rename saves, deleted and re-created directories and dropped
  events all come right at the next sync.

``watchdog`` is imported only here, and the CLI imports this module only for ``scry watch``.
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import click

from scrydb.cli import _db_option, _open
from scrydb.config import CONFIG_NAME, IndexConfig
from scrydb.errors import LockedError
from scrydb.index import Index
from scrydb.sync import SyncReport
from scrydb.walk import NOISE_DIRS, IgnoreRules

#: Quiet time after the last relevant event before a sync starts (DESIGN.md: ~500 ms).
DEBOUNCE_S = 0.5
#: Longest a stream of events that never goes quiet postpones a sync.
MAX_DELAY_S = 5.0
#: Longest a sync waits for a running git command (``.git/index.lock``) to finish.
GIT_BUSY_MAX_S = 30.0
#: How often the wait re-checks ``.git/index.lock`` and the stop flag.
TICK_S = 0.1
#: Seconds before retrying when another process holds the writer lock.
LOCKED_RETRY_S = 1.0
#: A sync that embeds gives way to new file events after this long (the lexical pass
#: for the new events then runs first; embedding resumes after it).
YIELD_AFTER_S = 2.0
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
        self._rules: IgnoreRules | None = None
        self._loaded: set[str] = set()
        self._observer: Any = None

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
        if not self.config.include and any(
            p in NOISE_DIRS or p.endswith(".egg-info") or p.startswith("bazel-") for p in parts[:-1]
        ):
            return False
        return not self._ignored(parts, is_dir)

    def _reset_rules(self) -> bool:
        self._rules = None
        self._loaded.clear()
        return True

    def _ignored(self, parts: list[str], is_dir: bool) -> bool:
        """The walk's ignore rules, loaded lazily for the directories events touch."""
        try:
            if self._rules is None:
                self._rules = IgnoreRules(self.root, self.config)
            rules = self._rules
            for i in range(len(parts)):
                d = "/".join(parts[:i])
                if d and rules.ignored(d, True):
                    return True
                if d not in self._loaded:
                    rules.load_dir(d, self.root / d if d else self.root)
                    self._loaded.add(d)
            return rules.ignored("/".join(parts), is_dir)
        except Exception:  # a rule we cannot read: let the sync decide
            return False


class Watcher:
    """Incremental syncs on file events, in a background thread.

    ``index_factory()`` opens the index to write (called once in ``start()``, and again
    when ``.scry.toml`` changes); ``on_sync(report)`` is called after every sync that
    changed something (and after the first one), ``on_error(exc)`` when one failed (the
    watcher keeps going and retries on the next change). ``embed=False`` keeps the
    watcher lexical-only. The MCP server runs one of these in-process.

        w = Watcher(lambda: scrydb.open(root), on_sync=lambda r: print(r.files_changed))
        w.start()
        ...
        w.stop()
    """

    def __init__(
        self,
        index_factory: Callable[[], Index],
        on_sync: Callable[[SyncReport], None] | None = None,
        *,
        on_error: Callable[[BaseException], None] | None = None,
        warn: Callable[[str], None] | None = None,
        embed: bool = True,
        debounce: float = DEBOUNCE_S,
        initial_sync: bool = True,
    ) -> None:
        self.index_factory = index_factory
        self.on_sync = on_sync or (lambda report: None)
        self.warn = warn or (lambda msg: None)
        self.on_error = on_error or (lambda exc: self.warn(f"sync failed: {exc}"))
        self.embed = embed
        self.debounce = debounce
        self.initial_sync = initial_sync
        self.syncs = 0  #: syncs run so far
        self.index: Index | None = None
        self.changes: ChangeWatcher | None = None
        self._stop = threading.Event()
        self._idle = threading.Event()
        self._thread: threading.Thread | None = None
        self._locked_warned = False

    def start(self) -> None:
        """Open the index, start watching, then sync in the background."""
        if self._thread is not None:
            return
        self.index = self.index_factory()
        try:
            self.changes = self._change_watcher(self.index)
            self.changes.start()
        except BaseException:
            self.index.close()
            raise
        self._stop.clear()
        self._thread = threading.Thread(target=self._run, name="scry-watch", daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 10.0) -> None:
        """Stop watching; a running sync stops at its next batch boundary (nothing
        committed is lost) and the index is closed."""
        self._stop.set()
        if self.changes is not None:
            self.changes.stop()
        if self._thread is not None:
            self._thread.join(timeout)
            self._thread = None

    def wait_idle(self, timeout: float | None = None) -> bool:
        """Block until no change is waiting and no sync is running (tests, tools)."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            if self.changes is None or self.changes.quiet_and(self._idle.is_set):
                return True
            if deadline is not None and time.monotonic() >= deadline:
                return False
            time.sleep(0.02)

    @property
    def running(self) -> bool:
        """Whether the background thread is alive."""
        return self._thread is not None and self._thread.is_alive()

    # -- the thread --------------------------------------------------------------------

    def _change_watcher(self, ix: Index) -> ChangeWatcher:
        db = str(ix.db_path)
        return ChangeWatcher(
            ix.root,
            ignore=[db + s for s in ("", "-wal", "-shm", "-journal", ".lock")],
            debounce=self.debounce,
            config=ix.config.index,
        )

    def _run(self) -> None:
        assert self.changes is not None
        try:
            if self.initial_sync:
                self._cycle(first=True)
            while not self._stop.is_set():
                self._idle.set()
                if self.changes.wait(self._stop, on_fire=self._idle.clear):
                    self._cycle()
        finally:
            self._idle.set()
            if self.index is not None:
                with contextlib.suppress(Exception):
                    self.index.close()

    def _cycle(self, first: bool = False) -> None:
        assert self.changes is not None and self.index is not None
        if self.changes.config_changed:
            self.changes.config_changed = False
            self._reopen()
        started = time.monotonic()

        def cancel() -> bool:
            if self._stop.is_set():
                return True
            # New edits wait at most YIELD_AFTER_S for a long embedding run.
            return bool(self.changes and self.changes.dirty) and (
                time.monotonic() - started >= YIELD_AFTER_S
            )

        try:
            report = self.index.sync(embed=self.embed, warn=self.warn, wait=False, cancel=cancel)
        except LockedError:
            if not self._locked_warned:
                self.warn("another scry process is indexing; syncing when it is done")
                self._locked_warned = True
            if not self._stop.wait(LOCKED_RETRY_S):
                self.changes.poke()
            return
        except Exception as e:  # keep watching; the next change retries
            self.on_error(e)
            return
        self._locked_warned = False
        self.syncs += 1
        if report.cancelled and not self._stop.is_set():
            self.changes.poke()  # finish (embedding) after the new changes' lexical pass
        if first or report.changed:
            self.on_sync(report)

    def _reopen(self) -> None:
        try:
            fresh = self.index_factory()
        except Exception as e:  # a broken config: keep the old one
            self.on_error(e)
            return
        if self.index is not None:
            self.index.close()
        self.index = fresh
        self.warn(f"{CONFIG_NAME} changed: configuration reloaded")


# -- the command -------------------------------------------------------------------------


def describe(report: SyncReport) -> str:
    """One line about a sync, as ``scry watch`` prints it."""
    parts = []
    if report.rebuilt:
        parts.append(f"rebuilt ({report.rebuilt})")
    parts.append(
        f"{report.files_added} new, {report.files_changed} changed, "
        f"{report.files_deleted} deleted files"
    )
    parts.append(f"{report.chunks_written} chunks written")
    if report.texts_embedded:
        parts.append(f"{report.texts_embedded} embedded")
    if report.pending:
        parts.append(f"{report.pending} waiting for embeddings")
    parts.append(f"{report.seconds:.2f}s")
    return ", ".join(parts)


@click.command("watch")
@click.argument("path", required=False, type=click.Path(file_okay=False))
@click.option("--no-embed", is_flag=True, help="Keep the lexical index only (no model).")
@click.option(
    "--debounce",
    type=click.FloatRange(0.05, 60.0),
    default=DEBOUNCE_S,
    show_default=True,
    help="Seconds of quiet after a change before syncing.",
)
@_db_option
def watch_cmd(
    path: str | None, no_embed: bool, debounce: float, db: str | None, config: str | None
) -> None:
    """Keep the index fresh: sync about half a second after files change.

    Syncs once at start, then on every burst of file events (saves, checkouts,
    deletions), honouring the same ignore rules as `scry index`. One line per sync goes
    to stderr; Ctrl-C stops cleanly (everything committed is kept).

    \b
    Example:
      scry watch                  # the repository containing the current directory
      scry watch ~/src/project --no-embed
    """

    def say(msg: str) -> None:
        stamp = time.strftime("%H:%M:%S")
        click.echo(f"scry watch {stamp}: {msg}", err=True)

    w = Watcher(
        lambda: _open(path, db, config),
        on_sync=lambda rep: say(describe(rep)),
        on_error=lambda e: say(f"sync failed: {e}"),
        warn=lambda msg: say(f"warning: {msg}"),
        embed=not no_embed,
        debounce=debounce,
    )
    w.start()
    assert w.index is not None and w.changes is not None
    say(f"watching {w.index.root} (index {w.index.db_path}, {w.changes.kind}); Ctrl-C stops")
    previous = signal.getsignal(signal.SIGTERM)
    signal.signal(signal.SIGTERM, _raise_interrupt)
    try:
        while w.running:
            time.sleep(0.2)
    except KeyboardInterrupt:
        pass
    finally:
        signal.signal(signal.SIGTERM, previous)
        say("stopping…")
        w.stop()
    click.echo("scry watch: stopped", err=True)


def _raise_interrupt(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt
