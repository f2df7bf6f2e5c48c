"""Owning an SQLite file (``store/sqlitefile.py``): opening, the application-id check,
the WAL switch and its retry, and setting a damaged file aside, the same for the index
and the shared vector cache. Real SQLite files throughout."""

from __future__ import annotations

import shutil
from pathlib import Path

import apsw
import numpy as np
import pytest

from scrydb.errors import ScryError
from scrydb.store import APPLICATION_ID, Store, sqlitefile
from scrydb.store import vcache as vcache_mod
from scrydb.store.vcache import VectorCache, cache_file, text_key

RW = apsw.SQLITE_OPEN_READWRITE | apsw.SQLITE_OPEN_CREATE


def _value(db: Path) -> int:
    """The one value of table ``t`` in ``db`` (its WAL applied, if one is beside it)."""
    conn = apsw.Connection(str(db), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        return int(next(conn.execute("SELECT v FROM t"))[0])
    finally:
        conn.close()


def _wal_image(work: Path, dst: Path, value: int) -> None:
    """``dst`` with its ``-wal`` and ``-shm``, as a killed writer leaves them: table ``t``
    holding ``value`` lives in the WAL only (copied while the writer was open)."""
    src = work / f"src{value}.db"
    conn = apsw.Connection(str(src))
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA wal_autocheckpoint=0")
    conn.execute(f"CREATE TABLE t(v); INSERT INTO t VALUES ({value})")
    for suffix in ("", "-wal", "-shm"):
        shutil.copyfile(f"{src}{suffix}", f"{dst}{suffix}")
    conn.close()
    assert Path(f"{dst}-wal").stat().st_size > 0


def _plain_file(dst: Path, value: int) -> None:
    """``dst`` in rollback mode (no WAL beside it) with table ``t`` holding ``value``."""
    conn = apsw.Connection(str(dst))
    conn.execute(f"CREATE TABLE t(v); INSERT INTO t VALUES ({value})")
    conn.close()


def test_set_aside_takes_the_wal_and_shm_along(tmp_path: Path) -> None:
    db = tmp_path / "x.db"
    _wal_image(tmp_path, db, 1)
    aside = sqlitefile.set_aside(db)
    assert aside == tmp_path / "x.db.damaged"
    for suffix in ("", "-wal", "-shm"):
        assert not Path(f"{db}{suffix}").exists(), suffix
        assert Path(f"{aside}{suffix}").exists(), suffix
    assert _value(aside) == 1  # its committed transactions went with it


def test_a_second_set_aside_never_meets_the_first_ones_wal(tmp_path: Path) -> None:
    """The first damaged file's WAL must not stay beside the second: SQLite would replay
    it into the second copy, which would then show the first file's pages."""
    db = tmp_path / "x.db"
    _wal_image(tmp_path, db, 1)
    sqlitefile.set_aside(db)
    _plain_file(db, 2)
    aside = sqlitefile.set_aside(db)
    assert not Path(f"{aside}-wal").exists() and not Path(f"{aside}-shm").exists()
    assert _value(aside) == 2


def test_a_new_file_never_replays_a_wal_left_behind(tmp_path: Path) -> None:
    """set_aside moves the file before its WAL: were it stopped between the two, the
    new, empty file made in its place drops the old WAL instead of replaying it."""
    db = tmp_path / "x.db"
    _wal_image(tmp_path, db, 1)
    db.rename(tmp_path / "moved.db")  # (the first move done, the WAL's not yet)
    Store(db).close()
    conn = apsw.Connection(str(db))
    try:
        assert not conn.execute("SELECT 1 FROM sqlite_master WHERE name = 't'").fetchall()
    finally:
        conn.close()


def test_identity_and_foreign(tmp_path: Path) -> None:
    empty = tmp_path / "empty.db"
    conn = sqlitefile.connect(str(empty), RW, 1000)
    ident = sqlitefile.identity(conn)
    conn.close()
    assert ident == sqlitefile.Identity(0, 0, 0) and not ident.foreign(APPLICATION_ID)

    theirs = tmp_path / "theirs.db"
    _plain_file(theirs, 1)
    conn = sqlitefile.connect(str(theirs), RW, 1000)
    assert sqlitefile.identity(conn).foreign(APPLICATION_ID)
    conn.execute(f"PRAGMA application_id={APPLICATION_ID}")
    assert not sqlitefile.identity(conn).foreign(APPLICATION_ID)
    conn.close()
    assert sqlitefile.is_ours(theirs, APPLICATION_ID)
    assert not sqlitefile.is_ours(theirs, APPLICATION_ID + 1)


def test_is_ours_reads_only_the_header(tmp_path: Path) -> None:
    db = tmp_path / "i.db"
    Store(db).close()
    assert sqlitefile.is_ours(db, APPLICATION_ID)
    with db.open("r+b") as f:  # a damaged schema page does not change the header
        f.seek(100)
        f.write(b"\xff" * 3000)
    assert sqlitefile.is_ours(db, APPLICATION_ID)
    junk = tmp_path / "junk.db"
    junk.write_bytes(b"SQLite format 2\x00" + bytes(100))
    assert not sqlitefile.is_ours(junk, 0)
    assert not sqlitefile.is_ours(tmp_path / "missing.db", APPLICATION_ID)


def test_connect_reads_the_header_at_open(tmp_path: Path) -> None:
    junk = tmp_path / "junk.db"
    junk.write_bytes(b"this is not sqlite at all" * 100)
    with pytest.raises(apsw.NotADBError):
        sqlitefile.connect(str(junk), RW, 1000)


def test_connect_loads_sqlite_vec_only_when_asked(tmp_path: Path) -> None:
    db = str(tmp_path / "v.db")
    conn = sqlitefile.connect(db, RW, 1000, vectors=True)
    assert str(next(conn.execute("SELECT vec_version()"))[0]).startswith("v")
    conn.close()
    conn = sqlitefile.connect(db, RW, 1000)
    with pytest.raises(apsw.SQLError, match="vec_version"):
        conn.execute("SELECT vec_version()").fetchall()
    conn.close()


def test_use_wal(tmp_path: Path) -> None:
    conn = sqlitefile.connect(str(tmp_path / "w.db"), RW, 1000)
    sqlitefile.use_wal(conn, tmp_path / "w.db")
    assert next(conn.execute("PRAGMA journal_mode"))[0] == "wal"
    assert next(conn.execute("PRAGMA synchronous"))[0] == 2  # FULL (test_powerloss.py)
    assert next(conn.execute("PRAGMA journal_size_limit"))[0] == sqlitefile.WAL_SIZE_LIMIT
    conn.close()
    mem = sqlitefile.connect(":memory:", RW, 1000)
    with pytest.raises(ScryError, match=r"cannot use WAL mode for .* \(journal mode memory\)"):
        sqlitefile.use_wal(mem, Path(":memory:"))
    mem.close()


def _reader(db: str) -> apsw.Connection:
    """A connection in the middle of a read of ``db`` (a new file: no WAL yet)."""
    conn = apsw.Connection(db)
    conn.execute("BEGIN")
    conn.execute("SELECT count(*) FROM sqlite_master").fetchall()
    return conn


def test_retry_while_busy_waits_for_the_holder(tmp_path: Path) -> None:
    """Turning a new file to WAL while another connection reads it fails (SQLite does not
    wait for that lock); the retry succeeds once the reader is done."""
    db = str(tmp_path / "new.db")
    holder = _reader(db)
    conn = sqlitefile.connect(db, RW, 0)
    calls = 0

    def step() -> str:
        nonlocal calls
        calls += 1
        if calls == 3:
            holder.execute("ROLLBACK")
        return str(next(conn.execute("PRAGMA journal_mode=WAL"))[0])

    try:
        assert sqlitefile.retry_while_busy(step, 60_000) == "wal"
        assert calls == 3  # two busy tries, then the free file
    finally:
        conn.close()
        holder.close()


def test_retry_while_busy_gives_up_at_the_deadline(tmp_path: Path) -> None:
    db = str(tmp_path / "new.db")
    holder = _reader(db)
    conn = sqlitefile.connect(db, RW, 0)
    calls = 0

    def step() -> object:
        nonlocal calls
        calls += 1
        return conn.execute("PRAGMA journal_mode=WAL").fetchall()

    try:
        with pytest.raises(apsw.BusyError):
            sqlitefile.retry_while_busy(step, 0)
        assert calls == 1
    finally:
        conn.close()
        holder.execute("ROLLBACK")
        holder.close()


def _damage_index(db: Path) -> None:
    Store(db).close()
    with db.open("r+b") as f:  # the schema page (page 1 after the 100-byte header)
        f.seek(100)
        f.write(b"\xff" * 3000)


def test_index_and_cache_set_aside_the_same_way(tmp_path: Path) -> None:
    """The index (``recover=True``, what ``scry index --full`` does) and the shared
    vector cache move a damaged file to the same name, with its companions."""
    db = tmp_path / "i.db"
    _damage_index(db)
    store = Store(db, recover=True)
    try:
        assert store.moved_aside == sqlitefile.aside_path(db) == tmp_path / "i.db.damaged"
        assert store.has_table("chunks")  # a new, empty index in its place
    finally:
        store.close()

    cache_dir = tmp_path / "vectors"
    cache_dir.mkdir()
    path = cache_file(cache_dir, "fp")
    path.write_bytes(b"this is not sqlite at all" * 100)
    Path(f"{path}-wal").write_bytes(b"")
    warnings: list[str] = []
    cache = VectorCache(cache_dir, "fp", 4, 1 << 20, warnings.append)
    try:
        assert cache.get([text_key("x")]) == {}
        assert len(warnings) == 1 and f"moved to {sqlitefile.aside_path(path)}" in warnings[0]
        assert Path(f"{path}.damaged-wal").exists()
        cache.put([text_key("x")], np.full((1, 4), 0.5, dtype=np.float32))
        assert len(cache.get([text_key("x")])) == 1  # the new file works
    finally:
        cache.close()


def test_the_cache_keeps_its_own_application_id(tmp_path: Path) -> None:
    """An index file where the cache expects its own: foreign to the cache (set aside),
    as a cache file is foreign to the index (refused)."""
    cache_dir = tmp_path / "vectors"
    cache_dir.mkdir()
    path = cache_file(cache_dir, "fp")
    Store(path).close()
    assert vcache_mod.APPLICATION_ID != APPLICATION_ID
    warnings: list[str] = []
    cache = VectorCache(cache_dir, "fp", 4, 1 << 20, warnings.append)
    try:
        assert cache.count() == 0
    finally:
        cache.close()
    assert len(warnings) == 1 and "not a scrydb vector cache" in warnings[0]
    assert sqlitefile.is_ours(sqlitefile.aside_path(path), APPLICATION_ID)
