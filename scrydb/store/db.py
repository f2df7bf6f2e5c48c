"""The index file as an object: :class:`Store` opens it (apsw + sqlite-vec), brings its
schema to this version (:mod:`~scrydb.store.schema`) and holds the small helpers every
named operation of ``store/`` uses (``scalar``, ``rows``, ``meta``, ``transaction``).

Statements that write the index live in ``store/`` alone (``lexwrite.py``,
``embwrite.py``, ``nextvectors.py``, the vector tables of ``tables.py``); search only
reads. The file is opened in WAL mode so readers never block the one writer, and a
writer takes :meth:`Store.writer_lock` (an advisory file lock) for a whole sync.
"""

from __future__ import annotations

import contextlib
import enum
import os
import urllib.parse
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import apsw

from scrydb.errors import IndexError_, LockedError, ScryError
from scrydb.store import sqlitefile
from scrydb.store.lock import WriterLock
from scrydb.store.schema import APPLICATION_ID, init_when_free
from scrydb.store.tables import VectorTables

#: Milliseconds a statement waits for another connection's lock before failing.
BUSY_TIMEOUT_MS = 30_000


class Readiness(enum.Enum):
    """How far an index has come (:meth:`Store.readiness`)."""

    NONE = "none"  #: never indexed
    PARTIAL = "partial"  #: a first index was stopped before its lexical pass completed
    READY = "ready"  #: a complete lexical pass has committed (maybe of an empty tree)


class IndexWriteError(ScryError):
    """The index file cannot be written (read-only file or directory, disk full, I/O
    error); what was committed before is intact and can still be searched."""


class DamagedError(IndexError_):
    """The index file is damaged (or not an SQLite file at all): ``scry index --full``
    moves a damaged scrydb file aside and rebuilds it."""


