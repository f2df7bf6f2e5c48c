"""Owning one SQLite file: how the index (:class:`~scrydb.store.Store`) and each file of
the shared vector cache (:mod:`scrydb.store.vcache`) are opened, told from other files,
switched to WAL, and set aside when damaged. The owners decide *when* (the index only
with ``scry index --full`` and only a file whose header is its own; the cache whenever
its file is unusable); this module is *how*, the same for both.

* :func:`connect`: an apsw connection with a busy timeout (and sqlite-vec for the index)
  that has read the file's header already, so a file that is not a database, or a WAL
  file whose ``-shm`` cannot be created, fails at open rather than at a later query.
* :func:`retry_while_busy`: turning a new file to WAL takes an exclusive lock that SQLite
  does not wait for; two processes creating one file at once try again for a while.
* :func:`identity` and :meth:`Identity.foreign`: the application-id check, read in one
  statement (one snapshot: another process's first write cannot fall between the reads).
* :func:`use_wal`: WAL, ``synchronous=FULL``, a cap on the WAL file's size;
  :func:`unsynced` for a cache's rows.
* :func:`set_aside`: ``<file>.damaged``, with its ``-wal`` and ``-shm`` beside it.
"""

from __future__ import annotations

import contextlib
import os
import random
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import NamedTuple, TypeVar

import apsw
import sqlite_vec

from scrydb.errors import ScryError

T = TypeVar("T")

#: Seconds between two tries of a file another process is turning to WAL (jittered by
#: half either way, so two waiting processes do not keep colliding).
BUSY_RETRY_S = 0.05
#: The WAL file is cut back to this size after a checkpoint (a first index of a large
#: repository would otherwise leave a WAL file as large as everything it wrote).
WAL_SIZE_LIMIT = 64 * 1024 * 1024
#: The files SQLite keeps beside a database in WAL mode. They travel with it when it is
#: set aside: the WAL holds committed transactions, and the ``-shm`` is where any process
#: that still has the old file open keeps its locks and its index of that WAL.
COMPANIONS = ("-wal", "-shm")
#: Appended to the name of a damaged file that was set aside (kept for inspection).
DAMAGED_SUFFIX = ".damaged"
#: Every name a database file of ours may have beside it, the file itself included
#: (``-journal``: SQLite's rollback journal, used until a new file is switched to WAL).
OWN_SUFFIXES = (
    "",
    *COMPANIONS,
    "-journal",
    DAMAGED_SUFFIX,
    *(DAMAGED_SUFFIX + c for c in COMPANIONS),
)
#: An SQLite file starts with this; its application id is at byte 68 (big-endian).
_MAGIC = b"SQLite format 3\x00"
_APP_ID_AT = 68
#: The SQLite VFS that :func:`connect` opens every file with (None: SQLite's default).
#: Only tests set it: ``tests/powerloss.py`` registers a VFS that records every write
#: and sync, to replay them as a power cut would leave the files.
VFS: str | None = None


class Identity(NamedTuple):
    """What a file says it is: ``PRAGMA application_id``, ``user_version``, table count."""

    application_id: int
    user_version: int
    tables: int

    def foreign(self, application_id: int) -> bool:
        """Whether the file belongs to another program: it holds tables, and another
        application id. (An empty file, or one whose first writer has not committed
        yet, is nobody's: it may become ours.)"""
        return self.tables > 0 and self.application_id != application_id


def connect(
    name: str, flags: int, busy_timeout_ms: int, *, vectors: bool = False
) -> apsw.Connection:
    """Open ``name`` (a path, or a ``file:`` URI with ``SQLITE_OPEN_URI``), wait up to
    ``busy_timeout_ms`` for other connections' locks, load sqlite-vec when ``vectors``,
    and read the header now (``apsw.NotADBError`` for a file that is not a database,
    ``apsw.CantOpenError`` for a WAL file whose ``-shm`` cannot be made)."""
    conn = apsw.Connection(name, flags=flags, vfs=VFS)
    try:
        conn.set_busy_timeout(busy_timeout_ms)
        if vectors:
            conn.enable_load_extension(True)
            conn.load_extension(sqlite_vec.loadable_path())
            conn.enable_load_extension(False)
        conn.execute("PRAGMA application_id").fetchall()
    except BaseException:
        conn.close()
        raise
    return conn


