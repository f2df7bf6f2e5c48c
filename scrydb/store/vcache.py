"""The shared vector cache: embed each text once per machine, not once per checkout.

One SQLite file per model fingerprint (model, embedded-text recipe) in the per-user
cache directory (``<cache>/vectors/``, mode 0700), mapping the hash of the exact text a
model embedded to the vector it gave. A second worktree, clone or branch of a repository
finds nearly all of its texts there and calls the model only for the rest. The
per-repository index stays the one file the user asked for; the cache only saves model
calls, and it holds no source text (keys are blake2b-128 digests).

Safe under many indexers at once: WAL, a busy timeout, one short transaction per lookup
or write and never one across a model call. A damaged or foreign file is set aside
(``<file>.damaged``, by :mod:`scrydb.store.sqlitefile` as the index's are) and started
afresh with one warning; any other trouble turns the cache off for the rest of
the sync. Indexing never fails because of the cache. The file is bounded
(``[index] shared_cache_mb``): past the bound the least recently used vectors go.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

import apsw
import numpy as np

from scrydb.errors import ScryError
from scrydb.store import sqlitefile

#: ``PRAGMA application_id`` of a cache file ("SCVC"): tells ours from other SQLite files.
APPLICATION_ID = 0x53435643
#: Bump on any change to the layout below; a file of another format is set aside.
CACHE_FORMAT = "1"
#: ``SCRY_SHARED_CACHE=0`` (or ``false``, ``off``, ``no``) turns the cache off.
ENV_SWITCH = "SCRY_SHARED_CACHE"
#: A statement waits this long for another indexer's write before the cache gives up for
#: this sync (it never waits across a model call, so waits are short).
BUSY_TIMEOUT_MS = 10_000
#: Last-used stamps are refreshed at most this often (seconds): a lookup of warm vectors
#: then costs no write at all, and LRU order at the hour is fine for a 2 GB bound.
TOUCH_EVERY_S = 3600
#: Eviction goes down to this share of the bound, so it does not run on every write.
EVICT_TO = 0.9
#: Bytes of SQLite bookkeeping per row (cell header, the ``used`` index entry), and how
#: full b-tree pages of randomly ordered keys run: what a row costs in the file.
ROW_OVERHEAD = 24
PAGE_FILL = 0.75
#: Page size of a new cache file (bytes).
PAGE_SIZE = 8192
#: Keys per lookup statement (a JSON list read by json_each).
LOOKUP_CHUNK = 4096

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
-- rowid: the key's first 8 bytes (one b-tree lookup per text); key: all 16, checked on
-- read, so a clash of the first 8 is a miss, never a wrong vector.
CREATE TABLE IF NOT EXISTS vectors (
    rowid  INTEGER PRIMARY KEY,
    key    BLOB NOT NULL,
    vector BLOB NOT NULL,       -- float32, little-endian, dim values
    used   INTEGER NOT NULL     -- unix time of the last write or (hourly) lookup
);
CREATE INDEX IF NOT EXISTS vectors_used ON vectors(used);
"""


def cache_disabled_by_env() -> bool:
    """Whether ``SCRY_SHARED_CACHE`` turns the shared cache off."""
    return os.environ.get(ENV_SWITCH, "").strip().lower() in ("0", "false", "off", "no")


def text_key(text: str) -> bytes:
    """The cache key of a text the model embeds: blake2b-128 of its UTF-8 bytes."""
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()


def cache_file(directory: Path, fingerprint: str) -> Path:
    """The file that holds the vectors of one fingerprint."""
    digest = hashlib.blake2b(fingerprint.encode("utf-8"), digest_size=10).hexdigest()
    return directory / f"{digest}.db"


def _rowid(key: bytes) -> int:
    return int.from_bytes(key[:8], "big", signed=True)


class CacheStats:
    """What one cache did in a sync (lookups answered, vectors written, evictions)."""

    def __init__(self) -> None:
        self.hits = 0
        self.stored = 0
        self.evicted = 0
        self.seconds = 0.0  #: spent in lookups and writes (opening included)


