"""The hook's warm helper: one process per user (and per build of scrydb) that keeps the
search stack imported, so a hook process is a small client.

A hook that answers is a fresh Python process per tool call, and what it spends is almost
all imports: numpy, SQLite with sqlite-vec and scrydb's search modules, several times the
search itself (bench/hook_bench.py). A SessionStart hook, or the first answering hook that
finds no helper, starts one (``python -m scrydb.install.hookd SOCKET``, detached; that
hook searches in-process); later hooks send the helper their search over a Unix socket
and print its answer. The helper searches exactly as a hook without it does
(:func:`search_index`), one request at a time, each in the index the client named (the
client resolves the repository, its index and its path filter in its own environment),
keeps up to :data:`MAX_OPEN` indexes open between requests (reopened when the file is
replaced or the repository's ``.scry.toml`` changes), and exits after :data:`IDLE_S`
without a request.

Everything fails open: no helper, a refused or broken connection, an error or a slow
answer make the client fall back (no helper: search in-process) or give up (the hook then
prints nothing). The socket lives in the per-user cache (``hooks/``), made with mode 0600,
and its name carries a hash of this build (interpreter, scrydb's location and version, the
hook modules' modification times), so an upgraded scrydb starts its own helper.
``SCRY_HOOK_HELPER=0`` turns the helper off (every hook searches in-process).
"""

from __future__ import annotations

import hashlib
import json
import os
import socket
import sys
import time
from pathlib import Path
from typing import Any

#: Seconds without a request after which the helper exits.
IDLE_S = 900.0
#: Environment variables: ``SCRY_HOOK_HELPER=0`` turns the helper off; the idle time.
HELPER_ENV = "SCRY_HOOK_HELPER"
IDLE_ENV = "SCRY_HOOK_HELPER_IDLE"
#: Largest request or answer read (an answer is a few kilobytes).
MAX_MESSAGE = 1_000_000
#: Unix socket paths are limited to about 108 bytes; a longer cache path: no helper.
MAX_SOCKET_PATH = 100


#: Hits handed to the agent: enough for the usual answer, few enough to stay short.
HITS = 5
#: The hits' text is cut to about this many tokens (``present.fit_budget``).
BUDGET_TOKENS = 1200


class NotRunning(Exception):
    """No helper answers at the socket (none started, or it exited)."""


def enabled() -> bool:
    """Whether hooks use the helper (``SCRY_HOOK_HELPER=0``: no; nor where Python has no
    Unix sockets)."""
    return os.environ.get(HELPER_ENV, "1") != "0" and hasattr(socket, "AF_UNIX")


def socket_path() -> Path | None:
    """This build's helper socket in the per-user cache; None when the path would be too
    long for a Unix socket."""
    from scrydb import __version__
    from scrydb.paths import cache_dir

    here = Path(__file__).resolve().parent
    stamps = [sys.executable, str(here), __version__]
    for name in ("hook.py", "hookd.py", "hookquery.py"):
        try:
            stamps.append(str((here / name).stat().st_mtime_ns))
        except OSError:
            stamps.append("-")
    key = hashlib.blake2b("\0".join(stamps).encode(), digest_size=6).hexdigest()
    path = cache_dir() / "hooks" / f"helper-{key}.sock"
    return path if len(os.fsencode(str(path))) <= MAX_SOCKET_PATH else None


def ask(request: dict[str, Any], deadline: float) -> str | None:
    """The helper's answer to one search request (None: no answer, the hook prints
    nothing). Raises :class:`NotRunning` when no helper listens (or it is turned off);
    any other failure, or ``deadline`` (``time.monotonic()``) passing, is None."""
    path = socket_path() if enabled() else None
    if path is None:
        raise NotRunning
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        conn.settimeout(max(0.01, deadline - time.monotonic()))
        try:
            conn.connect(str(path))
        except (FileNotFoundError, ConnectionRefusedError):
            raise NotRunning from None
        conn.sendall(json.dumps(request).encode() + b"\n")
        reply = json.loads(_read_line(conn, deadline))
        text = reply.get("text") if isinstance(reply, dict) else None
        return text if isinstance(text, str) else None
    except NotRunning:
        raise
    except Exception:  # a broken helper, a slow one: fail open
        return None
    finally:
        conn.close()


