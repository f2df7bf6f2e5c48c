"""The shared vector cache (``store/vcache.py``, ``sync/reuse.py``): worktrees and clones
of one repository embed each text once per machine; seeds from another index; the
cache's manners under many indexers, damage, a size bound, and when turned off.

Real model, real git, real processes, real SQLite files."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import apsw
import numpy as np
import pytest
from conftest import git, run_scry
from sample_repo import write_repo

import scrydb
from scrydb.paths import cache_dir, repo_name
from scrydb.store import Store
from scrydb.store.vcache import VectorCache, text_key
from scrydb.sync.reuse import shared_cache_dir

pytestmark = pytest.mark.slow


def _git_repo(root: Path) -> Path:
    repo = write_repo(root)
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "init")
    return repo


def _model_texts(rep: scrydb.SyncReport) -> int:
    return rep.texts_embedded + rep.headers_embedded + rep.windows_embedded


def _vectors(db: Path) -> dict[str, bytes]:
    """text_hash -> float vector bytes of an index file."""
    store = Store(db, readonly=True)
    try:
        if not store.has_table("vec_float"):
            return {}
        return {
            h: bytes(v)
            for h, v in store.rows(
                "SELECT e.text_hash, v.embedding FROM embeddings e "
                "JOIN vec_float v ON v.rowid = e.id"
            )
        }
    finally:
        store.close()


def _cache_files() -> list[Path]:
    d = shared_cache_dir()
    return sorted(d.glob("*.db")) if d.is_dir() else []


def _cache_count(path: Path) -> int:
    conn = apsw.Connection(str(path), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        return int(next(conn.execute("SELECT count(*) FROM vectors"))[0])
    finally:
        conn.close()


def test_second_worktree_embeds_nothing_already_embedded(tmp_path: Path) -> None:
    main = _git_repo(tmp_path / "shop")
    git(main, "worktree", "add", "-q", "-b", "feature", str(tmp_path / "shop-feature"))
    wt = tmp_path / "shop-feature"
    assert repo_name(wt) == "shop"  # the worktree's texts name the repository, not the folder

    with scrydb.open(main, db=tmp_path / "main.db") as ix:
        first = ix.sync()
    assert _model_texts(first) > 50 and first.vectors_from_cache == 0

    out = run_scry("index", str(wt), "--json", "--db", str(tmp_path / "wt.db"), cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    second = json.loads(out.stdout)
    assert second["texts_embedded"] == second["headers_embedded"] == 0
    assert second["windows_embedded"] == 0
    assert second["vectors_from_cache"] == _model_texts(first)
    # Nested worktree pointers are no content: the ".git" file is not indexed.
    assert second["chunks_written"] == first.chunks_written

    # Same vectors, so the same dense answers.
    assert _vectors(tmp_path / "main.db") == _vectors(tmp_path / "wt.db")
    st = run_scry("status", str(wt), "--json", "--db", str(tmp_path / "wt.db"), cwd=tmp_path)
    origins = json.loads(st.stdout)["vector_origins"]
    assert origins == {"cache": second["vectors_from_cache"]}
    text = run_scry("status", str(wt), "--db", str(tmp_path / "wt.db"), cwd=tmp_path).stdout
    assert "0 computed here by the model" in text and "from the shared vector cache" in text
    cache_info = json.loads(st.stdout)["shared_cache"]
    assert cache_info["vectors"] == second["vectors_from_cache"] and cache_info["bytes"] > 0
    assert f"{cache_info['vectors']} vectors" in text

    # A branch that changes one file re-embeds only that file's new texts.
    (wt / "app" / "retry.py").write_text(
        (wt / "app" / "retry.py").read_text() + "\n\ndef jitter(x: float) -> float:\n"
        '    """Spread retries apart so clients do not retry in lockstep."""\n'
        "    return x * 0.9\n"
    )
    out = run_scry("index", str(wt), "--json", "--db", str(tmp_path / "wt.db"), cwd=tmp_path)
    third = json.loads(out.stdout)
    assert 1 <= third["texts_embedded"] <= 2, third


def test_clones_share_vectors_and_the_summary_says_so(tmp_path: Path) -> None:
    a = _git_repo(tmp_path / "a" / "shop")
    b = tmp_path / "b" / "shop-copy"
    git(tmp_path, "clone", "-q", str(a), str(b))
    assert repo_name(b) == "shop"  # named by its origin remote

    r1 = run_scry("index", str(a), "--db", str(tmp_path / "a.db"), cwd=tmp_path)
    r2 = run_scry("index", str(b), "--db", str(tmp_path / "b.db"), cwd=tmp_path)
    assert r1.returncode == r2.returncode == 0, r1.stderr + r2.stderr
    assert "from the shared cache" not in r1.stderr
    assert " 0 embedded;" in r2.stderr and "vectors from the shared cache" in r2.stderr
    assert "of model time saved" in r2.stderr


def test_two_indexers_fill_one_cache_at_once(tmp_path: Path) -> None:
    # Two checkouts whose texts are identical (same folder name), indexed at once: both
    # compute and write the same keys into one cache file.
    repos = [write_repo(tmp_path / side / "shop") for side in ("x", "y")]
    env = dict(os.environ)
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "scrydb.cli", "index", str(r), "--db", str(r.parent / "i.db")],
            cwd=tmp_path,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for r in repos
    ]
    results = [p.communicate(timeout=600) for p in procs]
    for p, (_out, err) in zip(procs, results, strict=True):
        assert p.returncode == 0, err
        assert "shared vector cache" not in err, err  # no lock error, nothing set aside
        assert "Traceback" not in err
    va, vb = (_vectors(r.parent / "i.db") for r in repos)
    assert va.keys() == vb.keys()
    for h in va:
        assert np.allclose(np.frombuffer(va[h], "<f4"), np.frombuffer(vb[h], "<f4"), atol=1e-6)
    (cache,) = _cache_files()
    assert _cache_count(cache) == len(va)


def test_truncated_cache_file_is_set_aside_and_rebuilt(tmp_path: Path) -> None:
    with scrydb.open(write_repo(tmp_path / "one" / "shop"), db=tmp_path / "one.db") as ix:
        ix.sync()
    (cache,) = _cache_files()
    data = cache.read_bytes()
    cache.write_bytes(data[: len(data) // 3])
    for suffix in ("-wal", "-shm"):
        Path(str(cache) + suffix).unlink(missing_ok=True)

    repo = write_repo(tmp_path / "two" / "shop")
    out = run_scry("index", str(repo), "--json", "--db", str(tmp_path / "two.db"), cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    rep = json.loads(out.stdout)
    assert rep["pending"] == 0 and _model_texts_json(rep) > 0  # the model filled the gap
    assert "shared vector cache" in out.stderr and ".damaged" in out.stderr
    assert len([ln for ln in out.stderr.splitlines() if "shared vector cache" in ln]) == 1
    assert Path(str(cache) + ".damaged").exists()
    assert _cache_count(cache) == _model_texts_json(rep) + rep["vectors_from_cache"]

    # A foreign SQLite file in its place is set aside too.
    for suffix in ("", "-wal", "-shm", ".damaged", ".damaged-wal", ".damaged-shm"):
        Path(str(cache) + suffix).unlink(missing_ok=True)
    conn = apsw.Connection(str(cache))
    conn.execute("CREATE TABLE stranger(x)")
    conn.close()
    out = run_scry("index", str(repo), "--full", "--db", str(tmp_path / "two.db"), cwd=tmp_path)
    assert out.returncode == 0 and "not a scrydb vector cache" in out.stderr, out.stderr


def _model_texts_json(rep: dict[str, int]) -> int:
    return rep["texts_embedded"] + rep["headers_embedded"] + rep["windows_embedded"]


def test_eviction_keeps_the_cache_under_a_tiny_bound(tmp_path: Path) -> None:
    repo = write_repo(tmp_path / "shop")
    (repo / ".scry.toml").write_text("[index]\nshared_cache_mb = 0.1\n")
    with scrydb.open(repo, db=tmp_path / "i.db") as ix:
        rep = ix.sync()
    (cache,) = _cache_files()
    n = _cache_count(cache)
    assert 0 < n < _model_texts(rep)
    per_row = VectorCache(cache.parent, "x", 384, 0).row_bytes
    assert n * per_row <= 0.1 * 1024 * 1024
    # The file itself stays near the bound (SQLite's fixed pages aside).
    assert cache.stat().st_size <= 0.1 * 1024 * 1024 + 64 * 1024


def test_eviction_drops_the_least_recently_used(tmp_path: Path) -> None:
    dim = 8
    cache = VectorCache(tmp_path / "c", "fp", dim, max_bytes=10**9)
    keys = [text_key(f"text {i}") for i in range(40)]
    vecs = np.eye(40, dim, dtype=np.float32)
    cache.put(keys, vecs)
    got = cache.get(keys[:3])
    assert set(got) == set(keys[:3]) and np.array_equal(got[keys[1]], vecs[1])
    # Age every row by a day, then use the first ten: they are the recent ones now.
    conn = apsw.Connection(str(cache.path))
    conn.execute("UPDATE vectors SET used = used - 86400")
    conn.close()
    assert len(cache.get(keys[:10])) == 10
    # A bound of 30 rows: the next write evicts down to 90% of it, oldest first.
    cache.max_bytes = 30 * cache.row_bytes
    newest = text_key("newest")
    cache.put([newest], np.ones((1, dim), np.float32))
    assert cache.stats.evicted == 41 - 27
    left = cache.get([*keys, newest])
    assert len(left) == 27
    assert newest in left and all(k in left for k in keys[:10])
    cache.close()


def test_seed_gives_a_fresh_clone_its_vectors_without_the_model(tmp_path: Path) -> None:
    env = {"SCRY_SHARED_CACHE": "0"}
    ci = write_repo(tmp_path / "ci" / "shop")
    out = run_scry("index", str(ci), "--db", str(tmp_path / "ci.db"), cwd=tmp_path, env=env)
    assert out.returncode == 0, out.stderr
    mine = write_repo(tmp_path / "me" / "shop")
    # The seed is read as is: the child fails if it imports torch (no model is loaded).
    code = (
        "import sys, json, scrydb\n"
        f"ix = scrydb.open({str(mine)!r}, db={str(tmp_path / 'me.db')!r})\n"
        f"r = ix.sync(seed={str(tmp_path / 'ci.db')!r})\n"
        "print(json.dumps(r.to_json()))\n"
        "sys.exit(3 if 'torch' in sys.modules else 0)\n"
    )
    run = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, **env},
    )
    assert run.returncode == 0, run.stderr
    rep = json.loads(run.stdout)
    assert _model_texts_json(rep) == 0 and rep["pending"] == 0 and rep["vectors_from_seed"] > 50
    assert _vectors(tmp_path / "me.db") == _vectors(tmp_path / "ci.db")
    assert not (cache_dir() / "vectors").exists()
    hits = run_scry(
        "search",
        "how long to wait before retrying",
        "--json",
        "--db",
        str(tmp_path / "me.db"),
        cwd=mine,
        env=env,
    )
    assert hits.returncode == 0, hits.stderr
    assert "dense" in json.loads(hits.stdout)["legs"]


def test_seed_from_another_fingerprint_is_refused(tmp_path: Path) -> None:
    other = write_repo(tmp_path / "other" / "shop")
    (other / ".scry.toml").write_text("[index]\nembed_max_chars = 1000\n")
    out = run_scry("index", str(other), "--db", str(tmp_path / "other.db"), cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    repo = write_repo(tmp_path / "me" / "shop")
    out = run_scry(
        "index", str(repo), "--seed", str(tmp_path / "other.db"), "--db", str(tmp_path / "me.db")
    )
    assert out.returncode == 2
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in out.stderr, out.stderr
    assert "1:1000" in lines[0] and "1:2000" in lines[0]  # both fingerprints named
    assert "st:scry-code-minilm" in lines[0]
    # Nothing was written: the index was not even started.
    assert not (tmp_path / "me.db").exists() or not _vectors(tmp_path / "me.db")

    missing = run_scry("index", str(repo), "--seed", str(tmp_path / "nope.db"))
    assert missing.returncode == 2 and "does not exist" in missing.stderr


@pytest.mark.parametrize("how", ["env", "config"])
def test_cache_off_writes_nothing_to_the_cache_directory(tmp_path: Path, how: str) -> None:
    repo = write_repo(tmp_path / "shop")
    env = {"SCRY_SHARED_CACHE": "0"} if how == "env" else {}
    if how == "config":
        (repo / ".scry.toml").write_text("[index]\nshared_cache = false\n")
    out = run_scry("index", str(repo), "--db", str(tmp_path / "i.db"), cwd=tmp_path, env=env)
    assert out.returncode == 0, out.stderr
    assert not (cache_dir() / "vectors").exists()
    # ... and on again, the next checkout fills it.
    if how == "env":
        again = write_repo(tmp_path / "b" / "shop")
        out = run_scry("index", str(again), "--db", str(tmp_path / "b.db"), cwd=tmp_path)
        assert out.returncode == 0 and _cache_files()


def test_cache_directory_is_private(tmp_path: Path) -> None:
    with scrydb.open(write_repo(tmp_path / "shop"), db=tmp_path / "i.db") as ix:
        ix.sync()
    d = shared_cache_dir()
    assert d.stat().st_mode & 0o777 == 0o700
    (f,) = _cache_files()
    assert f.stat().st_mode & 0o077 == 0
    # No source text in the file: keys are digests, values are floats.
    assert b"compute_backoff" not in f.read_bytes()


def test_busy_cache_never_fails_indexing(tmp_path: Path) -> None:
    """A cache another process holds locked past the timeout: the sync goes on without
    it, with one warning."""
    from scrydb.store import vcache

    with scrydb.open(write_repo(tmp_path / "a" / "shop"), db=tmp_path / "a.db") as ix:
        ix.sync()
    (cache,) = _cache_files()
    holder = apsw.Connection(str(cache))
    holder.execute("BEGIN EXCLUSIVE")
    old = vcache.BUSY_TIMEOUT_MS
    vcache.BUSY_TIMEOUT_MS = 200
    warnings: list[str] = []
    try:
        repo = write_repo(tmp_path / "b" / "shop")
        (repo / "app" / "extra.py").write_text("def extra():\n    return 42\n")
        with scrydb.open(repo, db=tmp_path / "b.db") as ix:
            rep = ix.sync(warn=warnings.append)
    finally:
        vcache.BUSY_TIMEOUT_MS = old
        holder.execute("ROLLBACK")
        holder.close()
    assert rep.pending == 0 and _model_texts(rep) > 0
    assert len([w for w in warnings if "shared vector cache" in w]) == 1
