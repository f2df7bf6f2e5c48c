"""``scry serve``: the index as an MCP server over stdio, for coding agents.

One repository per server. Tools: ``search`` (ranked chunks, about 1,500 tokens for 10
hits), ``read`` (indexed lines, whole chunks), ``related`` (dense neighbours),
``locate`` (exact literal matches) and ``status``. Built on the official ``mcp`` SDK
(v2: ``mcp.server.mcpserver.MCPServer``).

The server answers at once. A background thread owns a writer :class:`~scrydb.Index`:
it syncs the lexical phase first (search works as soon as that is committed), then
embeds; a file watcher (:class:`scrydb.watch.ChangeWatcher`) re-syncs about 500 ms
after the last change, and embedding gives way to new edits. Requests use a
second, reader Index (WAL: readers never wait for the writer), one request at a time.
While embeddings are pending, search answers lexically and says so in a note.

Each tool runs in a worker thread. When the client asked for progress (a
``progressToken``) a long call reports it about once a second; a cancelled call stops
waiting at once and interrupts its SQL statement (``sqlite3_interrupt``).
"""

from __future__ import annotations

import contextlib
import os
import re
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Annotated, Any, TypeVar

import anyio
import click
import numpy as np
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import ToolAnnotations
from pydantic import Field

from scrydb import present
from scrydb.cli import _db_option
from scrydb.config import CONFIG_NAME
from scrydb.embed import Embedder
from scrydb.errors import EmbedderError, ScryError
from scrydb.results import Hit, Results

#: Search output budget: about this many tokens per requested hit (10 hits ~ 1,500).
TOKENS_PER_HIT = 150
#: ... but never less than this (a 2-hit answer keeps readable snippets).
MIN_BUDGET = 600
#: Most hits one search or related call returns.
MAX_HITS = 50
#: Most lines and characters one ``read`` returns (a larger file is read in pages).
READ_MAX_LINES = 300
READ_MAX_CHARS = 40_000
#: Most matches one ``locate`` returns.
MAX_MATCHES = 500
#: Quiet time after the last file event before the watcher syncs (DESIGN.md "watch").
DEBOUNCE_S = 0.5
#: A long call reports progress this often (only when the client sent a progressToken).
PROGRESS_EVERY_S = 1.0
#: A call made before the first index exists waits at most this long for its lexical
#: phase, then answers from what is committed (with a note); below the usual 60 s tool
#: timeouts of MCP clients.
FIRST_INDEX_WAIT_S = 45.0
#: The embedder is called with at most this many chunk texts at a time, so a query
#: waits for at most one small batch of the background sync.
EMBED_SLICE = 16
#: Embedding gives way to new file events after this long (their lexical pass runs
#: first, so search sees the edit; embedding resumes in the next round).
YIELD_AFTER_S = 2.0
#: Seconds the shutdown waits for the background sync to reach a safe point.
STOP_WAIT_S = 1.5

INSTRUCTIONS = (
    "scry: ranked code search over one repository ({root}). For any question about this "
    "code (where / how / what is X), call `search` first, then `read` a hit to see all of "
    "it; `locate` finds exact strings; `related` finds similar code; `status` says how "
    "fresh the index is. Paths are relative to the repository root."
)

#: What each tool is for, in the words the agent reads (few words: they cost context in
#: every conversation).
DESCRIPTIONS = {
    "search": (
        "Find code by meaning or by name: the best chunks of this repository, ranked "
        "(path:lines, kind, symbol, snippet). Use it first for any question about the code; "
        "then `read` a hit to see all of it."
    ),
    "read": (
        "Lines of an indexed file, served from the index. Give a hit's start_line for its "
        "whole chunk, start_line and end_line for a range, neither for the file's start "
        f"(at most {READ_MAX_LINES} lines per call)."
    ),
    "related": (
        "Code most similar to the chunk at file:line, other files first: sibling "
        "implementations, the same pattern elsewhere, likely tests."
    ),
    "locate": (
        "Exact occurrences of a literal string (no regex) in the indexed files, as "
        "path:line:col with the enclosing symbol. Use for known strings; for questions "
        "use `search`."
    ),
    "status": (
        "What is indexed and how fresh: files, chunks, pending embeddings, the background "
        "sync and the file watcher."
    ),
}

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


# -- agent-facing text -------------------------------------------------------------------


#: The line under a cut snippet: how to get the whole chunk through the tools.
READ_HINT = '  … read(file="{path}", start_line={start}) gives the whole chunk'


