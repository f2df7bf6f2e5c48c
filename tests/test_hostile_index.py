"""Hostile index files and configuration: a damaged (truncated, overwritten) index, one
that is not ours (random bytes, another program's SQLite file, a newer scrydb, another
repository), a read-only file or directory, a full disk, broken ``.scry.toml``.

Each ends in one clean line that says what to do, with a way out that works (``scry
index --full`` for a damaged index), and never in silent damage: the user's files, and
any file that is not provably a scrydb index, stay byte for byte as they were.
(tests/test_store.py and tests/test_cli.py refuse junk and foreign files at the Store
level; these go through the CLI and the ways out.)
"""

from __future__ import annotations

import hashlib
import os
import random
import shutil
from collections.abc import Iterator
from pathlib import Path

import apsw
import pytest
from conftest import run_scry
from faults import immutable, read_only_view, small_fs
from synth_repo import FakeEmbedder, assert_consistent, chunk_set, embedded_hashes, write_synth

import scrydb
from scrydb.errors import IndexError_, ScryError
from scrydb.store import SCHEMA_VERSION, IndexWriteError
from scrydb.store import db as store_db


def tree_digest(root: Path) -> dict[str, str]:
    """Every file under ``root`` (bytes hashed): the user's files must never change."""
    return {
        p.relative_to(root).as_posix(): hashlib.blake2b(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file() and not p.is_symlink()
    }


def file_digest(p: Path) -> str:
    return hashlib.blake2b(p.read_bytes()).hexdigest()


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, set]:
    """(repo, a good lexical index of it, its chunk set)."""
    base = tmp_path_factory.mktemp("hostile-index")
    repo = write_synth(base / "repo", 300)
    db = base / "good.db"
    with scrydb.open(repo, db=db) as ix:
        ix.sync(embed=False)
        ix.store.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        chunks = chunk_set(ix)
    return repo, db, chunks


@pytest.fixture
def copy(built: tuple[Path, Path, set], tmp_path: Path) -> Iterator[Path]:
    """A private copy of the good index."""
    dst = tmp_path / "i.db"
    shutil.copyfile(built[1], dst)
    yield dst


def _cli(repo: Path, *args: str) -> tuple[int, str]:
    r = run_scry(*args, cwd=repo)
    assert "Traceback" not in r.stderr and "internal error" not in r.stderr, r.stderr
    return r.returncode, r.stderr


def _one_line_error(rc: int, err: str, *needles: str) -> None:
    assert rc == 2, err
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("scry: error:"), err
    for n in needles:
        assert n in lines[0], (n, err)