class Store(VectorTables):
    """An open index file.

    ``Store(path)`` creates the file (and its directory) if needed and applies the
    schema; ``readonly=True`` never creates or changes anything. A file that cannot be
    written (read-only file, directory or file system) is opened read-only instead:
    ``readonly`` is then True and ``write_denied`` says why. ``recover=True`` (``scry
    index --full``) moves a damaged scrydb file aside (``<db>.damaged``) and starts afresh.
    Opening, the WAL retry, the application-id check and setting aside are
    :mod:`scrydb.store.sqlitefile`'s, shared with the vector cache.
    """

    def __init__(
        self, path: str | os.PathLike[str], *, readonly: bool = False, recover: bool = False
    ) -> None:
        self.path = Path(path)
        self.readonly = readonly
        self._lock = WriterLock(self.path)
        #: Set when opening found an older schema: migrated keeping the data, or rebuilt
        #: from nothing. The next sync reports it (one warning line for a rebuild).
        self.migrated_from: int | None = None
        self.rebuilt_from: int | None = None
        #: Why a writable open fell back to read-only (None: writable, or asked read-only).
        self.write_denied: str | None = None
        #: Where ``recover`` moved a damaged file (the next sync warns about it).
        self.moved_aside: Path | None = None
        try:
            self._open()
        except DamagedError:
            if not (recover and self._ours()):
                raise
            self.move_aside()
            self._open()

    # -- opening ---------------------------------------------------------------------

    def _open(self) -> None:
        readonly = self.readonly
        exists = self.path.exists() and self.path.stat().st_size > 0
        if not exists and readonly:
            raise IndexError_(f"no index at {self.path} (run `scry index` first)")
        if self.path.exists() and not self.path.is_file():
            raise IndexError_(f"index path {self.path} is not a file")
        if not exists:
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
            except OSError as e:
                raise IndexWriteError(
                    f"cannot create index directory {self.path.parent}: {e.strerror}"
                ) from None
        try:
            self.conn = self._connect(readonly)
            if not readonly and exists and self.conn.readonly("main"):
                raise apsw.ReadOnlyError("the index file is read-only")
            self._init_when_free(exists)
        except (apsw.ReadOnlyError, apsw.CantOpenError) as e:
            with contextlib.suppress(apsw.Error, AttributeError):
                self.conn.close()
            if readonly:
                raise IndexError_(f"cannot open index {self.path}: {e}") from None
            if not exists:
                raise IndexWriteError(
                    f"cannot create index {self.path} ({_why_readonly(self.path, e)})"
                ) from None
            # A file we may read but not write: answer from it, never sync into it.
            self.readonly = True
            self.write_denied = f"index {self.path} is read-only ({_why_readonly(self.path, e)})"
            self._open()
        except apsw.NotADBError:
            with contextlib.suppress(apsw.Error, AttributeError):
                self.conn.close()
            raise DamagedError(
                f"{self.path} is not a scrydb index (not an SQLite file); delete it or pass another --db"
            ) from None
        except apsw.CorruptError:
            with contextlib.suppress(apsw.Error, AttributeError):
                self.conn.close()
            raise damaged_error(self.path) from None

    def _connect(self, readonly: bool) -> apsw.Connection:
        """A connection with sqlite-vec loaded. Read-only on a read-only directory (no
        ``-shm`` can be created) falls back to ``immutable=1`` when no WAL is pending."""
        flags = (
            apsw.SQLITE_OPEN_READONLY
            if readonly
            else apsw.SQLITE_OPEN_READWRITE | apsw.SQLITE_OPEN_CREATE
        )
        try:
            return _connection(str(self.path), flags)
        except apsw.CantOpenError:
            wal = Path(str(self.path) + "-wal")
            if not readonly or (wal.exists() and wal.stat().st_size > 0):
                raise
        except (apsw.NotADBError, apsw.CorruptError, apsw.ReadOnlyError):
            raise
        except apsw.Error as e:
            raise IndexError_(f"cannot open index {self.path}: {e}") from None
        # Nobody can be writing a file whose directory allows no WAL: read it as it is.
        uri = "file:" + urllib.parse.quote(str(self.path.resolve())) + "?immutable=1"
        try:
            return _connection(uri, apsw.SQLITE_OPEN_READONLY | apsw.SQLITE_OPEN_URI)
        except (apsw.NotADBError, apsw.CorruptError):
            raise
        except apsw.Error as e:
            raise IndexError_(f"cannot open index {self.path}: {e}") from None

    def _ours(self) -> bool:
        """Whether the file's header says it is a scrydb index (safe to move aside)."""
        return sqlitefile.is_ours(self.path, APPLICATION_ID)

    def move_aside(self) -> Path:
        """Move a damaged index file (with its ``-wal`` and ``-shm``) to ``<db>.damaged``
        (:func:`~scrydb.store.sqlitefile.set_aside`) and forget it; the next open starts a
        new, empty file. Returns where it went."""
        with contextlib.suppress(apsw.Error, AttributeError):
            self.conn.close()
        aside = sqlitefile.set_aside(self.path)
        self.moved_aside = aside
        return aside

    def check(self) -> str | None:
        """``PRAGMA quick_check``: None when the file is sound, else what is wrong."""
        try:
            rows = [r[0] for r in self.conn.execute("PRAGMA quick_check(5)")]
        except (apsw.CorruptError, apsw.NotADBError) as e:
            return str(e)
        return None if rows == ["ok"] else "; ".join(map(str, rows))

    def integrity_problems(self) -> list[str]:
        """``PRAGMA integrity_check`` in full (``["ok"]`` when sound; ``scry check``)."""
        return [str(r[0]) for r in self.conn.execute("PRAGMA integrity_check")]

    def reopen_fresh(self) -> Path:
        """Move this (damaged) file aside and open a new, empty one in its place."""
        aside = self.move_aside()
        self.readonly = False
        self._open()
        return aside

    def _init_when_free(self, exists: bool) -> None:
        """Check the file is ours and bring its schema to this version (store/schema.py)."""
        init_when_free(self, exists, BUSY_TIMEOUT_MS)

    def close(self) -> None:
        """Release the writer lock (if held) and close the connection."""
        self.release_writer_lock()
        with contextlib.suppress(apsw.Error):
            self.conn.close()

    # -- small helpers ---------------------------------------------------------------

    def scalar(self, sql: str, params: tuple[Any, ...] = ()) -> Any:
        """First column of the first row, or None."""
        for row in self.conn.execute(sql, params):
            return row[0]
        return None

    def rows(
        self, sql: str, params: tuple[Any, ...] | dict[str, Any] = ()
    ) -> list[tuple[Any, ...]]:
        """All rows of a query."""
        return list(self.conn.execute(sql, params))

    def meta(self, key: str, default: str | None = None) -> str | None:
        """A value of the ``meta`` table."""
        v = self.scalar("SELECT value FROM meta WHERE key = ?", (key,))
        return default if v is None else v

    def set_meta(self, key: str, value: str) -> None:
        """Write a ``meta`` value (inside the caller's transaction, if any)."""
        self.conn.execute(
            "INSERT INTO meta(key, value) VALUES(?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
            (key, value),
        )

    def readiness(self) -> Readiness:
        """Whether there is an index yet: the one rule the CLI, the API and MCP use.

        An index exists once a lexical pass over the whole tree has committed (the syncer
        writes ``last_sync`` then), an empty tree included. Files without that mark are an
        interrupted first index; neither is a never-indexed file."""
        if self.meta("last_sync") is not None:
            return Readiness.READY
        if self.scalar("SELECT 1 FROM files LIMIT 1") is not None:
            return Readiness.PARTIAL
        return Readiness.NONE

    def has_chunks(self) -> bool:
        """Whether the index holds any chunk."""
        return self.scalar("SELECT 1 FROM chunks LIMIT 1") is not None

    @contextlib.contextmanager
    def transaction(self) -> Iterator[None]:
        """``BEGIN IMMEDIATE`` ... ``COMMIT`` (rollback on error): one atomic batch."""
        self.conn.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            with contextlib.suppress(apsw.Error):
                self.conn.execute("ROLLBACK")
            raise
        else:
            self.conn.execute("COMMIT")

    # -- vectors ---------------------------------------------------------------------

    def has_table(self, name: str) -> bool:
        """Whether a table (or virtual table) of that name exists."""
        return bool(self.scalar("SELECT count(*) FROM sqlite_master WHERE name = ?", (name,)))

    def bump(self, key: str) -> None:
        """Increment a counter in ``meta`` (readers use it to notice changes)."""
        self.conn.execute(
            "INSERT INTO meta(key, value) VALUES(?, '1') "
            "ON CONFLICT(key) DO UPDATE SET value = CAST(value AS INTEGER) + 1",
            (key,),
        )

    # -- the writer lock -------------------------------------------------------------

    def writer_lock(
        self, wait: bool | float = True, on_wait: Callable[[], None] | None = None
    ) -> None:
        """Take the advisory writer lock (``<db>.lock``) for a whole sync (see
        :class:`~scrydb.store.lock.WriterLock`); a lock not taken raises LockedError."""
        self._lock.take(wait, on_wait)

    @property
    def lock_path(self) -> str:
        """The writer lock file next to the index."""
        return self._lock.path

    def writer_active(self) -> bool:
        """Whether some process (this one included) holds the writer lock right now."""
        return self._lock.active()

    def release_writer_lock(self) -> None:
        """Release the writer lock if this store holds it."""
        self._lock.release()