def format_hits(res: list[Hit]) -> str:
    """Hits as the tools print them: ``path:start-end  kind symbol``, then the snippet
    with line numbers, the anchor line marked ``>`` (the CLI's format), and a read hint
    when the snippet was cut."""
    return "\n\n".join(present.format_hit(h, read_hint=READ_HINT) for h in res)


def budget_for(limit: int) -> int:
    """Token budget of a search answer with ``limit`` hits."""
    return max(MIN_BUDGET, TOKENS_PER_HIT * limit)


def fit_hits(res: Results, limit: int) -> Results:
    """Shorten snippets (then drop tail hits) until the text fits ``budget_for(limit)``."""
    return present.fit_budget(res, budget_for(limit), render=format_hits)


def _notes(res: Results, embedding: bool) -> list[str]:
    lines = present.format_notes(res)
    if embedding and res.notes:  # the server computes embeddings itself
        lines.append("note: scry serve is computing embeddings now")
    return lines


def format_search(
    res: Results, limit: int, extra_notes: list[str] | None = None, embedding: bool = True
) -> str:
    """The ``search`` / ``related`` answer: hits fitted to the budget, then notes
    (``embedding``: the server computes missing embeddings itself)."""
    fit_hits(res, limit)
    parts = [format_hits(res)] if res else []
    notes = [*(extra_notes or []), *_notes(res, embedding)]
    if not res and res.query:
        notes = [n if n != "no results" else f"no results for {res.query!r}" for n in notes]
    if notes:
        parts.append("\n".join(notes))
    return "\n\n".join(parts)


# -- the shared embedder ---------------------------------------------------------------


class _SharedModel:
    """One model for both Index objects: calls are serialised (a tokenizer is not safe
    to share between threads), and queries need not wait for a loading model."""

    def __init__(self, inner: Embedder | None) -> None:
        self.inner = inner
        self.lock = threading.Lock()
        self.ready = threading.Event()
        self.stopping = threading.Event()  #: the server stops: document batches end early
        self.error: str | None = (
            None if inner is not None else "embeddings are off (scry serve --no-embed)"
        )

    def warm(self) -> None:
        """Load the model (in a background thread) so the first query does not wait."""
        if self.inner is None:
            return
        try:
            with self.lock:
                self.inner.embed_queries(["warm up"])
            self.ready.set()
        except Exception as e:  # reported in status and in search notes
            self.error = str(e) if isinstance(e, ScryError) else f"{type(e).__name__}: {e}"

    @property
    def state(self) -> str:
        if self.inner is None:
            return "off (scry serve --no-embed)"
        if self.ready.is_set():
            return "ready"
        return f"error: {self.error}" if self.error else "loading"


class _ModelView(Embedder):
    """An :class:`Embedder` over :class:`_SharedModel`; ``for_queries`` views may skip."""

    def __init__(self, shared: _SharedModel, for_queries: bool, fallback: Embedder) -> None:
        self.shared = shared
        self.for_queries = for_queries
        self._fallback = fallback  # id and dim without loading anything
        self.id = (shared.inner or fallback).id

    @property
    def dim(self) -> int:
        return (self.shared.inner or self._fallback).dim

    def embed_documents(self, texts: list[str]) -> np.ndarray:
        inner = self._inner()
        parts = []
        for i in range(0, len(texts), EMBED_SLICE):
            while not self.shared.lock.acquire(timeout=0.1):
                if self.shared.stopping.is_set():
                    raise EmbedderError("the server is stopping")  # committed work is kept
            try:
                parts.append(inner.embed_documents(texts[i : i + EMBED_SLICE]))
            finally:
                self.shared.lock.release()
        self.shared.ready.set()
        return np.concatenate(parts) if parts else inner.embed_documents([])

    def embed_queries(self, texts: list[str]) -> np.ndarray:
        inner = self._inner()
        if self.for_queries and not self.shared.ready.is_set():
            # Never wait for a loading model: the engine turns this error into a note and
            # answers with the lexical legs.
            if self.shared.error is not None:
                raise EmbedderError(f"the embedding model failed to load: {self.shared.error}")
            raise EmbedderError("the embedding model is still loading (lexical results for now)")
        with self.shared.lock:
            return inner.embed_queries(texts)

    def _inner(self) -> Embedder:
        if self.shared.inner is None:
            raise EmbedderError(self.shared.error or "embeddings are off")
        return self.shared.inner


# -- background sync and the watcher ---------------------------------------------------


