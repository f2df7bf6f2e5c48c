"""The single SQLite file: schema, vec tables, fingerprint and refusals."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import apsw
import pytest
import sqlite_vec

import scrydb
from scrydb.errors import IndexError_, ScryError
from scrydb.store import APPLICATION_ID, SCHEMA_VERSION, Store


def _raw(db: Path) -> apsw.Connection:
    conn = apsw.Connection(str(db))
    conn.enable_load_extension(True)
    conn.load_extension(sqlite_vec.loadable_path())
    return conn


@pytest.mark.slow
def test_everything_lives_in_one_file(indexed_sample: tuple[Path, Path]) -> None:
    repo, db = indexed_sample
    conn = _raw(db)
    names = {r[0] for r in conn.execute("SELECT name FROM sqlite_master")}
    assert {
        "files",
        "chunks",
        "symbols",
        "chunks_fts",
        "symbol_trigrams",
        "vec_float",
        "vec_bit",
        "meta",
    } <= names
    assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    assert conn.execute("PRAGMA application_id").fetchone()[0] == APPLICATION_ID
    n_chunks = conn.execute("SELECT count(*) FROM chunks").fetchone()[0]
    n_vec = conn.execute("SELECT count(*) FROM vec_float").fetchone()[0]
    n_bit = conn.execute("SELECT count(*) FROM vec_bit").fetchone()[0]
    distinct = conn.execute("SELECT count(DISTINCT text_hash) FROM chunks").fetchone()[0]
    heads = conn.execute(
        "SELECT count(DISTINCT head_hash) FROM chunks WHERE head_hash != ''"
    ).fetchone()[0]
    views = conn.execute("SELECT count(DISTINCT text_hash) FROM chunk_windows").fetchone()[0]
    assert n_chunks > 10 and heads > 0 and n_vec == n_bit == distinct + heads + views
    assert conn.execute("SELECT count(*) FROM chunks WHERE emb_id IS NULL").fetchone()[0] == 0
    # The FTS index is readable by plain SQLite (no custom tokenizer needed).
    hits = conn.execute("SELECT rowid FROM chunks_fts WHERE chunks_fts MATCH 'backoff'").fetchall()
    assert hits
    # KNN through sqlite-vec itself works on the stored vectors.
    vec = conn.execute("SELECT embedding FROM vec_float LIMIT 1").fetchone()[0]
    knn = conn.execute(
        "SELECT rowid, distance FROM vec_float WHERE embedding MATCH ? AND k = 3", (vec,)
    ).fetchall()
    assert len(knn) == 3 and knn[0][1] == pytest.approx(0.0, abs=1e-5)
    bits = conn.execute(
        "SELECT rowid FROM vec_bit WHERE embedding MATCH vec_quantize_binary(?) AND k = 3", (vec,)
    ).fetchall()
    assert bits[0][0] == knn[0][0]
    assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    meta = dict(conn.execute("SELECT key, value FROM meta").fetchall())
    assert meta["embedder"].startswith("st:scry-code-minilm@2") and meta["embed_dim"] == "384"
    assert meta["root"] == str(repo.resolve())
    for key in ("chunker", "tokenizer", "schema", "last_sync"):
        assert key in meta


def test_not_a_database_is_refused(tmp_path: Path) -> None:
    db = tmp_path / "junk.db"
    db.write_bytes(b"this is not sqlite at all" * 100)
    with pytest.raises(IndexError_, match="not a scrydb index"):
        Store(db)
    assert db.read_bytes().startswith(b"this is not sqlite")  # untouched


def test_foreign_sqlite_file_is_refused(tmp_path: Path) -> None:
    db = tmp_path / "other.db"
    conn = apsw.Connection(str(db))
    conn.execute("CREATE TABLE t(x); INSERT INTO t VALUES (1)")
    conn.close()
    with pytest.raises(IndexError_, match="not a scrydb index"):
        Store(db)


_OPEN_AT = """
import sys, time
from scrydb.store import Store
time.sleep(max(0.0, float(sys.argv[2]) - time.time()))
Store(sys.argv[1]).close()
"""


@pytest.mark.slow
def test_processes_creating_one_new_index_together(tmp_path: Path) -> None:
    """Several processes opening one new file at staggered moments all get the index: a
    late one must not read the first one's half-visible schema as a foreign SQLite file
    (a race seen in CI: two first indexes started together, one refused the file)."""
    for round_ in range(2):
        db = tmp_path / f"new{round_}.db"
        start = time.time() + 1.5  # after the interpreters have started
        procs = [
            subprocess.Popen(
                [sys.executable, "-c", _OPEN_AT, str(db), str(start + 0.02 * i)],
                stderr=subprocess.PIPE,
                text=True,
            )
            for i in range(6)
        ]
        errors = [p.communicate(timeout=60)[1] for p in procs]
        assert all(p.returncode == 0 for p in procs), [e for e in errors if e]
        store = Store(db, readonly=True)
        assert store.scalar("PRAGMA application_id") == APPLICATION_ID
        store.close()


def test_newer_schema_is_refused_with_both_versions(tmp_path: Path) -> None:
    db = tmp_path / "new.db"
    Store(db).close()
    conn = apsw.Connection(str(db))
    conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 5}")
    conn.close()
    with pytest.raises(IndexError_) as e:
        Store(db)
    assert str(SCHEMA_VERSION + 5) in str(e.value) and str(SCHEMA_VERSION) in str(e.value)


def test_readonly_open_of_missing_index(tmp_path: Path) -> None:
    with pytest.raises(ScryError, match="no index"):
        Store(tmp_path / "missing.db", readonly=True)


def test_index_of_another_repository_is_refused(tmp_path: Path, sample_repo: Path) -> None:
    other = tmp_path / "other"
    other.mkdir()
    db = tmp_path / "x.db"
    with scrydb.open(sample_repo, db=db) as ix:
        ix.sync(embed=False)
    with pytest.raises(IndexError_, match="belongs to"):
        scrydb.open(other, db=db)


def test_empty_repository_is_a_valid_index(tmp_path: Path) -> None:
    root = tmp_path / "empty"
    root.mkdir()
    with scrydb.open(root, db=tmp_path / "e.db") as ix:
        rep = ix.sync()
        assert rep.files_seen == 0
        res = ix.search("anything at all")
        assert len(res) == 0 and res.weak
