"""The one sync loop of ``scry watch`` and ``scry serve``: lexical syncs at once after
debounced file events, embeddings behind them in the same worker, giving way to new events."""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable

from scrydb.config import CONFIG_NAME
from scrydb.errors import LockedError, ScryError
from scrydb.index import Index
from scrydb.sync import Progress, SyncReport, fingerprint
from scrydb.watch.events import DEBOUNCE_S, LOCKED_RETRY_S, ChangeWatcher
from scrydb.watch.giveway import GaveWay, GivingWayEmbedder, _never


class _ModelSlot:
    """The watcher's model and the second Index on the same file that embeds through it
    (both built on first use, dropped when the configuration is reloaded). Used by the
    watcher's thread; ``model`` is read by others."""

    def __init__(self, queries: bool, loaded: Callable[[], None]) -> None:
        self.model: GivingWayEmbedder | None = None
        self.queries = queries
        self._loaded = loaded
        self._index: Index | None = None
        self._broken: str | None = None  #: why the embedder could not even be built

    @property
    def state(self) -> str:
        if self._broken is not None:
            return "failed"
        return self.model.state if self.model is not None else "cold"

    @property
    def error(self) -> str | None:
        return self._broken or (self.model.error if self.model is not None else None)

    def load(self, writer: Index) -> None:
        """Start loading the model in the background."""
        if self.model is None:
            try:
                self.model = GivingWayEmbedder(writer.embedder(), queries=self.queries)
            except Exception as e:  # a broken [embed] section
                self._broken = str(e) if isinstance(e, ScryError) else f"{type(e).__name__}: {e}"
                return
        self.model.load(done=self._loaded)

    def retry(self) -> None:
        """Try a model that failed again at the next load."""
        self._broken = None
        if self.model is not None and self.model.state == "failed":
            self.model.state = "cold"

    def index(self, writer: Index) -> Index:
        """The Index whose syncs embed through ``model`` (never used at the same time as
        ``writer``)."""
        assert self.model is not None
        if self._index is None:
            self._index = Index(writer.root, writer.db_path, writer.config, embedder=self.model)
        return self._index

    def reset(self, writer: Index | None) -> None:
        """Close the embedding Index; keep the model only if ``writer`` embeds with it."""
        ix, self._index = self._index, None
        if ix is not None:
            with contextlib.suppress(Exception):
                ix.close()
        self._broken = None
        if self.model is not None and (writer is None or writer.embedder() is not self.model.inner):
            self.model = None


def model_change_due(ix: Index) -> bool:
    """Whether the index's vectors come from another model (or embedded-text recipe) than
    the configured one: the embedding sync computes the new ones."""
    store = ix.store
    try:
        if store.meta("next_embedder") is not None:
            return True
        live = store.meta("embedder")
        want = fingerprint(ix.config, ix.embedder_id())
        return live is not None and (
            live != want["embedder"] or store.meta("embed_text") != want["embed_text"]
        )
    except Exception:  # (the embedding sync would find the same problem)
        return False