@dataclass
class SyncState:
    """What the background sync is doing (read by ``status`` and progress messages)."""

    phase: str = "starting"  #: starting, scanning, lexical, embedding, idle, waiting, stopped
    done: int = 0
    total: int = 0
    rounds: int = 0
    last_finished: float | None = None
    last_summary: str = ""
    error: str | None = None
    watcher: str = "off"
    note: str = ""  #: something the user should do (e.g. restart after a config change)

    def describe(self) -> str:
        if self.phase == "lexical" and self.total:
            return f"indexing files {self.done}/{self.total}"
        if self.phase == "embedding" and self.total:
            return f"embedding chunks {self.done}/{self.total}"
        if self.phase == "waiting":
            return "waiting for another scry process that is indexing"
        return self.phase


# -- the service: two indexes, a sync thread, a watcher --------------------------------


class ScryService:
    """Everything the tools need: the reader Index, the sync thread and its state."""

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
        import scrydb
        from scrydb.config import find_config
        from scrydb.embed import make_embedder
        from scrydb.index import find_root

        root_path = find_root(None) if root is None else Path(root).expanduser()
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
        cfg = find_config(root_path, config)
        base = make_embedder(cfg.embed)
        self.model = _SharedModel(base if embed else None)
        self.embed = embed
        self.warn = warn or (lambda msg: print(f"scry serve: {msg}", file=sys.stderr, flush=True))
        # The writer first: it creates the file and schema the reader then opens.
        self.writer = scrydb.open(root_path, db, cfg, embedder=_ModelView(self.model, False, base))
        try:
            self.reader = scrydb.open(
                root_path, self.writer.db_path, cfg, embedder=_ModelView(self.model, True, base)
            )
        except BaseException:
            self.writer.close()
            raise
        self.root = self.writer.root
        self.state = SyncState()
        self.lexical_ready = threading.Event()
        if self.writer.store.meta("last_sync") is not None:
            self.lexical_ready.set()  # an earlier index answers while this one syncs
        self._stop = threading.Event()
        self._reader_lock = threading.Lock()
        self._owner_lock = threading.Lock()
        self._owner: _Cancel | None = None
        self._sync_thread: threading.Thread | None = None
        self._watcher: Any = None
        if watch:
            from scrydb.watch import ChangeWatcher

            db_path = str(self.writer.db_path)
            self._watcher = ChangeWatcher(
                self.root,
                ignore=[db_path + s for s in ("", "-wal", "-shm", "-journal", ".lock")],
                debounce=DEBOUNCE_S,
                config=self.writer.config.index,
            )

    # lifecycle

    def start(self) -> None:
        """Start the watcher, the model warm-up and the initial sync (all background)."""
        if self._watcher is not None:
            try:
                self._watcher.start()
                self.state.watcher = f"watchdog ({self._watcher.kind})"
            except Exception as e:  # the server still works without it
                self.warn(f"file watcher unavailable ({e}); the index syncs only at start")
                self.state.watcher = f"off ({e})"
                self._watcher = None
        if self.embed:
            self._spawn("scry-model", self.model.warm)
        self._sync_thread = self._spawn("scry-sync", self._sync_loop)

    def stop(self) -> None:
        """Stop syncing (at a safe point) and close both indexes."""
        self._stop.set()
        self.model.stopping.set()
        if self._watcher is not None:
            self._watcher.stop()
        if self._sync_thread is not None:  # a model still loading is not waited for
            self._sync_thread.join(timeout=STOP_WAIT_S)
        with self._reader_lock_or_timeout(1.0):
            self.reader.close()

    @contextlib.contextmanager
    def _reader_lock_or_timeout(self, seconds: float) -> Any:
        got = self._reader_lock.acquire(timeout=seconds)
        try:
            yield
        finally:
            if got:
                self._reader_lock.release()

    def _spawn(self, name: str, fn: Callable[[], None]) -> threading.Thread:
        t = threading.Thread(target=fn, name=name, daemon=True)
        t.start()
        return t

    # the background sync

    def _sync_loop(self) -> None:
        try:
            self._sync_round()
            while not self._stop.is_set():
                if self._watcher is None:
                    self._stop.wait()
                    break
                if self._watcher.wait(self._stop):
                    if self._watcher.config_changed:
                        self._watcher.config_changed = False
                        self.state.note = f"{CONFIG_NAME} changed: restart the server to apply it"
                        self.warn(self.state.note)
                    self._sync_round()
        finally:
            self.lexical_ready.set()
            self.state.phase = "stopped"
            with contextlib.suppress(Exception):
                self.writer.close()

    def _sync_round(self) -> None:
        """Lexical phase (committed: search sees it), then embeddings. Stops between
        batches when the server stops, and embedding gives way to new edits after
        YIELD_AFTER_S (their lexical pass first; the next round resumes embedding)."""
        st = self.state
        stopping = self._stop.is_set
        try:
            st.phase, st.done, st.total = "scanning", 0, 0
            rep = self.writer.sync(
                embed=False,
                progress=self._progress,
                warn=self.warn,
                on_wait=self._on_wait,
                cancel=stopping,
            )
            self.lexical_ready.set()
            summary = (
                f"{rep.files_seen} files ({rep.files_added} new, {rep.files_changed} changed, "
                f"{rep.files_deleted} deleted)"
            )
            if self.embed and rep.pending and not stopping():
                st.phase, st.done, st.total = "embedding", 0, rep.pending
                started = time.monotonic()

                def give_way() -> bool:
                    edited = self._watcher is not None and self._watcher.dirty
                    return stopping() or (edited and time.monotonic() - started >= YIELD_AFTER_S)

                rep2 = self.writer.sync(progress=self._progress, warn=self.warn, cancel=give_way)
                summary += f", {rep2.texts_embedded} texts embedded"
            st.error = None
            st.last_summary = summary
        except Exception as e:  # a failed sync is retried on the next change
            if not stopping():
                st.error = str(e) if isinstance(e, ScryError) else f"{type(e).__name__}: {e}"
                self.warn(f"sync failed: {st.error}")
        finally:
            self.lexical_ready.set()
            st.rounds += 1
            st.last_finished = time.time()
            st.phase = "idle"

    def _progress(self, phase: str, done: int, total: int) -> None:
        st = self.state
        st.phase = {"chunk": "lexical", "embed": "embedding"}.get(phase, phase)
        st.done, st.total = done, total

    def _on_wait(self) -> None:
        self.state.phase = "waiting"

    # request helpers (called in worker threads)

    def await_index(self, cancel: _Cancel, timeout: float = FIRST_INDEX_WAIT_S) -> list[str]:
        """Wait for the first lexical index; notes to add when it is not complete."""
        deadline = time.monotonic() + timeout
        while not self.lexical_ready.wait(0.1):
            cancel.check()
            if time.monotonic() >= deadline:
                return [
                    f"note: the first index is still being built ({self.state.describe()}): "
                    "results are incomplete"
                ]
        return []

    def with_reader(self, cancel: _Cancel, fn: Callable[[Any], T]) -> T:
        """Run ``fn(reader_index)`` alone on the reader (cancellable while waiting)."""
        while not self._reader_lock.acquire(timeout=0.1):
            cancel.check()
        try:
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

    def status(self) -> Any:
        """``Index.status()`` through a read-only connection of its own: its git check
        walks the tree, and searches need not wait for that."""
        import scrydb

        with scrydb.open(self.root, self.writer.db_path, self.writer.config, readonly=True) as ix:
            return ix.status(check_stale=False, check_git=True)

    @property
    def file_events(self) -> int:
        """Relevant file events the watcher has seen."""
        return int(getattr(self._watcher, "events", 0) or 0)

    def progress_message(self, label: str, started: float) -> str:
        waited = time.monotonic() - started
        if not self.lexical_ready.is_set():
            return f"{label}: waiting for the first index ({self.state.describe()}), {waited:.0f}s"
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


