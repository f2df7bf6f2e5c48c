"""Subprocess jobs of the benchmark, each in a fresh process so its peak RSS is its own.

    python bench/worker.py index ROOT DB [--model]   build an index with synthetic vectors
                                                     (--model: load + warm the real model
                                                     first, as a real index run holds it)
    python bench/worker.py model                     the real model alone, warmed
    python bench/worker.py serve ROOT DB QUERIES     open an index and answer queries

Each prints one JSON object on its last stdout line.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from common import UnitVectors, rss_peak_mb


def _warm_model() -> float:
    from scrydb.config import EmbedConfig
    from scrydb.embed.local import LocalEmbedder

    emb = LocalEmbedder(EmbedConfig())
    t0 = time.perf_counter()
    # 32 texts at the 256-token cap: the largest activations an index run allocates.
    emb.embed_documents(["def handler(request, response): return respond(request)\n" * 40] * 32)
    return time.perf_counter() - t0


def index(root: str, db: str, model: bool) -> dict[str, object]:
    from scrydb.index import Index

    load_s = _warm_model() if model else 0.0
    rss_model = rss_peak_mb()
    t0 = time.perf_counter()
    with Index(Path(root), db=Path(db), embedder=UnitVectors()) as ix:
        rep = ix.sync()
        chunks = ix.store.scalar("SELECT count(*) FROM chunks")
        text_bytes = ix.store.scalar("SELECT sum(length(CAST(content AS BLOB))) FROM chunks")
        vectors = ix.store.scalar("SELECT count(*) FROM embeddings")
    secs = time.perf_counter() - t0
    size = sum(p.stat().st_size for p in Path(db).parent.glob(Path(db).name + "*") if p.is_file())
    return {
        "seconds": secs,
        "model_load_s": load_s,
        "rss_mb": rss_peak_mb(),
        "rss_model_mb": rss_model,
        "chunks": chunks,
        "vectors": vectors,
        "text_bytes": text_bytes,
        "db_bytes": size,
        "report": rep.to_json(),
    }


def model() -> dict[str, object]:
    secs = _warm_model()
    return {"seconds": secs, "rss_mb": rss_peak_mb()}


def serve(root: str, db: str, queries_file: str) -> dict[str, object]:
    from scrydb.config import EmbedConfig
    from scrydb.embed.local import LocalEmbedder
    from scrydb.index import Index

    queries = json.loads(Path(queries_file).read_text())
    emb = LocalEmbedder(EmbedConfig())
    t0 = time.perf_counter()
    with Index(Path(root), db=Path(db), embedder=emb) as ix:
        for q in queries:
            ix.search(q)
        for q in queries:
            ix.search(q)
        n = len(ix.engine.vectors)
        mat_mb = ix.engine.vectors.matrix.nbytes / 1e6
    return {
        "seconds": time.perf_counter() - t0,
        "rss_mb": rss_peak_mb(),
        "vectors": n,
        "matrix_mb": mat_mb,
        "torch": "torch" in sys.modules,
    }


def main(argv: list[str]) -> None:
    cmd = argv[0]
    if cmd == "index":
        out = index(argv[1], argv[2], "--model" in argv)
    elif cmd == "model":
        out = model()
    elif cmd == "serve":
        out = serve(argv[1], argv[2], argv[3])
    else:
        raise SystemExit(f"unknown job {cmd}")
    print(json.dumps(out))


if __name__ == "__main__":
    main(sys.argv[1:])
