"""The service behind ``scry serve``: a watcher that writes the index, a reader that answers,
the first-use wait, cancellation and progress (the tools are in :mod:`.tools`)."""

from __future__ import annotations

import contextlib
import os
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import anyio
import numpy as np
from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError

from scrydb import firstuse
from scrydb.config import CONFIG_NAME, Config
from scrydb.embed import Embedder
from scrydb.errors import EmbedderError, ScryError
from scrydb.index import Index
from scrydb.paths import no_repository, repo_root
from scrydb.sync import SyncReport
from scrydb.watch import Watcher, describe

#: Most hits one search or related call returns.
MAX_HITS = 50
#: Most matches one ``locate`` returns.
MAX_MATCHES = 500
#: A long call reports progress this often (only when the client sent a progressToken).
PROGRESS_EVERY_S = 1.0
#: A call made before the first index exists waits at most this long for its lexical
#: phase, then answers from what is committed (with a note); below the usual 60 s tool
#: timeouts of MCP clients.
FIRST_INDEX_WAIT_S = 45.0
#: Seconds the shutdown waits for the background sync to reach a safe point.
STOP_WAIT_S = 1.5


T = TypeVar("T")


class _Cancelled(Exception):
    """The request was cancelled by the client: stop working."""


class _Cancel:
    """A request's cancellation flag (set from the event loop, read by its worker)."""

    def __init__(self) -> None:
        self._event = threading.Event()

    def set(self) -> None:
        self._event.set()

    def is_set(self) -> bool:
        return self._event.is_set()

    def check(self) -> None:
        if self._event.is_set():
            raise _Cancelled()


# -- what the syncs reported -------------------------------------------------------------


class _SyncState:
    """What the watcher's syncs reported, for ``status`` and progress messages (written
    by the watcher's thread, read by the requests')."""

    def __init__(self) -> None:
        self.stage = ""  #: the running sync's progress phase: "scan", "chunk", "embed"
        self.done = 0
        self.total = 0
        self.last_summary = ""
        self.error: str | None = None
        self.error_at = -1  #: the watcher's sync count when ``error`` happened
        self.watcher = "off"  #: what the status says when no file watcher runs

    def progress(self, stage: str, done: int, total: int) -> None:
        self.stage, self.done, self.total = stage, done, total

    def synced(self, report: SyncReport) -> None:
        self.last_summary = f"{time.strftime('%H:%M:%S')}: {describe(report)}"

    def failed(self, e: BaseException, syncs: int) -> None:
        self.error = str(e) if isinstance(e, ScryError) else f"{type(e).__name__}: {e}"
        self.error_at = syncs

    def error_now(self, syncs: int) -> str | None:
        """The last error, unless a sync has succeeded since."""
        return self.error if self.error_at == syncs else None

    def describe(self, phase: str) -> str:
        if phase == "lexical" and self.stage == "chunk" and self.total:
            return f"indexing files {self.done}/{self.total}"
        if phase == "embedding" and self.stage == "embed" and self.total:
            return f"embedding chunks {self.done}/{self.total}"
        if phase == "waiting":
            return "waiting for another scry process that is indexing"
        return phase


# -- the reader's model ----------------------------------------------------------------


class _QueryModel(Embedder):
    """The reader's embedder: query vectors from the watcher's model (one model in the
    process, its calls serialised), never waiting for it to load. ``fallback`` gives the
    id and dimension without loading anything."""

    def __init__(self, watcher: Watcher, fallback: Embedder) -> None:
        self.watcher = watcher
        self.fallback = fallback
        self.id = fallback.id

    @property
    def dim(self) -> int:
        return self.fallback.dim

    def embed_documents(self, texts: list[str]) -> np.ndarray:
        raise EmbedderError("the server's reader does not embed documents")

    def embed_queries(self, texts: list[str]) -> np.ndarray:
        # An error here becomes a note, and the engine answers with the lexical legs.
        w = self.watcher
        model = w.model
        if not w.embed:
            raise EmbedderError("embeddings are off (scry serve --no-embed)")
        if w.model_state == "failed":
            raise EmbedderError(f"the embedding model failed to load: {w.model_error}")
        if model is None or model.inner is not self.fallback:
            raise EmbedderError("the embedding model is still loading (lexical results for now)")
        if model.state == "ready":
            return model.embed_queries(texts)
        # Queries are warm, the document side still loads (holding the lock): skip.
        if model.queries_ready.is_set() and model.lock.acquire(blocking=False):
            try:
                return model.inner.embed_queries(texts)
            finally:
                model.lock.release()
        raise EmbedderError("the embedding model is still loading (lexical results for now)")


# -- the service: a watcher that writes, a reader that answers --------------------------