def running() -> bool:
    """Whether this build's helper answers at its socket (False when it is turned off)."""
    path = socket_path() if enabled() else None
    if path is None:
        return False
    probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        probe.settimeout(1)
        probe.connect(str(path))
        return True
    except OSError:
        return False
    finally:
        probe.close()


def spawn() -> None:
    """Start a helper in the background (best effort: a second one that finds the socket
    taken exits at once)."""
    path = socket_path() if enabled() else None
    if path is None:
        return
    import subprocess  # (here: a hook that finds its helper never needs it)

    try:
        subprocess.Popen(
            [sys.executable, "-m", "scrydb.install.hookd", str(path)],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            cwd=str(path.parent) if path.parent.is_dir() else None,
            start_new_session=True,
            close_fds=True,
        )
    except OSError:
        pass


def serve(path: Path, idle: float = IDLE_S) -> None:
    """Listen at ``path`` and answer search requests until ``idle`` seconds pass without
    one. Returns at once when another helper already listens there."""
    import scrydb.present
    import scrydb.search.engine
    import scrydb.store  # noqa: F401  (the stack search_index imports, once, up front)

    path.parent.mkdir(parents=True, exist_ok=True)
    listener = _bind(path)
    if listener is None:
        return
    try:
        listener.settimeout(idle)
        while True:
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                return
            with conn:
                _answer(conn)
    finally:
        listener.close()
        try:
            if path.is_socket():
                path.unlink()
        except OSError:
            pass


def stop(path: Path | None = None) -> bool:
    """Ask this build's helper (or the one at ``path``) to exit, and wait until it has
    removed its socket; whether one was running."""
    path = path or socket_path()
    if path is None or not hasattr(socket, "AF_UNIX"):
        return False
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        conn.settimeout(5)
        conn.connect(str(path))
        conn.sendall(b'{"stop": true}\n')
        deadline = time.monotonic() + 5
        _read_line(conn, deadline)
        while path.exists() and time.monotonic() < deadline:
            time.sleep(0.01)  # it removes its socket as it exits
        return True
    except OSError:
        return False
    finally:
        conn.close()


def search_index(
    root: Path, db: Path, query: str, lang: str | None, path: str | None, keep: bool = False
) -> str | None:
    """The top hits of ``query`` in the index ``db`` of ``root`` as the text the agent
    reads, or None (no complete index, a weak answer).

    The store and the search engine are opened directly, not through
    :class:`scrydb.index.Index`: a search reads the file and nothing else, and the index's
    other imports (sync, the file walk, status, the code graph) would cost a hook process
    a fifth of its time. ``db`` is the repository's default index (so it belongs to
    ``root``), opened read-only; ``path`` is a filter as ``Index.search`` takes it.
    ``keep`` (the helper) keeps the store and engine open for the next request, as the MCP
    server does: each search still reads what is committed, and the in-memory vectors are
    reloaded only when the index's epochs moved."""
    from scrydb import present
    from scrydb.store import Readiness

    opened = _open(root, db, keep)
    if opened is None:
        return None
    store, engine = opened
    try:
        if store.readiness() is not Readiness.READY:
            return None
        res = engine.search(query, k=HITS, lang=lang, path=path)
    finally:
        if not keep:
            store.close()
    if not res or res.weak or res.missing:
        return None
    present.fit_budget(res, BUDGET_TOKENS)
    legs = " + ".join(res.legs) or "lexical"
    head = f"the {len(res)} most likely places, best first ({legs}):"
    return f"{head}\n\n{present.format_results(res)}"


#: The helper's open indexes: db path -> (what they were opened as, store, engine).
_OPEN: dict[str, tuple[tuple[Any, ...], Any, Any]] = {}
#: Most indexes the helper keeps open (the least recently used one closes first).
MAX_OPEN = 8