# -- the tools ---------------------------------------------------------------------------

_TARGET = re.compile(r"^(?P<path>.+?):(?P<a>\d+)(?:-(?P<b>\d+))?$")


def _split_target(file: str, a: int | None, b: int | None) -> tuple[str, int | None, int | None]:
    """``path:A-B`` / ``path:N`` as the file argument (agents copy hit headers)."""
    m = _TARGET.match(file.strip()) if isinstance(file, str) else None
    if m and a is None and b is None:
        return m["path"], int(m["a"]), int(m["b"]) if m["b"] else None
    return file, a, b


def _read_text(ix: Any, file: str, start: int | None, end: int | None) -> str:
    path, start, end = _split_target(file, start, end)
    if start is not None and end is None:
        # One line given: the whole chunk(s) that contain it.
        probe = ix.read(path, start, start)
        if probe.chunks:
            end = max(e for _s, e, _k, _y in probe.chunks)
            start = min(s for s, _e, _k, _y in probe.chunks)
        else:
            end = start
    r = ix.read(path, start, end, max_lines=READ_MAX_LINES)
    if not r.chunks:
        raise ScryError(f"no indexed lines in {r.path} at {start or 1}-{end or start or 1}")
    body = present.format_read(r)
    truncated = r.truncated
    if len(body) > READ_MAX_CHARS:
        kept = body[:READ_MAX_CHARS].rsplit("\n", 1)[0]
        last = r.start_line + kept.count("\n")
        body, truncated = kept, True
        r = replace(r, end_line=last)
    head = f"{r.path}:{r.start_line}-{r.end_line}" + (f"  ({r.lang})" if r.lang else "")
    out = [head, body]
    if truncated:
        out.append(
            f'… capped: read(file="{r.path}", start_line={r.end_line + 1}, '
            f"end_line={r.end_line + READ_MAX_LINES}) for more"
        )
    return "\n".join(out)


