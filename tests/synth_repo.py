"""Synthetic repositories of any size for the sync, watch, status and crash tests.

Every file is deterministic: ``n_files`` Python modules under a few packages, each with
``funcs`` functions. With ``pool`` set, function bodies are drawn from that many distinct
texts, so a large repository has many chunks but few distinct texts to embed (the chunk
text hash decides embedding reuse).
"""

from __future__ import annotations

import hashlib
import random
import re
import time
from pathlib import Path

import apsw
import numpy as np

from scrydb.embed import Embedder, normalise
from scrydb.index import Index

PACKAGES = ("core", "api", "store", "util", "jobs")


def function_text(key: int, variant: int = 0) -> str:
    """A function of about 8 lines, distinct per ``key`` (and ``variant``)."""
    name = f"handle_{key}"
    return (
        f"def {name}(request, retries={key % 7 + 1}):\n"
        f'    """Handle request kind {key} with up to {key % 7 + 1} retries."""\n'
        f"    total = {key} + {variant}\n"
        f"    for attempt in range(retries):\n"
        f"        total += attempt * {key % 13 + 2}\n"
        f"        if total % {key % 5 + 3} == 0:\n"
        f"            return total\n"
        f"    return total - {variant}\n"
    )


WORDS = (
    "account address amount archive audit backoff balance batch bucket buffer cache "
    "cancel channel checksum client cluster config cursor deadline decode digest "
    "encode endpoint event export filter flush format gateway handler header index "
    "invoice journal ledger lease limit listener manifest merge message metric "
    "migrate monitor network offset order packet parser partition payload policy "
    "pool quota queue record region registry render replica request retry route "
    "schema session shard signal snapshot socket stream tenant ticket timeout token "
    "trace upload user vector window worker"
).split()


def varied_function_text(key: int) -> str:
    """A function whose words and length vary with ``key`` (few BM25 ties)."""
    rnd = random.Random(key)
    verb, noun = rnd.sample(WORDS, 2)
    doc = " ".join(rnd.choices(WORDS, k=rnd.randint(4, 12)))
    body = [
        f"    {rnd.choice(WORDS)}_{i} = {rnd.choice(WORDS)}({rnd.randint(0, 99)})"
        for i in range(rnd.randint(3, 9))
    ]
    return (
        f"def {verb}_{noun}_{key}({rnd.choice(WORDS)}):\n"
        f'    """{doc.capitalize()}."""\n' + "\n".join(body) + f"\n    return {noun}_{key}\n"
    )


def module_text(index: int, funcs: int, pool: int | None = None, varied: bool = False) -> str:
    """Text of module number ``index``."""
    keys = [(index * funcs + j) % pool if pool else index * funcs + j for j in range(funcs)]
    # Pooled modules have no docstring of their own: every chunk is a pool text.
    parts = [] if pool else [f'"""Module {index} of the synthetic repository."""\n']
    parts += [varied_function_text(k) if varied else function_text(k) for k in keys]
    return "\n\n".join(parts)


def module_path(index: int) -> str:
    """Relative path of module number ``index``."""
    pkg = PACKAGES[index % len(PACKAGES)]
    return f"{pkg}/sub{index % 7}/mod_{index}.py"


def write_synth(
    root: Path, n_files: int, funcs: int = 3, pool: int | None = None, varied: bool = False
) -> Path:
    """Write a synthetic repository under ``root`` (created if needed); returns ``root``.

    ``varied`` draws each function's words and length from a seeded generator, so
    rankings have few ties (``function_text`` modules are all alike)."""
    root.mkdir(parents=True, exist_ok=True)
    (root / ".gitignore").write_text("*.log\nout/\n", encoding="utf-8")
    for i in range(n_files):
        p = root / module_path(i)
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(module_text(i, funcs, pool, varied), encoding="utf-8")
    return root


class FakeEmbedder(Embedder):
    """A deterministic stand-in for the model: a vector seeded by the text's hash.

    Counts what it embeds (``texts``); ``delay`` seconds per text imitate a real model.
    """

    def __init__(self, id: str = "fake:1", dim: int = 32, delay: float = 0.0) -> None:
        self.id = id
        self._dim = dim
        self.delay = delay
        self.texts: list[str] = []

    @property
    def dim(self) -> int:
        return self._dim

    def _vec(self, text: str) -> np.ndarray:
        seed = int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest(), "little")
        return np.random.default_rng(seed).standard_normal(self._dim).astype(np.float32)

    def embed_documents(self, texts: list[str]) -> np.ndarray:
        self.texts += texts
        if self.delay:
            time.sleep(self.delay * len(texts))
        return normalise(np.stack([self._vec(t) for t in texts]))

    def embed_queries(self, texts: list[str]) -> np.ndarray:
        return normalise(np.stack([self._vec(t) for t in texts]))


class WordEmbedder(FakeEmbedder):
    """A bag of distinct words: texts that share rare words have a high cosine."""

    def __init__(self) -> None:
        super().__init__("words:1", dim=256)

    def _vec(self, text: str) -> np.ndarray:
        words = sorted(set(re.findall(r"[a-z]+", text.lower())))
        return np.sum([super(WordEmbedder, self)._vec(w) for w in words], axis=0)


