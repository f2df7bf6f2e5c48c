"""A power cut, replayed: the fault-injecting VFS of ``tests/test_powerloss.py``.

An operation (a sync, a model switch, a migration) runs once with every SQLite file of
scrydb opened through :data:`VFS_NAME` (``scrydb.store.sqlitefile.VFS``), an apsw VFS
that passes everything to SQLite's own and logs each ``xWrite``, ``xTruncate``,
``xSync`` and ``xDelete`` with its file, offset and bytes, plus each commit as it
returns (a WAL hook: the ledger of acknowledged transactions). From that one log
:class:`Replay` rebuilds what the disk would hold after a power cut at any point *N*
(the first *N* operations done): per file, the content at its last ``xSync`` before *N*,
plus the writes and truncations since then either all **dropped**, **torn** (a seeded
random subset of them kept, in order) or **garbled** (some kept, some lost, some
replaced by random bytes), as SQLite's own crash tests do. The ``-shm``
file is shared memory (mapped, never written through ``xWrite``): a power cut loses it
entirely, and SQLite rebuilds it from the WAL. Deletions are taken as durable at once.

The WAL hook replaces SQLite's automatic checkpoint, so it checkpoints itself (passive,
as SQLite's does) at :data:`CHECKPOINT_PAGES`, far below SQLite's 1,000, so that small
test repositories cut power in the middle of checkpoints too.
"""

from __future__ import annotations

import contextlib
import hashlib
import random
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import apsw

from scrydb.store import sqlitefile

VFS_NAME = "scry-powerloss"
#: WAL frames after which a commit checkpoints (SQLite's default is 1,000).
CHECKPOINT_PAGES = 64
#: Bytes of a WAL frame header (SQLite writes it, then the page, in two writes).
WAL_FRAME_HEADER = 24


@dataclass(frozen=True)
class Op:
    """One file operation that reached the VFS: ``write`` (``data`` at ``offset``),
    ``truncate`` (to ``offset`` bytes), ``sync`` or ``delete``."""

    path: str
    kind: str
    offset: int = 0
    data: bytes = b""
    thread: int = 0  #: the thread that did it (one writer per thread in the tests)


@dataclass
class Log:
    """What one recorded operation did to its files."""

    ops: list[Op] = field(default_factory=list)
    #: content of each file when the VFS first opened it (None: it did not exist)
    initial: dict[str, bytes | None] = field(default_factory=dict)
    #: (database file, number of ops done, thread) per commit that returned, in order
    commits: list[tuple[str, int, int]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, op: Op) -> None:
        with self.lock:
            self.ops.append(op)

    def boundaries(self) -> dict[str, list[tuple[int, int]]]:
        """Per database file, where each transaction became complete in its WAL: the
        position just after the page of a commit frame (a frame header whose "database
        size after commit" field is not zero), and the thread that wrote it."""
        out: dict[str, list[tuple[int, int]]] = {}
        for i, op in enumerate(self.ops):
            if (
                op.kind == "write"
                and op.path.endswith("-wal")
                and len(op.data) == WAL_FRAME_HEADER
                and int.from_bytes(op.data[4:8], "big") != 0
            ):
                # The frame's page is the same thread's next write to this WAL: another
                # thread's writes may come between the two (two writers at once), and
                # a boundary placed before the page records the state before the commit
                # as the commit's (the cut after it then looked "torn").
                page = next(
                    (
                        j
                        for j in range(i + 1, len(self.ops))
                        if self.ops[j].thread == op.thread
                        and self.ops[j].path == op.path
                        and self.ops[j].kind == "write"
                    ),
                    i + 1,
                )
                out.setdefault(op.path[: -len("-wal")], []).append((page + 1, op.thread))
        return out


_active: Log | None = None


def _name(name: str | apsw.URIFilename | None) -> str | None:
    return name.filename() if isinstance(name, apsw.URIFilename) else name


class _File(apsw.VFSFile):
    def __init__(self, name: str | apsw.URIFilename | None, flags: list[int]) -> None:
        self._path = _name(name)
        log = _active
        if log is not None and self._path and self._path not in log.initial:
            p = Path(self._path)
            log.initial[self._path] = p.read_bytes() if p.is_file() else None
        super().__init__("", name, flags)

    def _log(self, op: Op) -> None:
        if _active is not None and self._path:
            _active.add(Op(op.path, op.kind, op.offset, op.data, threading.get_ident()))

    def xWrite(self, data: bytes, offset: int) -> None:
        super().xWrite(data, offset)
        self._log(Op(self._path or "", "write", offset, bytes(data)))

    def xTruncate(self, newsize: int) -> None:
        super().xTruncate(newsize)
        self._log(Op(self._path or "", "truncate", newsize))

    def xSync(self, flags: int) -> None:
        super().xSync(flags)
        self._log(Op(self._path or "", "sync"))


class _Vfs(apsw.VFS):
    def __init__(self) -> None:
        super().__init__(VFS_NAME, "")

    def xOpen(self, name: str | apsw.URIFilename | None, flags: list[int]) -> _File:
        return _File(name, flags)

    def xDelete(self, name: str, syncdir: bool) -> None:
        super().xDelete(name, syncdir)
        if _active is not None:
            _active.add(Op(name, "delete", thread=threading.get_ident()))


_vfs = _Vfs()  # registered for the life of the process (apsw keeps the name)