def _locate_text(matches: list[dict[str, Any]], text: str, limit: int) -> str:
    if not matches:
        return f"no matches for {text!r} in the indexed files"
    out = present.format_locate(matches)
    if len(matches) >= limit:
        out += f"\n… {limit} matches shown; more may exist (raise limit, or narrow with path/lang)"
    return out


def _when(ts: float | None) -> str:
    if not ts:
        return "never"
    ago = max(0.0, time.time() - ts)
    stamp = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(ts))
    return f"{stamp} ({ago:.0f}s ago)"


def _status_text(svc: ScryService, st: Any) -> str:
    state = svc.state
    lines = [
        f"root      {st.root}",
        f"index     {st.db} ({st.db_bytes / 1e6:.1f} MB)",
        f"files     {st.files}   chunks {st.chunks}   symbols {st.symbols}   vectors {st.vectors}",
        f"search    {getattr(st, 'search', 'hybrid' if st.vectors else 'lexical')}",
        (
            f"embedding {st.pending} chunks waiting (found lexically meanwhile)"
            if st.pending
            else "embedding complete"
        ),
        f"last sync {_when(st.last_sync)}",
        f"sync      {state.describe()}" + (f"; last error: {state.error}" if state.error else ""),
        f"watcher   {state.watcher}"
        + (f", {svc.file_events} file events seen" if svc.file_events else ""),
        f"model     {st.fingerprint.get('current_embedder')}: {svc.model.state}",
    ]
    if state.last_summary:
        lines.append(f"last run  {state.last_summary}")
    if state.note:
        lines.append(f"note      {state.note}")
    if st.langs:
        lines.append("languages " + ", ".join(f"{k} {v}" for k, v in list(st.langs.items())[:10]))
    if st.skipped:
        lines.append("skipped   " + ", ".join(f"{k} {v}" for k, v in st.skipped.items()))
    if st.git_missing_count:
        lines.append(
            f"warning   {st.git_missing_count} files tracked by git are not indexed: "
            + ", ".join(st.git_missing[:5])
        )
    return "\n".join(lines)


_RO = ToolAnnotations(read_only_hint=True, idempotent_hint=True, open_world_hint=False)

Limit = Annotated[int, Field(ge=1, le=MAX_HITS, description="Most hits to return.")]
LangFilter = Annotated[
    str | None, Field(description="Only these languages, e.g. 'python' or 'ts,tsx'.")
]
PathFilter = Annotated[
    str | None,
    Field(description="Only paths under this directory prefix or matching this glob."),
]
FileArg = Annotated[
    str,
    Field(
        description="Path relative to the repository root, as search prints it (path:line works)."
    ),
]


