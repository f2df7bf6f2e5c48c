"""The single SQLite file: opening it (apsw + sqlite-vec), the schema, the fingerprint.

Every SQL statement that writes the index lives here or in ``sync.py``; search only
reads. The file is opened in WAL mode so readers never block the one writer, and a
writer takes :meth:`Store.writer_lock` (an advisory file lock) for a whole sync.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import time
from collections.abc import Iterator
from importlib import resources
from pathlib import Path
from typing import Any

import apsw
import sqlite_vec

from scrydb.errors import IndexError_, LockedError, ScryError

#: Bump on any change to schema.sql; a file with a newer version is refused.
SCHEMA_VERSION = 1
#: ``PRAGMA application_id`` of scrydb files ("SCRY"): tells our files from others.
APPLICATION_ID = 0x53435259
#: Milliseconds a statement waits for another connection's lock before failing.
BUSY_TIMEOUT_MS = 30_000

VEC_TABLES_SQL = """
CREATE VIRTUAL TABLE IF NOT EXISTS vec_float USING vec0(embedding float[{dim}] distance_metric=cosine);
CREATE VIRTUAL TABLE IF NOT EXISTS vec_bit USING vec0(embedding bit[{dim}]);
"""


def schema_sql() -> str:
    """The text of schema.sql (shipped inside the package; a copy sits at the repo top)."""
    return resources.files("scrydb").joinpath("schema.sql").read_text(encoding="utf-8")


class Store:
    """An open index file.

    ``Store(path)`` creates the file (and its directory) if needed and applies the
    schema; ``readonly=True`` never creates or changes anything.
    """

    def __init__(self, path: str | os.PathLike[str], *, readonly: bool = False) -> None:
        self.path = Path(path)
        self.readonly = readonly
        self._lock_fd: int | None = None
        exists = self.path.exists() and self.path.stat().st_size > 0
        if not exists and readonly:
            raise IndexError_(f"no index at {self.path} (run `scry index` first)")
        if self.path.exists() and not self.path.is_file():
            raise IndexError_(f"index path {self.path} is not a file")
        if not exists:
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
            except OSError as e:
                raise ScryError(
                    f"cannot create index directory {self.path.parent}: {e.strerror}"
                ) from None
        flags = (
            apsw.SQLITE_OPEN_READONLY
            if readonly
            else apsw.SQLITE_OPEN_READWRITE | apsw.SQLITE_OPEN_CREATE
        )
        try:
            self.conn = apsw.Connection(str(self.path), flags=flags)
        except apsw.Error as e:
            raise IndexError_(f"cannot open index {self.path}: {e}") from None
        self.conn.set_busy_timeout(BUSY_TIMEOUT_MS)
        try:
            self.conn.enable_load_extension(True)
            self.conn.load_extension(sqlite_vec.loadable_path())
            self.conn.enable_load_extension(False)
            self._check_and_init(exists)
        except apsw.NotADBError:
            self.conn.close()
            raise IndexError_(
                f"{self.path} is not a scrydb index (not an SQLite file); delete it or pass another --db"
            ) from None
        except apsw.CorruptError:
            self.conn.close()
            raise IndexError_(
                f"index {self.path} is corrupt; rebuild it with `scry index --full`"
            ) from None

    # -- opening ---------------------------------------------------------------------

    def _check_and_init(self, exists: bool) -> None:
        conn = self.conn
        app_id = self.scalar("PRAGMA application_id")
        version = self.scalar("PRAGMA user_version")
        if exists:
            has_tables = self.scalar("SELECT count(*) FROM sqlite_master") > 0
            if app_id != APPLICATION_ID and has_tables:
                raise IndexError_(
                    f"{self.path} is an SQLite file but not a scrydb index; pass another --db"
                )
            if version > SCHEMA_VERSION:
                raise IndexError_(
                    f"index {self.path} was written by a newer scrydb (schema {version}, this scrydb "
                    f"reads {SCHEMA_VERSION}); upgrade scrydb or rebuild with `scry index --full`"
                )
        if self.readonly:
            if version < SCHEMA_VERSION:
                raise IndexError_(
                    f"index {self.path} has an old schema ({version}); run `scry index`"
                )
            return
        mode = self.scalar("PRAGMA journal_mode=WAL")
        if str(mode).lower() != "wal":  # e.g. a read-only directory
            raise ScryError(f"cannot use WAL mode for {self.path} (journal mode {mode})")
        conn.execute("PRAGMA synchronous=NORMAL")
        conn.execute("PRAGMA foreign_keys=ON")
        if version == SCHEMA_VERSION:
            return
        with self.transaction():
            if 0 < version < SCHEMA_VERSION:
                self._drop_all()
            conn.execute(schema_sql())
            conn.execute(f"PRAGMA application_id={APPLICATION_ID}")
            conn.execute(f"PRAGMA user_version={SCHEMA_VERSION}")
            self.set_meta("schema", str(SCHEMA_VERSION))
            self.set_meta("created_at", str(time.time()))

    def _drop_all(self) -> None:
        names = [
            (t, n)
            for t, n in self.conn.execute(
                "SELECT type, name FROM sqlite_master WHERE type IN ('table','view') AND name NOT LIKE 'sqlite_%'"
            )
        ]
        for _typ, name in names:
            with contextlib.suppress(apsw.SQLError):
                self.conn.execute(f'DROP TABLE IF EXISTS "{name}"')

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

    def vec_dim(self) -> int | None:
        """Dimension of the vector tables, or None when they do not exist yet."""
        v = self.meta("embed_dim")
        if v is None or not self.has_table("vec_float"):
            return None
        return int(v)

    def has_table(self, name: str) -> bool:
        """Whether a table (or virtual table) of that name exists."""
        return bool(self.scalar("SELECT count(*) FROM sqlite_master WHERE name = ?", (name,)))

    def create_vec_tables(self, dim: int) -> None:
        """Create the sqlite-vec tables for ``dim``-dimensional vectors (in a transaction)."""
        self.conn.execute(VEC_TABLES_SQL.format(dim=int(dim)))
        self.set_meta("embed_dim", str(int(dim)))

    def drop_vectors(self) -> None:
        """Forget every embedding (a changed embedder): chunks become lexical-only."""
        self.conn.execute("UPDATE chunks SET emb_id = NULL WHERE emb_id IS NOT NULL")
        self.conn.execute("DELETE FROM embeddings")
        self.conn.execute("DROP TABLE IF EXISTS vec_float")
        self.conn.execute("DROP TABLE IF EXISTS vec_bit")
        self.conn.execute("DELETE FROM query_cache")
        self.bump("vec_epoch")

    def bump(self, key: str) -> None:
        """Increment a counter in ``meta`` (readers use it to notice changes)."""
        self.conn.execute(
            "INSERT INTO meta(key, value) VALUES(?, '1') "
            "ON CONFLICT(key) DO UPDATE SET value = CAST(value AS INTEGER) + 1",
            (key,),
        )

    # -- the writer lock -------------------------------------------------------------

    def writer_lock(self, wait: bool = True, on_wait: Any = None) -> None:
        """Take the advisory writer lock (``<db>.lock``) for a whole sync.

        With ``wait`` the call blocks (calling ``on_wait()`` once first) until the other
        writer is done; without it a held lock raises :class:`LockedError`.
        """
        if self._lock_fd is not None:
            return
        lock_path = str(self.path) + ".lock"
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
            if not wait:
                os.close(fd)
                raise LockedError(
                    f"another scry process is indexing {self.path}; try again when it is done"
                ) from None
            if on_wait is not None:
                on_wait()
            fcntl.flock(fd, fcntl.LOCK_EX)
        self._lock_fd = fd

    def release_writer_lock(self) -> None:
        """Release the writer lock if this store holds it."""
        if self._lock_fd is not None:
            with contextlib.suppress(OSError):
                fcntl.flock(self._lock_fd, fcntl.LOCK_UN)
                os.close(self._lock_fd)
            self._lock_fd = None