def _wal_hook(log: Log, conn: apsw.Connection, dbname: str, pages: int) -> int:
    with log.lock:
        log.commits.append((conn.db_filename(dbname), len(log.ops), threading.get_ident()))
    if pages >= CHECKPOINT_PAGES:
        conn.wal_checkpoint(dbname)  # passive, like SQLite's own automatic checkpoint
    return apsw.SQLITE_OK


@contextlib.contextmanager
def recording() -> Iterator[Log]:
    """Every SQLite file scrydb opens inside the block goes through the recording VFS."""
    global _active
    log = Log()

    def hook(conn: apsw.Connection) -> None:
        conn.set_wal_hook(lambda c, db, pages: _wal_hook(log, c, db, pages))

    _active = log
    apsw.connection_hooks.append(hook)
    sqlitefile.VFS = VFS_NAME
    try:
        yield log
    finally:
        sqlitefile.VFS = None
        apsw.connection_hooks.remove(hook)
        _active = None


def _apply(buf: bytearray, op: Op) -> None:
    if op.kind == "write":
        end = op.offset + len(op.data)
        if len(buf) < op.offset:
            buf.extend(bytes(op.offset - len(buf)))
        buf[op.offset : end] = op.data
    elif op.kind == "truncate":
        if len(buf) > op.offset:
            del buf[op.offset :]
        else:
            buf.extend(bytes(op.offset - len(buf)))


class Replay:
    """Walks a log forward once; at each position, the files as written so far
    (:meth:`full`) or as a power cut there would leave them (:meth:`cut`)."""

    def __init__(self, log: Log) -> None:
        self.log = log
        self.pos = 0
        self._full = {p: bytearray(b) for p, b in log.initial.items() if b is not None}
        self._durable = {p: bytes(b) for p, b in self._full.items()}
        self._pending: dict[str, list[Op]] = {}

    def advance(self, position: int) -> None:
        """Do the log's operations up to (not including) ``position``."""
        assert position >= self.pos, "a replay only goes forward"
        for op in self.log.ops[self.pos : position]:
            if op.kind == "delete":
                for d in (self._full, self._durable, self._pending):
                    d.pop(op.path, None)
            elif op.kind == "sync":
                self._durable[op.path] = bytes(self._full.get(op.path, b""))
                self._pending[op.path] = []
            else:
                _apply(self._full.setdefault(op.path, bytearray()), op)
                self._pending.setdefault(op.path, []).append(op)
        self.pos = position

    def full(self) -> dict[str, bytes]:
        """Every file as written so far (what a process kill leaves)."""
        return {p: bytes(b) for p, b in self._full.items()}

    def cut(
        self, rng: random.Random | None, *, garble: bool = False
    ) -> tuple[dict[str, bytes], int, int]:
        """The files after a power cut here: unsynced operations dropped (``rng`` None),
        torn (each kept with probability 1/2) or, with ``garble``, each kept, lost or
        written as random bytes (1/3 each), as SQLite's crash tests fill unsynced
        sectors. Also returns how many unsynced operations there were and how many were
        lost (garbled included)."""
        out, pending, lost = {}, 0, 0
        for p in self._full:
            buf = bytearray(self._durable.get(p, b""))
            for op in self._pending.get(p, []):
                pending += 1
                r = rng.random() if rng is not None else 1.0
                if r < (1 / 3 if garble else 0.5):
                    _apply(buf, op)
                    continue
                lost += 1
                if garble and r >= 2 / 3 and op.kind == "write":
                    _apply(buf, Op(op.path, "write", op.offset, rng.randbytes(len(op.data))))  # type: ignore[union-attr]
            out[p] = bytes(buf)
        return out, pending, lost


def materialize(files: dict[str, bytes], root: Path, dest: Path) -> None:
    """Write ``files`` (paths under ``root``) to the same relative places under ``dest``;
    companions left there by an earlier point are removed first."""
    for p in dest.rglob("*"):
        if p.is_file() and p.name.endswith((".db", "-wal", "-shm", "-journal")):
            p.unlink()
    for path, data in files.items():
        target = dest / Path(path).relative_to(root)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)


def inspect(db: Path, *, vectors: bool = True) -> tuple[str, list[str]]:
    """(digest, ``PRAGMA integrity_check``) of an SQLite file. The digest is of its
    logical content: schema, pragmas and every row of every real table (the shadow
    tables of FTS5 and sqlite-vec included), order aside. A file that does not exist or
    is empty has the digest of a database with no tables."""
    h = hashlib.blake2b(digest_size=16)
    if not db.is_file() or db.stat().st_size == 0:
        h.update(repr(((), (0, 0))).encode())
        return h.hexdigest(), ["ok"]
    flags = apsw.SQLITE_OPEN_READWRITE
    conn = sqlitefile.connect(str(db), flags, 5000, vectors=vectors)
    try:
        integrity = [str(r[0]) for r in conn.execute("PRAGMA integrity_check")]
        master = sorted(
            conn.execute("SELECT type, name, tbl_name, sql FROM sqlite_master"), key=repr
        )
        pragmas = (
            conn.execute("PRAGMA user_version").fetchone()[0],
            conn.execute("PRAGMA application_id").fetchone()[0],
        )
        h.update(repr((tuple(master), pragmas)).encode())
        for typ, name, _tbl, sql in master:
            if typ != "table" or str(sql or "").upper().startswith("CREATE VIRTUAL"):
                continue
            rows = sorted(
                hashlib.blake2b(repr(r).encode(), digest_size=16).digest()
                for r in conn.execute(f'SELECT * FROM "{name}"')
            )
            h.update(name.encode() + b"".join(rows))
    finally:
        conn.close()
    return h.hexdigest(), integrity