def build_server(svc: ScryService) -> MCPServer:
    """The MCP server with scry's five tools over ``svc``."""
    mcp = MCPServer(
        "scry",
        instructions=INSTRUCTIONS.format(root=svc.root),
        version=_version(),
        log_level="WARNING",
    )

    @mcp.tool(annotations=_RO, structured_output=False, description=DESCRIPTIONS["search"])
    async def search(
        query: Annotated[
            str,
            Field(
                description="A question, keywords or an identifier, e.g. 'where is the retry backoff computed'."
            ),
        ],
        limit: Limit = 10,
        lang: LangFilter = None,
        path: PathFilter = None,
        ctx: Context | None = None,
    ) -> str:
        """The ``search`` tool (description: DESCRIPTIONS)."""

        def work(cancel: _Cancel) -> str:
            notes = svc.await_index(cancel)
            res = svc.with_reader(
                cancel, lambda ix: ix.search(query, k=limit, lang=lang, path=path)
            )
            return format_search(res, limit, notes, svc.embed)

        return await svc.run(ctx, "search", work)

    @mcp.tool(annotations=_RO, structured_output=False, description=DESCRIPTIONS["read"])
    async def read(
        file: FileArg,
        start_line: Annotated[
            int | None, Field(ge=1, description="First line; alone, the whole chunk around it.")
        ] = None,
        end_line: Annotated[int | None, Field(ge=1, description="Last line (inclusive).")] = None,
        ctx: Context | None = None,
    ) -> str:
        """The ``read`` tool (description: DESCRIPTIONS)."""

        def work(cancel: _Cancel) -> str:
            svc.await_index(cancel)
            return svc.with_reader(cancel, lambda ix: _read_text(ix, file, start_line, end_line))

        return await svc.run(ctx, "read", work)

    @mcp.tool(annotations=_RO, structured_output=False, description=DESCRIPTIONS["related"])
    async def related(
        file: FileArg,
        line: Annotated[
            int | None,
            Field(ge=1, description="A line inside the chunk (or give file as path:line)."),
        ] = None,
        limit: Annotated[int, Field(ge=1, le=MAX_HITS, description="Most hits to return.")] = 5,
        ctx: Context | None = None,
    ) -> str:
        """The ``related`` tool (description: DESCRIPTIONS)."""

        def work(cancel: _Cancel) -> str:
            svc.await_index(cancel)
            path, a, _b = _split_target(file, line, None)
            if a is None:
                raise ScryError(f"give a line: related(file={path!r}, line=N)")
            res = svc.with_reader(cancel, lambda ix: ix.related(path, a, limit))
            return format_search(res, limit, embedding=svc.embed)

        return await svc.run(ctx, "related", work)

    @mcp.tool(annotations=_RO, structured_output=False, description=DESCRIPTIONS["locate"])
    async def locate(
        text: Annotated[
            str,
            Field(
                description="Literal text within one line (no regex), e.g. an identifier or an error message."
            ),
        ],
        limit: Annotated[int, Field(ge=1, le=MAX_MATCHES, description="Most matches.")] = 50,
        lang: LangFilter = None,
        path: PathFilter = None,
        ignore_case: bool = False,
        ctx: Context | None = None,
    ) -> str:
        """The ``locate`` tool (description: DESCRIPTIONS)."""

        def work(cancel: _Cancel) -> str:
            svc.await_index(cancel)
            matches = svc.with_reader(
                cancel,
                lambda ix: ix.locate(text, k=limit, lang=lang, path=path, ignore_case=ignore_case),
            )
            return _locate_text(matches, text, limit)

        return await svc.run(ctx, "locate", work)

    @mcp.tool(annotations=_RO, structured_output=False, description=DESCRIPTIONS["status"])
    async def status(ctx: Context | None = None) -> str:
        """The ``status`` tool (description: DESCRIPTIONS)."""

        def work(cancel: _Cancel) -> str:
            return _status_text(svc, svc.status())

        return await svc.run(ctx, "status", work)

    return mcp


def _version() -> str:
    from scrydb import __version__

    return __version__


# -- the CLI command -----------------------------------------------------------------------


@click.command("serve")
@click.option(
    "--root",
    type=click.Path(file_okay=False),
    default=None,
    help="Repository to serve (default: the one containing the working directory).",
)
@click.option("--no-embed", is_flag=True, help="Lexical only: never load the embedding model.")
@click.option("--no-watch", is_flag=True, help="Sync once at start; don't watch for changes.")
@_db_option
def serve_cmd(
    root: str | None, no_embed: bool, no_watch: bool, config: str | None, db: str | None
) -> None:
    """Serve one repository to coding agents over MCP (stdio).

    Tools: search, read, related, locate, status. The server answers at once: it syncs
    in the background (lexical first, then embeddings) and watches files. Client
    configuration for Claude Code, Cursor and Codex: docs/agents.md.

    \b
    Example:
      scry serve                          # the repository you are in
      scry serve --root ~/src/project
      claude mcp add scry -- scry serve   # register it with Claude Code
    """
    svc = ScryService(root, db, config, embed=not no_embed, watch=not no_watch)
    try:
        server = build_server(svc)
        svc.start()
        server.run("stdio")
    finally:
        svc.stop()
    # The client closed the connection. A thread still inside a model load (or waiting
    # for another process's writer lock) would hold up interpreter shutdown for seconds;
    # everything worth keeping is committed, so leave at once.
    if any(t.is_alive() for t in threading.enumerate() if t.daemon):
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(0)