class EngineProblem(ScryError):
    """SQLite lacks FTS5 or cannot load sqlite-vec (``scry check``)."""


def probe_engine() -> tuple[str, str]:
    """(SQLite version, sqlite-vec version) after an FTS5 match and a vec0 insert in a
    scratch in-memory database; :class:`EngineProblem` when either fails."""
    flags = apsw.SQLITE_OPEN_READWRITE | apsw.SQLITE_OPEN_CREATE
    try:
        conn = sqlitefile.connect(":memory:", flags, BUSY_TIMEOUT_MS, vectors=True)
    except apsw.Error as e:
        raise EngineProblem(f"{type(e).__name__}: {e}") from None
    try:
        conn.execute("CREATE VIRTUAL TABLE t USING fts5(body, tokenize='unicode61')")
        conn.execute("INSERT INTO t(body) VALUES ('parse json text')")
        n = conn.execute("SELECT count(*) FROM t WHERE t MATCH 'json'").get
        conn.execute("CREATE VIRTUAL TABLE v USING vec0(embedding float[4])")
        conn.execute("INSERT INTO v(rowid, embedding) VALUES (1, '[1,0,0,0]')")
        vec_version = conn.execute("SELECT vec_version()").get
    except apsw.Error as e:
        raise EngineProblem(f"{type(e).__name__}: {e}") from None
    finally:
        conn.close()
    if n != 1:
        raise EngineProblem("FTS5 answered a wrong match count")
    return apsw.sqlite_lib_version(), str(vec_version)