# -- what tests compare between indexes ---------------------------------------------------


def chunk_set(ix: Index) -> set[tuple[str, int, int, str]]:
    """(path, start, end, text_hash) of every chunk."""
    return set(
        ix.store.rows(
            "SELECT f.path, c.start_line, c.end_line, c.text_hash FROM chunks c JOIN files f ON f.id = c.file_id"
        )
    )


def symbol_set(ix: Index) -> set[tuple[str, str, str, int]]:
    return set(
        ix.store.rows(
            "SELECT f.path, s.qualname, s.kind, s.line FROM symbols s JOIN files f ON f.id = s.file_id"
        )
    )


def embedded_hashes(ix: Index) -> set[str]:
    """Text hashes whose vector is in use by some chunk."""
    return {
        r[0]
        for r in ix.store.rows(
            "SELECT DISTINCT e.text_hash FROM embeddings e JOIN chunks c ON c.emb_id = e.id"
        )
    }


def ref_set(ix: Index) -> set[tuple]:
    """Every reference of the code graph, by path (ids differ between indexes)."""
    return set(
        ix.store.rows(
            "SELECT f.path, c.start_line, r.name, r.norm, r.kind, r.line, r.col, r.qualifier,"
            " r.module, r.alias FROM refs r JOIN chunks c ON c.id = r.chunk_id"
            " JOIN files f ON f.id = r.file_id"
        )
    )


def vector_map(ix: Index) -> dict[str, bytes]:
    """text hash -> float vector bytes, for vectors some chunk uses (body or header)."""
    if not ix.store.has_table("vec_float"):
        return {}
    return dict(
        ix.store.rows(
            "SELECT e.text_hash, v.embedding FROM embeddings e JOIN vec_float v ON v.rowid = e.id "
            "WHERE EXISTS (SELECT 1 FROM chunks c WHERE c.emb_id = e.id OR c.head_emb_id = e.id)"
        )
    )


#: What schema 2 onwards added to an index (dropped, a file reads as schema 1): the
#: embeddings' origin and orphaned_at, the chunks' header columns, the windows.
SCHEMA_1_SQL = (
    "ALTER TABLE embeddings DROP COLUMN origin; "
    "DROP INDEX embeddings_orphaned; ALTER TABLE embeddings DROP COLUMN orphaned_at; "
    "DROP INDEX chunks_head; DROP INDEX chunks_head_emb; "
    "ALTER TABLE chunks DROP COLUMN head_hash; ALTER TABLE chunks DROP COLUMN head_emb_id; "
    "DROP TABLE chunk_windows; ALTER TABLE chunks DROP COLUMN windows; "
    "PRAGMA user_version = 1"
)


def make_schema_1(db: Path) -> None:
    """Turn the closed index file ``db`` into a schema-1 file in place (the migration
    tests of tests/test_sync.py and tests/test_powerloss.py), its WAL checkpointed."""
    conn = apsw.Connection(str(db))
    conn.execute(SCHEMA_1_SQL)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()


def fts_hits(ix: Index, term: str) -> list[int]:
    return [
        r[0]
        for r in ix.store.rows(
            "SELECT rowid FROM chunks_fts WHERE chunks_fts MATCH ?", (f'"{term}"',)
        )
    ]


def assert_consistent(ix: Index) -> None:
    """Every table agrees with every other (what a reader may rely on)."""
    s = ix.store
    assert s.scalar("PRAGMA integrity_check") == "ok"
    n_chunks = s.scalar("SELECT count(*) FROM chunks")
    # One FTS row per chunk: the contentless table answers a full-text query per chunk.
    assert s.scalar("SELECT count(*) FROM chunks_fts") == n_chunks
    assert not s.rows("SELECT id FROM chunks WHERE file_id NOT IN (SELECT id FROM files)")
    assert not s.rows("SELECT id FROM symbols WHERE chunk_id NOT IN (SELECT id FROM chunks)")
    assert not s.rows(
        "SELECT id FROM chunks WHERE emb_id IS NOT NULL AND emb_id NOT IN (SELECT id FROM embeddings)"
    )
    if s.has_table("vec_float"):
        assert s.scalar("SELECT count(*) FROM vec_float") == s.scalar(
            "SELECT count(*) FROM embeddings"
        )
        assert s.scalar("SELECT count(*) FROM vec_bit") == s.scalar(
            "SELECT count(*) FROM embeddings"
        )
    names = {r[0] for r in s.rows("SELECT name FROM symbol_names")}
    assert names == {r[0] for r in s.rows("SELECT DISTINCT norm FROM symbols")}
    # The code graph: every reference belongs to a live chunk of its own file.
    assert not s.rows(
        "SELECT r.chunk_id FROM refs r LEFT JOIN chunks c ON c.id = r.chunk_id"
        " WHERE c.id IS NULL OR c.file_id != r.file_id"
    )