def retry_while_busy(step: Callable[[], T], timeout_ms: int) -> T:
    """``step()``, tried again while it raises ``apsw.BusyError``, for up to
    ``timeout_ms``: the busy timeout does not cover the exclusive lock that turning a new
    file to WAL takes, so two processes creating one file at once would otherwise see
    "database is locked". The last BusyError is raised past the deadline."""
    deadline = time.monotonic() + timeout_ms / 1000
    while True:
        try:
            return step()
        except apsw.BusyError:
            if time.monotonic() >= deadline:
                raise
            time.sleep(BUSY_RETRY_S * random.uniform(0.5, 1.5))


def identity(conn: apsw.Connection) -> Identity:
    """The file's :class:`Identity`, read in one statement (one snapshot)."""
    app_id, version, tables = next(
        conn.execute(
            "SELECT (SELECT application_id FROM pragma_application_id),"
            " (SELECT user_version FROM pragma_user_version),"
            " (SELECT count(*) FROM sqlite_master)"
        )
    )
    return Identity(int(app_id), int(version), int(tables))


def is_ours(path: Path, application_id: int) -> bool:
    """Whether the file's header (read as bytes: the file may be too damaged to open)
    says it is an SQLite file with ``application_id``."""
    try:
        with open(path, "rb") as f:
            head = f.read(_APP_ID_AT + 4)
    except OSError:
        return False
    return head.startswith(_MAGIC) and head[_APP_ID_AT:] == application_id.to_bytes(4, "big")


def use_wal(conn: apsw.Connection, path: Path) -> None:
    """Switch the file to WAL (readers never block the writer), ``synchronous=FULL`` and
    cap the WAL file at :data:`WAL_SIZE_LIMIT`. A ScryError when WAL cannot be used (the
    journal mode SQLite answered is named).

    FULL syncs the WAL at every commit, so a transaction that returned survives a power
    cut; NORMAL syncs only at checkpoints, and ``tests/test_powerloss.py`` shows a cut
    right after a commit losing it (the file stays sound either way). Commits are
    batched (many files or texts each), so the extra sync costs little (RELIABILITY.md,
    "Power loss")."""
    mode = next(conn.execute("PRAGMA journal_mode=WAL"))[0]
    if str(mode).lower() != "wal":
        raise ScryError(f"cannot use WAL mode for {path} (journal mode {mode})")
    conn.execute("PRAGMA synchronous=FULL")
    conn.execute(f"PRAGMA journal_size_limit={WAL_SIZE_LIMIT}")


@contextlib.contextmanager
def unsynced(conn: apsw.Connection) -> Iterator[None]:
    """Commits inside are not synced (``synchronous=NORMAL`` meanwhile): for rows only a
    cache needs, whose loss to a power cut costs nothing (the next sync of the WAL, or a
    checkpoint, makes them durable); a process crash still loses nothing. The setting
    :func:`use_wal` made is restored after."""
    before = next(conn.execute("PRAGMA synchronous"))[0]
    conn.execute("PRAGMA synchronous=NORMAL")
    try:
        yield
    finally:
        conn.execute(f"PRAGMA synchronous={int(before)}")


def aside_path(path: Path) -> Path:
    """Where :func:`set_aside` puts ``path``: ``<path>.damaged``."""
    return Path(str(path) + DAMAGED_SUFFIX)


def set_aside(path: Path) -> Path:
    """Move a damaged file to ``<path>.damaged`` with its ``-wal`` and ``-shm``
    (``<path>.damaged-wal``, ``-shm``); returns where it went. Close every connection of
    this process to it first. A file set aside before is replaced, and its companions
    are removed first: a stale ``-wal`` beside the new copy would be replayed into it.
    The file moves before its companions, so a new file made at ``path`` meanwhile never
    meets the old WAL with pages of its own (SQLite drops a WAL beside an empty file)."""
    aside = aside_path(path)
    for suffix in COMPANIONS:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(str(aside) + suffix)
    os.replace(path, aside)
    for suffix in COMPANIONS:
        with contextlib.suppress(FileNotFoundError):
            os.replace(str(path) + suffix, str(aside) + suffix)
    return aside