def _connection(name: str, flags: int) -> apsw.Connection:
    """Open ``name`` with sqlite-vec loaded and its header read
    (:func:`~scrydb.store.sqlitefile.connect`: a read-only directory fails here rather
    than later), and the index's own SQL function."""
    conn = sqlitefile.connect(name, flags, BUSY_TIMEOUT_MS, vectors=True)
    # Unicode lower-casing for case-insensitive ``locate`` (SQLite's knows ASCII only).
    conn.create_scalar_function("scry_lower", _lower, 1, deterministic=True)  # type: ignore[arg-type]  # apsw's stub wants a variadic callable; ours takes one value
    return conn


def translate_error(err: BaseException, path: Path | str | None) -> ScryError | None:
    """An SQLite error about the index file itself as a one-line :class:`ScryError` that
    says what to do (None for any other error: that one is a bug)."""
    where = f"index {path}" if path else "the index"
    if isinstance(err, apsw.CorruptError | apsw.NotADBError):
        return damaged_error(Path(path) if path else None, str(err))
    if isinstance(err, apsw.FullError):
        return IndexWriteError(
            f"the disk holding {where} is full: free some space, then run `scry index` "
            "again (everything committed before is kept)"
        )
    if isinstance(err, apsw.ReadOnlyError | apsw.CantOpenError):
        why = _why_readonly(Path(path), err) if path else str(err)
        return IndexWriteError(f"cannot write {where} ({why}); searches still read it as it is")
    if isinstance(err, apsw.IOError):
        return IndexWriteError(
            f"I/O error on {where} ({err}): is its disk full or gone? Everything committed "
            "before is kept; `scry index` resumes"
        )
    if isinstance(err, apsw.BusyError | apsw.LockedError):
        return LockedError(f"{where} is busy (another process is writing it); try again")
    if isinstance(err, apsw.SQLError) and "shadow table" in str(err):
        # sqlite-vec reports a failed write to its tables (a full disk among them) this way.
        return IndexWriteError(
            f"cannot write the vectors of {where} ({err}): is its disk full? Everything "
            "committed before is kept; `scry index` resumes"
        )
    return None


@contextlib.contextmanager
def friendly_errors(path: Path | str | None) -> Iterator[None]:
    """Turn SQLite errors about the index file into one-line ScryErrors (see
    :func:`translate_error`); everything else passes through."""
    try:
        yield
    except apsw.Error as e:
        mapped = translate_error(e, path)
        if mapped is None:
            raise
        raise mapped from None


def _lower(text: object) -> object:
    return text.lower() if isinstance(text, str) else text


def damaged_error(path: Path | None, detail: str = "") -> DamagedError:
    """The one-line error for a damaged index file (with its documented way out)."""
    why = f" ({detail})" if detail else ""
    where = f"index {path}" if path else "the index"
    return DamagedError(f"{where} is damaged{why}; rebuild it with `scry index --full`")


def _why_readonly(path: Path, err: apsw.Error) -> str:
    """Why a file cannot be written, in the user's words."""
    if not os.access(path.parent, os.W_OK) or _readonly_fs(path.parent):
        return "its directory is not writable"
    if not os.access(path, os.W_OK):
        return "the file is not writable"
    return str(err)


def _readonly_fs(path: Path) -> bool:
    try:
        return bool(os.statvfs(path).f_flag & os.ST_RDONLY)
    except OSError:
        return False