class Watcher:
    """Keeps an index fresh from file events, in a background thread: every burst of
    events gets a lexical sync at once, and embeddings are computed behind it.

    ``index_factory()`` opens the index to write (called once in ``start()``, and again
    when ``.scry.toml`` changes: the configuration is reloaded and the tree synced with
    it). One worker thread runs every sync, so two syncs of this watcher never overlap
    (each holds the writer lock; the index's connections are used by that thread only):

    * a **lexical** sync (``embed=False``, no model loaded) about ``debounce`` seconds
      after each burst of changes: what changed is searchable lexically at once;
    * then, while chunks wait for vectors (or a model change is under way), an
      **embedding** sync (``embed=True``), once the model has loaded: the load runs in
      a thread of its own and holds no lock, so lexical syncs go on meanwhile
      (:class:`GivingWayEmbedder`). The embedding sync gives way as soon as new file
      events arrive (between small slices of texts, keeping what it computed): the new
      events' lexical sync runs first, then embedding resumes.

    Another process's writer lock (a ``scry index`` running) neither blocks nor fails:
    ``warn`` says so once, ``phase`` is "waiting", and the sync runs once the lock is free.

    ``on_sync(report)`` is called after every sync that changed something (and after the
    first one): a lexical sync's report counts what waits for embeddings (``pending``),
    an embedding sync's what it embedded. ``on_error(exc)`` is called when a sync failed
    (the watcher keeps going and retries on the next change), ``warn(msg)`` with notes
    (another process holds the index, a model that cannot load, a reloaded config).
    ``progress`` is passed to every sync. ``embed=False`` keeps the watcher lexical-only
    (no model); ``preload=True`` loads the model at start even when nothing waits for
    embeddings, queries first (a server's searches embed through :attr:`model`);
    ``watch=False`` syncs at start (and on :meth:`poke`) without watching files. All
    callbacks run in the worker thread.

        w = Watcher(lambda: scrydb.open(root), on_sync=lambda r: print(r.files_changed))
        w.start(); ...; w.stop()

    State for status displays: ``phase`` ("starting", "lexical", "embedding",
    "loading model", "waiting" for another writer, "idle", "stopped"), ``model_state``,
    ``lexical_ready`` (set after the first lexical sync), ``syncs``, ``reloads``.
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
        watch: bool = True,
        progress: Progress | None = None,
        preload: bool = False,
    ) -> None:
        self.index_factory = index_factory
        self.on_sync = on_sync or (lambda report: None)
        self.warn = warn or (lambda msg: None)
        self.on_error = on_error or (lambda exc: self.warn(f"sync failed: {exc}"))
        self.embed = embed
        self.debounce = debounce
        self.initial_sync = initial_sync
        self.watch = watch
        self.progress = progress
        self.preload = preload and embed
        self.syncs = 0  #: syncs run so far (lexical and embedding)
        self.reloads = 0  #: times a changed ``.scry.toml`` was loaded
        self.phase = "starting"
        self.waiting = False  #: another process holds the writer lock; syncs wait for it
        self.lexical_ready = threading.Event()
        self.index: Index | None = None
        self.changes: ChangeWatcher | None = None
        self._stop = threading.Event()
        self._wake = threading.Event()  #: stop, or the model finished loading
        self._idle = threading.Event()
        self._models = _ModelSlot(self.preload, self._wake.set)
        self._embed_todo = False  #: chunks wait for vectors, or a model change is due
        self._said: str | None = None  #: the last model/embedding problem reported
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        """Open the index, start watching, then sync in the background."""
        if self._thread is not None:
            return
        self.index = self.index_factory()
        try:
            self.changes = ChangeWatcher.for_index(self.index, self.debounce)
            if self.watch:
                self.changes.start()
        except BaseException:
            self.index.close()
            raise
        self._stop.clear()
        self._thread = threading.Thread(target=self._run, name="scry-watch", daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 10.0) -> None:
        """Stop watching; a running sync stops at its next batch boundary (nothing
        committed is lost) and the index is closed. A model still loading is not
        waited for."""
        self._stop.set()
        self._wake.set()
        if self.changes is not None:
            self.changes.stop()
        if self._thread is not None:
            self._thread.join(timeout)
            self._thread = None

    def poke(self) -> None:
        """Sync as if files had changed (e.g. with ``watch=False``)."""
        if self.changes is not None:
            self.changes.poke()

    def wait_idle(self, timeout: float | None = None) -> bool:
        """Block until no change is waiting, no sync is running or owed and no chunk
        waits for a vector that can be computed (tests, tools)."""
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

    @property
    def model(self) -> GivingWayEmbedder | None:
        """The model the embedding syncs use (None until it is first loaded)."""
        return self._models.model

    @property
    def model_state(self) -> str:
        """The model's state: "off" (``embed=False``), "cold" (not needed yet),
        "loading", "ready" or "failed" (``model_error`` says why)."""
        return self._models.state if self.embed else "off"

    @property
    def model_error(self) -> str | None:
        """Why the model failed to load, if it did."""
        return self._models.error

    # -- the thread --------------------------------------------------------------------

    def _run(self) -> None:
        assert self.changes is not None and self.index is not None
        try:
            if self.initial_sync:
                self._lexical()
            elif self.embed:  # chunks left waiting by an earlier run are embedded now
                with contextlib.suppress(Exception):
                    st = self.index.status(check_stale=False, check_git=False)
                    self._embed_todo = bool(st.pending) or model_change_due(self.index)
            while not self._stop.is_set():
                self._wake.clear()  # (before looking: a load finishing now wakes the wait)
                if self._stop.is_set():
                    break
                if self._model_step():
                    continue
                loading = self._embed_todo and self.model_state == "loading"
                self.phase = "waiting" if self.waiting else "loading model" if loading else "idle"
                if not (self._embed_todo or self.waiting):
                    self._idle.set()
                retry = LOCKED_RETRY_S if self.waiting else None
                fired = self.changes.wait(self._wake, timeout=retry, on_fire=self._idle.clear)
                if fired or (self.waiting and not self._stop.is_set()):
                    self._lexical()
        finally:
            self._idle.set()
            self.phase = "stopped"
            self._models.reset(None)
            with contextlib.suppress(Exception):
                self.index.close()

    def _model_step(self) -> bool:
        """Move the embedding side on: load the model when it is needed, run the
        embedding sync when it is due and can run (True), or give up on a model that
        cannot load until the next change."""
        if not self.embed:
            return False
        assert self.changes is not None and self.index is not None
        state = self._models.state
        if state == "cold" and (self._embed_todo or self.preload):
            self._models.load(self.index)
        elif self._embed_todo and state == "ready":
            if not (self.changes.dirty or self.waiting):
                self._embedding()
                return True
        elif self._embed_todo and state == "failed":
            self._say(
                f"cannot load the embedding model ({self._models.error}); lexical syncs go "
                "on, embeddings wait for the next change"
            )
            self._embed_todo = False
        return False

    def _lexical(self) -> None:
        """The lexical sync (no model): what changed is searchable at once."""
        assert self.changes is not None and self.index is not None
        if self.changes.config_changed:
            self.changes.config_changed = False
            self._reload()
        self.phase = "waiting" if self.waiting else "lexical"
        try:
            report = self.index.sync(
                embed=False,
                probe=False,
                warn=self.warn,
                wait=False,
                cancel=self._stop.is_set,
                progress=self.progress,
            )
        except Exception as e:
            self._failed(e)
            return
        first = not self.lexical_ready.is_set()
        self.waiting = False
        self.syncs += 1
        self.lexical_ready.set()
        if self.embed and not self._stop.is_set():
            self._embed_todo = bool(report.pending) or model_change_due(self.index)
            if self._embed_todo:
                self._models.retry()  # a model that failed to load is tried again
        if first or report.changed:
            self.on_sync(report)

    def _embedding(self) -> None:
        """The embedding sync: gives way to new file events between slices of texts."""
        assert self.changes is not None and self.index is not None
        model = self.model
        assert model is not None
        try:
            ix = self._models.index(self.index)
        except Exception as e:
            self._embed_todo = False
            self.on_error(e)
            return
        changes, stop = self.changes, self._stop

        def give_way() -> bool:
            return stop.is_set() or changes.dirty

        self.phase = "embedding"
        model.give_way = give_way
        try:
            report = ix.sync(
                embed=True, warn=self.warn, wait=False, cancel=give_way, progress=self.progress
            )
        except GaveWay:
            return  # resumed after the new events' lexical sync
        except Exception as e:
            if not isinstance(e, LockedError):
                self._embed_todo = False  # tried again after the next change
            self._failed(e)
            return
        finally:
            model.give_way = _never
        self.waiting = False
        self._said = None
        self.syncs += 1
        if not report.cancelled:
            self._embed_todo = False  # a change during it is embedded after its lexical sync
        if report.changed:
            self.on_sync(report)

    def _failed(self, e: BaseException) -> None:
        if isinstance(e, LockedError):  # wait for it, saying so once (see _run)
            if not self.waiting:
                self.warn("another scry process is indexing; syncing when it is done")
            self.waiting = True
            self.phase = "waiting"
        elif not self._stop.is_set():  # keep watching; the next change retries
            self.on_error(e)

    def _say(self, msg: str) -> None:
        """Warn once about a problem that repeats on every change."""
        if msg != self._said:
            self._said = msg
            self.warn(msg)

    def _reload(self) -> None:
        """``.scry.toml`` changed: open the index again with the new configuration (its
        ignore rules apply to the file events too). A broken config keeps the old one."""
        assert self.changes is not None and self.index is not None
        try:
            fresh = self.index_factory()
        except Exception as e:
            self.on_error(e)
            return
        old, self.index = self.index, fresh
        with contextlib.suppress(Exception):
            old.close()
        self._models.reset(fresh)
        self.changes.use_config(fresh.config.index)
        self.reloads += 1
        self.warn(f"{CONFIG_NAME} changed: configuration reloaded")


def describe(report: SyncReport) -> str:
    """One line about a sync, as ``scry watch`` prints it."""
    parts = []
    if report.rebuilt:
        parts.append(f"rebuilt ({report.rebuilt})")
    files = report.files_added + report.files_changed + report.files_deleted
    embedded = report.texts_embedded + report.headers_embedded + report.windows_embedded
    if files or report.chunks_written or not embedded:  # (not embedding alone)
        parts.append(
            f"{report.files_added} new, {report.files_changed} changed, "
            f"{report.files_deleted} deleted files"
        )
        parts.append(f"{report.chunks_written} chunks written")
    if report.texts_embedded:
        parts.append(f"{report.texts_embedded} embedded")
    if report.headers_embedded:
        parts.append(f"{report.headers_embedded} headers embedded")
    if report.windows_embedded:
        parts.append(f"{report.windows_embedded} windows and comment views embedded")
    if report.pending:
        parts.append(f"{report.pending} waiting for embeddings")
    parts.append(f"{report.seconds:.2f}s")
    return ", ".join(parts)