class VectorCache:
    """One fingerprint's file of the shared cache. Every method swallows its own errors
    (after one warning): a cache in trouble is a cache that answers nothing."""

    def __init__(
        self,
        directory: Path,
        fingerprint: str,
        dim: int,
        max_bytes: int,
        warn: Callable[[str], None] | None = None,
        *,
        readonly: bool = False,
    ) -> None:
        self.directory = directory
        self.fingerprint = fingerprint
        self.dim = int(dim)
        self.max_bytes = max(0, int(max_bytes))
        self.path = cache_file(directory, fingerprint)
        #: only look (an estimate): nothing is created, stamped, set aside or written
        self.readonly = readonly
        self.stats = CacheStats()
        self._warn = warn or (lambda msg: None)
        self._conn: apsw.Connection | None = None
        self._off = False  #: a failure turned the cache off for the rest of this object
        self._set_aside = False  #: a bad file was set aside once already

    # -- opening ---------------------------------------------------------------------

    def _connection(self) -> apsw.Connection | None:
        if self._off:
            return None
        if self._conn is None:
            try:
                self._conn = self._open()
            except _Bad as e:
                if self.readonly:
                    self._off = True  # (the next writer sets it aside, and says so)
                    return None
                self._replace(str(e))
            except (apsw.Error, OSError, ScryError) as e:
                self._give_up(e)
        return self._conn

    def _open(self) -> apsw.Connection:
        if not self.readonly:
            d = self.directory
            if not d.is_dir():
                d.mkdir(parents=True, mode=0o700, exist_ok=True)
                with contextlib.suppress(OSError):
                    os.chmod(d, 0o700)
        new = not self.path.exists()
        flags = (
            apsw.SQLITE_OPEN_READONLY
            if self.readonly
            else apsw.SQLITE_OPEN_READWRITE | apsw.SQLITE_OPEN_CREATE
        )
        try:
            conn = sqlitefile.connect(str(self.path), flags, BUSY_TIMEOUT_MS)
        except (apsw.NotADBError, apsw.CorruptError) as e:
            raise _Bad(f"not a readable SQLite file ({e})") from None
        try:
            if self.readonly:
                self._check(conn)
                return conn
            if new:
                with contextlib.suppress(OSError):
                    os.chmod(self.path, 0o600)  # (its -wal and -shm files take this mode)
            sqlitefile.retry_while_busy(lambda: self._check_or_init(conn), BUSY_TIMEOUT_MS)
        except BaseException:
            with contextlib.suppress(apsw.Error):
                conn.close()
            raise
        return conn

    def _check_or_init(self, conn: apsw.Connection) -> None:
        try:
            ident = sqlitefile.identity(conn)
        except (apsw.NotADBError, apsw.CorruptError) as e:
            raise _Bad(f"not a readable SQLite file ({e})") from None
        if ident.foreign(APPLICATION_ID):
            raise _Bad("not a scrydb vector cache")
        tables = ident.tables
        if not tables:
            # (Both before the first table.) 8 KB pages hold five 384-d vectors, 4 KB pages
            # two: 1.6 KB a vector instead of 2.4.
            conn.execute(f"PRAGMA page_size={PAGE_SIZE}")
            conn.execute("PRAGMA auto_vacuum=INCREMENTAL")
        sqlitefile.use_wal(conn, self.path)
        if not tables:
            with _immediate(conn):
                if not next(conn.execute("SELECT count(*) FROM sqlite_master"))[0]:
                    conn.execute(SCHEMA)
                    conn.execute(f"PRAGMA application_id={APPLICATION_ID}")
                    conn.executemany(
                        "INSERT OR IGNORE INTO meta(key, value) VALUES (?, ?)",
                        [
                            ("format", CACHE_FORMAT),
                            ("fingerprint", self.fingerprint),
                            ("dim", str(self.dim)),
                            ("created_at", str(time.time())),
                        ],
                    )
        self._check(conn)

    def _check(self, conn: apsw.Connection) -> None:
        """Raise _Bad unless the file is a cache of this fingerprint and dimension."""
        app_id, meta = 0, {}
        try:
            app_id = sqlitefile.identity(conn).application_id
            if app_id == APPLICATION_ID:
                meta = dict(conn.execute("SELECT key, value FROM meta"))
        except (apsw.NotADBError, apsw.CorruptError) as e:
            raise _Bad(f"not a readable SQLite file ({e})") from None
        except apsw.SQLError:
            pass  # (no meta table: caught below)
        if app_id != APPLICATION_ID:
            raise _Bad("not a scrydb vector cache")
        want = {"format": CACHE_FORMAT, "fingerprint": self.fingerprint, "dim": str(self.dim)}
        wrong = [k for k, v in want.items() if meta.get(k) != v]
        if wrong:
            raise _Bad(f"it was made for another {', '.join(wrong)}")

    def _replace(self, why: str) -> None:
        """Set a damaged or foreign file aside (``<file>.damaged``, with its ``-wal`` and
        ``-shm``: :func:`~scrydb.store.sqlitefile.set_aside`) and start a new one, once."""
        self.close()
        if self._set_aside:
            self._off = True
            return
        self._set_aside = True
        try:
            aside = sqlitefile.set_aside(self.path)
        except OSError as e:
            self._give_up(e)
            return
        self._warn(
            f"shared vector cache {self.path} was unusable ({why}): moved to {aside}, "
            "starting a new one"
        )
        try:
            self._conn = self._open()
        except (apsw.Error, OSError, ScryError, _Bad) as e:
            self._give_up(e)

    def _give_up(self, err: BaseException) -> None:
        self.close()
        if not self._off:
            self._off = True
            self._warn(
                f"shared vector cache {self.path} is not used for this sync "
                f"({type(err).__name__}: {err}); indexing goes on without it"
            )

    def _guard(self, err: BaseException) -> None:
        """An error met while using an open file: damage sets the file aside, anything
        else turns the cache off."""
        if self.readonly:
            self.close()
            self._off = True
        elif isinstance(err, apsw.CorruptError | apsw.NotADBError):
            self._replace(f"{type(err).__name__}: {err}")
        else:
            self._give_up(err)

    # -- use -------------------------------------------------------------------------

    def get(self, keys: Iterable[bytes]) -> dict[bytes, np.ndarray]:
        """The cached vectors among ``keys`` (a miss is simply absent)."""
        wanted = list(dict.fromkeys(keys))
        if not wanted:
            return {}
        t0 = time.perf_counter()
        try:
            return self._get_guarded(wanted)
        finally:
            self.stats.seconds += time.perf_counter() - t0

    def _get_guarded(self, wanted: list[bytes]) -> dict[bytes, np.ndarray]:
        for _attempt in range(2):  # again once after a damaged file was replaced
            conn = self._connection()
            if conn is None:
                return {}
            try:
                found = self._get(conn, wanted)
            except (apsw.Error, OSError) as e:
                self._guard(e)
                continue
            self.stats.hits += len(found)
            return found
        return {}

    def _get(self, conn: apsw.Connection, keys: list[bytes]) -> dict[bytes, np.ndarray]:
        found: dict[bytes, np.ndarray] = {}
        stale: list[int] = []
        now = int(time.time())
        size = self.dim * 4
        for i in range(0, len(keys), LOOKUP_CHUNK):
            # In rowid order: each page of the file is read once per chunk of keys.
            ids = sorted(_rowid(k) for k in keys[i : i + LOOKUP_CHUNK])
            for rowid, key, blob, used in conn.execute(
                "SELECT v.rowid, v.key, v.vector, v.used FROM json_each(?) AS j "
                "JOIN vectors AS v ON v.rowid = j.value",
                (json.dumps(ids),),
            ):
                if len(blob) != size:
                    continue
                found[bytes(key)] = np.frombuffer(blob, dtype="<f4").astype(np.float32)
                if used < now - TOUCH_EVERY_S:
                    stale.append(rowid)
        found = {k: found[k] for k in keys if k in found}  # (a first-8-byte clash: a miss)
        if stale and not self.readonly:
            with _immediate(conn):
                conn.executemany(
                    "UPDATE vectors SET used = ? WHERE rowid = ?", [(now, r) for r in stale]
                )
        return found

    def put(self, keys: list[bytes], vectors: np.ndarray) -> None:
        """Remember the model's vectors for ``keys`` (one short transaction), then keep
        the file under its bound."""
        if not keys or self.readonly:
            return
        t0 = time.perf_counter()
        try:
            self._put(keys, vectors)
        finally:
            self.stats.seconds += time.perf_counter() - t0

    def _put(self, keys: list[bytes], vectors: np.ndarray) -> None:
        vecs = np.ascontiguousarray(vectors, dtype="<f4")
        if vecs.shape != (len(keys), self.dim):
            return
        conn = self._connection()
        if conn is None:
            return
        now = int(time.time())
        rows = [(_rowid(k), k, vecs[i].tobytes(), now) for i, k in enumerate(keys)]
        try:
            with _immediate(conn):
                conn.executemany(
                    "INSERT OR REPLACE INTO vectors(rowid, key, vector, used) VALUES (?, ?, ?, ?)",
                    rows,
                )
            self.stats.stored += len(rows)
            self._bound(conn)
        except (apsw.Error, OSError) as e:
            self._guard(e)

    def _bound(self, conn: apsw.Connection) -> None:
        """Past the bound (rows times :attr:`row_bytes`), evict the least recently used
        vectors down to EVICT_TO of it, and give the freed pages back. The rows are
        counted on the small ``used`` index (~20 ms for a full 2 GB file, against seconds
        of model time per write)."""
        cap = int(self.max_bytes / self.row_bytes)
        if next(conn.execute("SELECT count(*) FROM vectors"))[0] <= cap:
            return
        with _immediate(conn):
            n = next(conn.execute("SELECT count(*) FROM vectors"))[0]
            drop = n - int(cap * EVICT_TO)
            if drop <= 0:
                return
            conn.execute(
                "DELETE FROM vectors WHERE rowid IN "
                "(SELECT rowid FROM vectors ORDER BY used, rowid LIMIT ?)",
                (drop,),
            )
        self.stats.evicted += drop
        conn.execute("PRAGMA incremental_vacuum")

    @property
    def row_bytes(self) -> int:
        """What one vector costs in the file: its floats, its key twice (row and index)
        and page overhead (b-tree pages of random keys are about three quarters full)."""
        return int((self.dim * 4 + 16 + 2 * 8 + ROW_OVERHEAD) / PAGE_FILL)

    def count(self) -> int:
        """Vectors in the file (0 when it cannot be read)."""
        conn = self._connection()
        if conn is None:
            return 0
        try:
            return int(next(conn.execute("SELECT count(*) FROM vectors"))[0])
        except apsw.Error as e:
            self._guard(e)
            return 0

    def close(self) -> None:
        """Close the file (a later use opens it again)."""
        if self._conn is not None:
            with contextlib.suppress(apsw.Error):
                self._conn.close()
            self._conn = None


@contextlib.contextmanager
def _immediate(conn: apsw.Connection) -> Iterator[None]:
    """A write transaction that takes the write lock at its start (BEGIN IMMEDIATE), so
    the busy timeout applies: a deferred one that read first could fail at once when
    another indexer wrote in between."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield
    except BaseException:
        with contextlib.suppress(apsw.Error):
            conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


class _Bad(Exception):
    """The file is not a cache of this fingerprint (damaged, foreign, another format)."""