class ScryService:
    """Everything the tools need: a :class:`~scrydb.watch.Watcher` keeps the index fresh
    (the same loop as ``scry watch``: a changed ``.scry.toml`` is reloaded, another
    process's writer lock is waited for), and a reader Index answers the requests."""

    def __init__(
        self,
        root: str | os.PathLike[str] | None,
        db: str | os.PathLike[str] | None = None,
        config: str | os.PathLike[str] | None = None,
        *,
        embed: bool = True,
        watch: bool = True,
        warn: Callable[[str], None] | None = None,
    ) -> None:
        if root is None:
            # The rule a search follows: outside any repository, index nothing unasked.
            found = repo_root(None)
            if found is None and db is None:
                raise no_repository(
                    Path.cwd(),
                    "start the server inside a repository, pass --root DIR, or run "
                    "`scry index` here first",
                )
            root_path = found or Path.cwd()
        else:
            root_path = Path(root).expanduser()
        if not root_path.exists():
            raise ScryError(f"no such directory: {root}")
        if not root_path.is_dir():
            raise ScryError(f"not a directory: {root}")
        root_path = root_path.resolve()
        if root is None and root_path in (Path.home().resolve(), Path(root_path.anchor)):
            # Some clients start servers in the home directory: never index all of it.
            raise ScryError(
                f"not serving {root_path} (the home or root directory) unless asked: "
                "pass --root DIR, or start the server inside the repository"
            )
        self.embed = embed
        self.warn = warn or (lambda msg: print(f"scry serve: {msg}", file=sys.stderr, flush=True))
        self._config_arg = config
        self._base: Embedder | None = None
        self.config = Config()  #: the configuration as last (re)loaded
        # The writer first: it creates the file and schema the reader then opens.
        self._opened: Index | None = self._open_writer(root_path, db)
        self.root, self.db_path = self._opened.root, self._opened.db_path
        # The first-use policy the CLI follows too; here the watcher runs it (lexical pass
        # first, then embeddings in this process) and the tools wait for the lexical pass.
        plan = firstuse.plan(self._opened, embed=embed, allow_background=False)
        self._had_index = not plan.first
        if plan.first:
            self.warn(str(plan.notice(self.root)))
        self.state = _SyncState()
        self.watcher = self._watcher(watch)
        self._reader_lock = threading.Lock()
        try:
            self.reader = self._open_reader()
        except BaseException:
            self._opened.close()
            raise
        self._owner_lock = threading.Lock()
        self._owner: _Cancel | None = None

    # lifecycle

    def start(self) -> None:
        """Start the watcher: the initial sync, the model load and the file events, all
        in the background."""
        try:
            self.watcher.start()
        except Exception as e:  # the server still works without file events
            if not self.watcher.watch:
                raise
            self.warn(f"file watcher unavailable ({e}); the index syncs only at start")
            self.state.watcher = f"off ({e})"
            self.watcher = self._watcher(watch=False)
            model = self.reader.embedder()
            assert isinstance(model, _QueryModel)
            model.watcher = self.watcher
            self.watcher.start()

    def stop(self) -> None:
        """Stop syncing (at a safe point) and close both indexes."""
        self.watcher.stop(timeout=STOP_WAIT_S)  # a model still loading is not waited for
        got = self._reader_lock.acquire(timeout=1.0)
        try:
            self.reader.close()
        finally:
            if got:
                self._reader_lock.release()
        if self._opened is not None:
            self._opened.close()

    def _open_writer(self, root: Path, db: str | os.PathLike[str] | None) -> Index:
        """The index to write, with the configuration as it is now (and the same
        embedder as before when its settings did not change)."""
        import scrydb
        from scrydb.config import find_config
        from scrydb.embed import make_embedder

        cfg = find_config(root, self._config_arg)
        base = self._base
        if base is None or self.config.embed != cfg.embed:  # (else: keep it, loaded)
            base = make_embedder(cfg.embed)
        ix = scrydb.open(root, db, cfg, embedder=base)
        self._base, self.config = base, cfg
        return ix

    def _index_factory(self) -> Index:
        """For the watcher: the index opened first, then (on a config change) anew."""
        ix, self._opened = self._opened, None
        return ix if ix is not None else self._open_writer(self.root, self.db_path)

    def _open_reader(self) -> Index:
        import scrydb

        assert self._base is not None
        model = _QueryModel(self.watcher, self._base)
        return scrydb.open(self.root, self.db_path, self.config, embedder=model)

    def _watcher(self, watch: bool) -> Watcher:
        return Watcher(
            self._index_factory,
            on_sync=self.state.synced,
            on_error=self._on_error,
            warn=self.warn,
            embed=self.embed,
            watch=watch,
            progress=self.state.progress,
            preload=self.embed,  # searches embed their queries with the watcher's model
        )

    def _on_error(self, e: BaseException) -> None:
        self.state.failed(e, self.watcher.syncs)
        self.warn(f"sync failed: {self.state.error}")

    # request helpers (called in worker threads)

    @property
    def lexical_ready(self) -> bool:
        """Whether searches can answer: an index from an earlier run, or this one's
        first lexical sync."""
        return self._had_index or self.watcher.lexical_ready.is_set()

    def await_index(self, cancel: _Cancel, timeout: float = FIRST_INDEX_WAIT_S) -> list[str]:
        """Wait for the first lexical index; notes to add when it is not complete."""
        deadline = time.monotonic() + timeout
        while not self.lexical_ready:
            error = self.state.error_now(self.watcher.syncs)
            if error is not None or self.watcher.phase == "stopped":
                return [firstuse.first_index_note(error or "stopped", "")]
            cancel.check()
            if time.monotonic() >= deadline:
                return [firstuse.first_index_note(None, self.describe())]
            self.watcher.lexical_ready.wait(0.1)
        return []

    def with_reader(self, cancel: _Cancel, fn: Callable[[Index], T]) -> T:
        """Run ``fn(reader_index)`` alone on the reader (cancellable while waiting); the
        reader follows a reloaded configuration."""
        while not self._reader_lock.acquire(timeout=0.1):
            cancel.check()
        try:
            if self.reader.config is not self.config:
                fresh = self._open_reader()
                self.reader.close()
                self.reader = fresh
            with self._owner_lock:
                self._owner = cancel
            cancel.check()
            return fn(self.reader)
        finally:
            with self._owner_lock:
                self._owner = None
            self._reader_lock.release()

    def interrupt(self, cancel: _Cancel) -> None:
        """Cancel a request: its worker stops waiting, its running SQL is interrupted."""
        cancel.set()
        with self._owner_lock:
            if self._owner is cancel:
                with contextlib.suppress(Exception):
                    self.reader.store.conn.interrupt()

    def embedding_now(self) -> bool:
        """Whether this server is computing (or about to compute) embeddings: a sync is
        running with the model on."""
        return self.embed and self.watcher.phase in ("starting", "lexical", "embedding")

    def describe(self) -> str:
        """What the background sync is doing, in a few words."""
        return self.state.describe(self.watcher.phase)

    def service_lines(self) -> list[str]:
        """The server's own lines of the ``status`` answer: sync, watcher, model."""
        w, state = self.watcher, self.state
        error = state.error_now(w.syncs)
        lines = [f"sync      {self.describe()}" + (f"; last error: {error}" if error else "")]
        if w.changes is not None and w.watch:
            events = w.changes.events
            seen = f", {events} file events seen" if events else ""
            lines.append(f"watcher   watchdog ({w.changes.kind}){seen}")
        else:
            lines.append(f"watcher   {state.watcher}")
        model = w.model_state
        if model == "failed":
            model = f"failed: {w.model_error}"
        elif model == "off":
            model = "off (scry serve --no-embed)"
        lines.append(f"embedder  {model}")
        if state.last_summary:
            lines.append(f"last run  {state.last_summary}")
        if w.reloads:
            lines.append(f"config    {CONFIG_NAME} reloaded ({w.reloads}x since the start)")
        return lines

    def status(self) -> Any:
        """``Index.status()`` through a read-only connection of its own: its git check
        walks the tree, and searches need not wait for that."""
        import scrydb

        with scrydb.open(self.root, self.db_path, self.config, readonly=True) as ix:
            return ix.status(check_stale=False, check_git=True)

    def progress_message(self, label: str, started: float) -> str:
        waited = time.monotonic() - started
        if not self.lexical_ready:
            return f"{label}: waiting for the first index ({self.describe()}), {waited:.0f}s"
        return f"{label}: working, {waited:.0f}s"

    async def run(self, ctx: Context | None, label: str, work: Callable[[_Cancel], str]) -> str:
        """Run ``work`` in a worker thread: progress while it runs, cancellable, errors
        the agent can act on as tool errors (``isError``)."""
        cancel = _Cancel()
        started = time.monotonic()
        outcome: list[Any] = []

        def call() -> None:
            try:
                outcome.append(("ok", work(cancel)))
            except Exception as e:  # handed back to the event loop
                outcome.append(("error", e))

        async def beat() -> None:
            n = 0
            while True:
                await anyio.sleep(PROGRESS_EVERY_S)
                n += 1
                if ctx is not None:
                    with contextlib.suppress(Exception):
                        await ctx.report_progress(n, None, self.progress_message(label, started))

        try:
            async with anyio.create_task_group() as tg:
                tg.start_soon(beat)
                await anyio.to_thread.run_sync(call, abandon_on_cancel=True)
                tg.cancel_scope.cancel()
        except BaseException:
            self.interrupt(cancel)  # cancelled by the client (or shutting down)
            raise
        kind, value = outcome[0]
        if kind == "ok":
            return value
        if isinstance(value, ScryError):
            raise ToolError(str(value)) from None
        raise value