def _open(root: Path, db: Path, keep: bool) -> tuple[Any, Any] | None:
    """(store, engine) for ``db``: opened now, or (``keep``) the helper's open pair while
    the file and the repository's config are the ones it was opened with."""
    from scrydb.config import find_config
    from scrydb.embed import embedder_id
    from scrydb.search.engine import SearchEngine
    from scrydb.store import Store

    try:
        stat = db.stat()
        conf = root / ".scry.toml"
        conf_mtime = conf.stat().st_mtime_ns if conf.exists() else None
    except OSError:
        return None
    key = (stat.st_dev, stat.st_ino, conf_mtime)
    held = _OPEN.pop(str(db), None) if keep else None
    if held is not None and held[0] == key:
        _OPEN[str(db)] = held  # most recently used last
        return held[1], held[2]
    if held is not None:
        held[1].close()  # rebuilt or reconfigured: open it afresh
    config = find_config(root, None)
    store = Store(db, readonly=True)
    # The embedder of the index's vectors (during a re-embed for a new model, the
    # recorded one, as ``IndexEmbedders.for_queries`` picks): its id keys the cache.
    emb = _cached_queries_only(store.meta("embedder") or embedder_id(config.embed))
    engine = SearchEngine(store, config, lambda: emb)
    if keep:
        _OPEN[str(db)] = (key, store, engine)
        while len(_OPEN) > MAX_OPEN:
            _OPEN.pop(next(iter(_OPEN)))[1].close()
    return store, engine


def _cached_queries_only(ident: str) -> Any:
    """An embedder that knows its id and nothing else: a query vector the index already
    cached is used, any other is refused (the dense leg is then skipped with a note), so
    the hook never loads a model."""
    from scrydb.embed import Embedder
    from scrydb.errors import ScryError

    class CachedQueriesOnly(Embedder):
        id = ident

        @property
        def dim(self) -> int:
            raise ScryError("the hook loads no model")

        def embed_documents(self, texts: list[str]) -> Any:
            raise ScryError("the hook loads no model")

        def embed_queries(self, texts: list[str]) -> Any:
            raise ScryError("no cached query vector (the hook loads no model)")

    return CachedQueriesOnly()


def _bind(path: Path) -> socket.socket | None:
    """A listening socket at ``path`` (mode 0600), or None when a live helper has it."""
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    old = os.umask(0o177)
    try:
        try:
            listener.bind(str(path))
        except OSError:
            probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            try:
                probe.connect(str(path))
                listener.close()
                return None  # another helper answers there
            except OSError:
                path.unlink(missing_ok=True)  # a stale socket of one that died
                listener.bind(str(path))
            finally:
                probe.close()
    finally:
        os.umask(old)
    listener.listen(16)
    return listener


def _answer(conn: socket.socket) -> None:
    """One request on ``conn``: a search (its text, or null) or a stop."""
    conn.settimeout(5)
    try:
        req = json.loads(_read_line(conn, time.monotonic() + 5))
        if req.get("stop"):
            conn.sendall(b"{}\n")
            raise SystemExit(0)
        text = search_index(
            Path(req["root"]),
            Path(req["db"]),
            req["query"],
            req.get("lang"),
            req.get("path"),
            keep=True,
        )
        reply = {"text": text}
    except SystemExit:
        raise
    except Exception:
        reply = {"text": None}
    try:
        conn.sendall(json.dumps(reply).encode() + b"\n")
    except OSError:
        pass


def _read_line(conn: socket.socket, deadline: float) -> bytes:
    data = b""
    while not data.endswith(b"\n"):
        conn.settimeout(max(0.01, deadline - time.monotonic()))
        chunk = conn.recv(65536)
        if not chunk:
            break
        data += chunk
        if len(data) > MAX_MESSAGE:
            raise ValueError("message too long")
    return data


def _idle() -> float:
    try:
        return max(1.0, float(os.environ.get(IDLE_ENV, IDLE_S)))
    except ValueError:
        return IDLE_S


if __name__ == "__main__":
    if len(sys.argv) == 2:
        try:
            serve(Path(sys.argv[1]), _idle())
        except Exception:
            pass
    os._exit(0)