def _truncate(db: Path, frac: float) -> None:
    os.truncate(db, int(db.stat().st_size * frac) // 4096 * 4096)


def _scribble(db: Path, frac: float, seed: int) -> None:
    with db.open("r+b") as f:
        f.seek(int(db.stat().st_size * frac) // 4096 * 4096)
        f.write(random.Random(seed).randbytes(8192))


@pytest.mark.parametrize(
    "damage",
    ["truncate-0.5", "truncate-0.9", "scribble-0.3", "scribble-0.5", "header-page"],
)
def test_damaged_index_says_so_and_full_rebuild_recovers(
    built: tuple[Path, Path, set], copy: Path, damage: str
) -> None:
    repo, _good, clean = built
    before = tree_digest(repo)
    kind, _, arg = damage.partition("-")
    if kind == "truncate":
        _truncate(copy, float(arg))
    elif kind == "scribble":
        _scribble(copy, float(arg), seed=len(damage))
    else:  # the schema page (page 1 after the 100-byte header)
        with copy.open("r+b") as f:
            f.seek(100)
            f.write(b"\xff" * 3000)
    db = str(copy)
    # Every command either works (the damage is somewhere it does not look) or says
    # the index is damaged and how to rebuild it: one line, exit 2.
    for args in (
        ["search", "handle_5", "--no-sync", "--mode", "lexical"],
        ["locate", "total = 5", "--no-sync"],
        ["status", "--fast"],
        ["index", "--no-embed", "-q"],
    ):
        rc, err = _cli(repo, *args, "--db", db)
        if rc == 2:
            _one_line_error(rc, err, "damaged", "scry index --full")
    # The documented way out works, and keeps the damaged file for inspection.
    rc, err = _cli(repo, "index", "--full", "--no-embed", "-q", "--db", db)
    assert rc == 0, err
    if kind != "scribble":  # (scribbles may hit pages no check reads)
        assert Path(db + ".damaged").exists(), err
    if Path(db + ".damaged").exists():
        assert "was damaged" in err and ".damaged" in err, err
    with scrydb.open(repo, db=copy) as ix:
        assert chunk_set(ix) == clean
        assert_consistent(ix)
    assert tree_digest(repo) == before


def test_foreign_files_are_never_moved_or_rewritten(
    built: tuple[Path, Path, set], tmp_path: Path
) -> None:
    """Random bytes, another program's SQLite file, a newer scrydb's index and another
    repository's index: refused with a one-line reason, even by ``--full``, and left
    exactly as they were."""
    repo = built[0]
    junk = tmp_path / "junk.db"
    junk.write_bytes(random.Random(1).randbytes(100_000))
    theirs = tmp_path / "theirs.db"
    conn = apsw.Connection(str(theirs))
    conn.execute("CREATE TABLE accounts(id, balance); INSERT INTO accounts VALUES (1, 100)")
    conn.close()
    newer = tmp_path / "newer.db"
    shutil.copyfile(built[1], newer)
    conn = apsw.Connection(str(newer))
    conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    conn.close()
    other_repo = write_synth(tmp_path / "other", 3)
    other = tmp_path / "other.db"
    with scrydb.open(other_repo, db=other) as ix:
        ix.sync(embed=False)
        ix.store.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    cases = {
        junk: "not a scrydb index",
        theirs: "not a scrydb index",
        newer: "newer scrydb",
        other: "belongs to",
    }
    for db, msg in cases.items():
        digest = file_digest(db)
        for args in (
            ["index", str(repo), "--full", "--no-embed", "-q"],
            ["index", str(repo), "--no-embed", "-q"],
        ):
            rc, err = _cli(repo, *args, "--db", str(db))
            _one_line_error(rc, err, msg)
        rc, err = _cli(repo, "status", "--db", str(db))
        if db is not other:  # status of another repo's index is answered for that repo
            _one_line_error(rc, err, msg)
        assert file_digest(db) == digest, db
        assert not Path(str(db) + ".damaged").exists()


def test_garbage_wal_and_shm_beside_a_good_index(built: tuple[Path, Path, set], copy: Path) -> None:
    """A -wal of junk (a failed copy, another file's log) is ignored by SQLite's
    checksums, a -shm of junk is rebuilt: the index still answers."""
    Path(str(copy) + "-wal").write_bytes(random.Random(2).randbytes(50_000))
    Path(str(copy) + "-shm").write_bytes(random.Random(3).randbytes(32_768))
    rc, err = _cli(
        built[0], "search", "handle_5", "--no-sync", "--mode", "lexical", "--db", str(copy)
    )
    assert rc == 0, err
    with scrydb.open(built[0], db=copy) as ix:
        assert chunk_set(ix) == built[2]
        assert ix.store.scalar("PRAGMA integrity_check") == "ok"


def test_read_only_directory(built: tuple[Path, Path, set], tmp_path: Path) -> None:
    """A real read-only directory (a read-only bind mount, so root is stopped too):
    search answers from the index, with a note, and never tries to sync; status works;
    index says why it cannot write."""
    repo = built[0]
    src = tmp_path / "src"
    src.mkdir()
    shutil.copyfile(built[1], src / "i.db")
    with read_only_view(src, tmp_path / "ro") as ro:
        db = str(ro / "i.db")
        r = run_scry("search", "handle_5", "--mode", "lexical", "--db", db, cwd=repo)
        assert r.returncode == 0 and "handle_5" in r.stdout, r.stderr
        assert "read-only" in r.stderr and "Traceback" not in r.stderr
        r = run_scry("status", "--db", db, cwd=repo)
        assert r.returncode == 0 and "files     300" in r.stdout, r.stderr
        r = run_scry("index", "--no-embed", "--db", db, cwd=repo)
        _one_line_error(r.returncode, r.stderr, "read-only", "directory is not writable")
        r = run_scry("locate", "total = 5", "--db", db, cwd=repo)
        assert r.returncode == 0, r.stderr
        # No index yet in a read-only directory: a clear error, nothing else.
        r = run_scry("index", "--no-embed", "--db", str(ro / "new.db"), cwd=repo)
        _one_line_error(r.returncode, r.stderr, "cannot create")


def test_read_only_file(built: tuple[Path, Path, set], copy: Path) -> None:
    """``chattr +i``: a file nobody may write (as chmod 444 is for a user)."""
    repo = built[0]
    with immutable(copy):
        r = run_scry("search", "handle_5", "--mode", "lexical", "--db", str(copy), cwd=repo)
        assert r.returncode == 0 and "read-only" in r.stderr, r.stderr
        r = run_scry("index", "--no-embed", "--db", str(copy), cwd=repo)
        _one_line_error(r.returncode, r.stderr, "read-only", "file is not writable")


def test_read_only_fallback_injected(
    built: tuple[Path, Path, set], copy: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Where nothing can be mounted: SQLite opening a file read-only (what it does with
    a file it may not write) is simulated; the Index falls back the same way."""
    real = store_db._connection

    def read_only(name: str, flags: int) -> apsw.Connection:
        return real(name, apsw.SQLITE_OPEN_READONLY | (flags & apsw.SQLITE_OPEN_URI))

    monkeypatch.setattr(store_db, "_connection", read_only)
    with scrydb.open(built[0], db=copy) as ix:
        assert ix.store.readonly and "read-only" in (ix.store.write_denied or "")
        assert ix.search("handle_5", mode="lexical")[0].symbol == "handle_5"
        assert ix.status(check_git=False).files == 300
        with pytest.raises(IndexWriteError, match=r"cannot sync: index .* is read-only"):
            ix.sync(embed=False)


def _grow(repo: Path, n: int, start: int = 1000) -> None:
    for i in range(start, start + n):
        p = repo / "grown" / f"g_{i}.py"
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(f"def grown_{i}(x):\n    return x * {i}\n" * 20)


def test_disk_full_injected(tmp_path: Path) -> None:
    """SQLITE_FULL (``PRAGMA max_page_count`` caps the file, as a full disk does): the
    sync stops with a one-line error, the index stays consistent and searchable, and
    the next sync after space is freed converges to a clean index -- in the lexical
    phase and in the embedding phase."""
    repo = write_synth(tmp_path / "repo", 60)
    fake = FakeEmbedder(dim=64)
    with scrydb.open(repo, db=tmp_path / "i.db", embedder=fake) as ix:
        ix.sync()
        _grow(repo, 200)
        pages = ix.store.scalar("PRAGMA page_count")
        ix.store.conn.execute(f"PRAGMA max_page_count = {pages + 8}")
        with pytest.raises(IndexWriteError, match="is full: free some space"):
            ix.sync()
        assert ix.store.scalar("PRAGMA integrity_check") == "ok"
        assert_consistent(ix)
        assert ix.search("handle_5", mode="lexical")
        # Space freed: lexical done, then the embedding phase runs out.
        ix.store.conn.execute("PRAGMA max_page_count = 1073741823")
        ix.sync(embed=False)
        pages = ix.store.scalar("PRAGMA page_count")
        ix.store.conn.execute(f"PRAGMA max_page_count = {pages + 4}")
        with pytest.raises(IndexWriteError, match=r"disk full|is full"):
            ix.sync()
        assert_consistent(ix)
        ix.store.conn.execute("PRAGMA max_page_count = 1073741823")
        rep = ix.sync()
        assert rep.pending == 0
        assert_consistent(ix)
        got = (chunk_set(ix), embedded_hashes(ix))
    with scrydb.open(repo, db=tmp_path / "clean.db", embedder=FakeEmbedder(dim=64)) as clean:
        clean.sync()
        assert (chunk_set(clean), embedded_hashes(clean)) == got


def test_disk_full_on_a_small_file_system(built: tuple[Path, Path, set], tmp_path: Path) -> None:
    """A real full disk: a 400 KB tmpfs (skipped where mounting is not allowed)."""
    repo = built[0]
    with small_fs(tmp_path / "small", "400k") as small:
        db = str(small / "i.db")
        r = run_scry("index", "--no-embed", "-q", "--db", db, cwd=repo)
        _one_line_error(r.returncode, r.stderr, "is full", "free some space")
        conn = apsw.Connection(db)
        try:
            assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        finally:
            conn.close()
        # Searching a partial (here: empty) index on a full disk: one line, no traceback.
        r = run_scry("search", "handle_5", "--mode", "lexical", "--db", db, cwd=repo)
        assert r.returncode in (1, 2) and "Traceback" not in r.stderr, r.stderr
    # The same index on a disk with room: the next run converges.
    with scrydb.open(repo, db=tmp_path / "roomy.db") as ix:
        ix.sync(embed=False)
        assert chunk_set(ix) == built[2]


@pytest.mark.parametrize(
    ("content", "msg"),
    [
        (b"[index\nexclude = [", "not valid TOML"),
        (b"\xff\xfe\x00garbage\x00", "not UTF-8"),
        (b"[index]\nmax_file_bytes = -1\n", "must be positive"),
        (b"[index]\nskip_secrets = 'no'\n", "must be true or false"),
        (b"[embed]\nurl = 'file:///etc/passwd'\n", "must start with http"),
        (b"[nonsense]\nx = 1\n", "unknown section"),
        (b"index = 3\n", "must be a table"),
    ],
)
def test_broken_config_is_one_line_and_touches_nothing(
    tmp_path: Path, content: bytes, msg: str
) -> None:
    repo = write_synth(tmp_path / "repo", 5)
    (repo / ".scry.toml").write_bytes(content)
    before = tree_digest(repo)
    fresh = tmp_path / "fresh.db"
    for args in (["index", "--no-embed"], ["search", "handle_1"], ["locate", "x"]):
        rc, err = _cli(repo, *args, "--db", str(fresh))
        _one_line_error(rc, err, msg)
    assert not fresh.exists()  # nothing was created on a bad config
    # An index made before the config broke: every command names the config, and the
    # index file is not touched.
    db = tmp_path / "i.db"
    with scrydb.open(repo, db=db, config=scrydb.Config()) as ix:
        ix.sync(embed=False)
        ix.store.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    digest = file_digest(db)
    for args in (["index", "--no-embed"], ["search", "handle_1"], ["status"], ["read", "x.py"]):
        rc, err = _cli(repo, *args, "--db", str(db))
        _one_line_error(rc, err, msg)
    assert file_digest(db) == digest
    assert tree_digest(repo) == before


def test_config_that_is_not_a_file(tmp_path: Path) -> None:
    repo = write_synth(tmp_path / "repo", 3)
    (repo / ".scry.toml").mkdir()  # a directory of that name: no config, defaults
    rc, err = _cli(repo, "index", "--no-embed", "-q", "--db", str(tmp_path / "i.db"))
    assert rc == 0, err
    rc, err = _cli(repo, "index", "--config", str(tmp_path / "missing.toml"), "--db", "x.db")
    _one_line_error(rc, err, "cannot read config")


def test_index_path_that_cannot_be(tmp_path: Path) -> None:
    repo = write_synth(tmp_path / "repo", 3)
    (tmp_path / "a_dir.db").mkdir()
    (tmp_path / "a_file").write_text("x")
    for db, msg, cli_msg in (
        (tmp_path / "a_dir.db", "is not a file", "is a directory"),  # click checks --db
        (tmp_path / "a_file" / "i.db", "cannot create index directory", None),
    ):
        with pytest.raises(ScryError, match=msg):
            scrydb.open(repo, db=db)
        rc, err = _cli(repo, "index", "--no-embed", "--db", str(db))
        if cli_msg is None:
            _one_line_error(rc, err, msg)
        else:
            assert rc == 2 and cli_msg in err.splitlines()[-1], err


def test_damaged_file_under_an_open_index(built: tuple[Path, Path, set], copy: Path) -> None:
    """Damage found mid-query (not at open) leaves the API as an IndexError_ with the
    way out, not as an SQLite exception."""
    repo = built[0]
    with scrydb.open(repo, db=copy) as ix:
        _scribble(copy, 0.5, seed=7)
        ix.store.conn.execute("PRAGMA cache_size = 0")  # force reads from the file
        try:
            for q in ("handle_5", "retry", "total"):
                ix.search(q, mode="lexical")
            ix.locate("total = 5")
            ix.status(check_git=False)
        except IndexError_ as e:
            assert "damaged" in str(e) and "--full" in str(e)
        rep = ix.sync(full=True, embed=False)
        assert rep.rebuilt
        assert chunk_set(ix) == built[2]
        assert_consistent(ix)
