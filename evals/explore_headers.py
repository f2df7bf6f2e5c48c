"""Exploration: does a second, header-shaped vector per chunk help the dense leg?

Reads the indexes ``scry eval --db-dir DIR`` left, embeds every chunk's header
(scrydb.chunk.header) with the index's model, and scores each golden case's dense ranking
by body cosine alone, by the better of body and header, and by mixes of the two.

    python evals/explore_headers.py --db-dir DIR [--half dev] evals/*.toml
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

import numpy as np

import scrydb
from scrydb.chunk.header import header_parts
from scrydb.evaluate import Evaluator, db_name, load_set, only_half, score_case


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("sets", nargs="+")
    ap.add_argument("--db-dir", required=True)
    ap.add_argument("--half", default=None)
    ap.add_argument("--k", type=int, default=10)
    args = ap.parse_args()
    ev = Evaluator(k=args.k)
    modes = ["body", "head", "max", "mix.25", "mix.5", "max+.1mix"]
    totals: dict[str, dict[str, list[float]]] = {}
    for f in args.sets:
        gs = load_set(f)
        if args.half:
            gs = only_half(gs, args.half)
        root = ev.corpus_of(gs)
        db = Path(args.db_dir) / db_name(gs.name, root)
        with scrydb.open(root, db=db) as ix:
            s = ix.store
            rows = s.rows(
                "SELECT c.id, f.path, c.start_line, c.end_line, c.symbol, c.kind, c.content, "
                "c.emb_id FROM chunks c JOIN files f ON f.id = c.file_id WHERE c.emb_id IS NOT NULL"
            )
            vec = {
                int(r[0]): np.frombuffer(r[1], dtype=np.float32)
                for r in s.rows("SELECT rowid, embedding FROM vec_float")
            }
            body = np.stack([vec[int(r[7])] for r in rows])
            keep = os.environ.get("HEAD_PARTS", "name,doc,signature,path").split(",")
            heads = []
            for r in rows:
                parts = header_parts(r[1], r[4], r[5], r[6])
                text = "\n".join(parts[k] for k in keep if parts.get(k))
                heads.append(text if (parts["name"] or parts["doc"]) else None)
            emb = ix.embedder()
            if os.environ.get("BODY_PREFIX"):
                # The body re-embedded with the header's words in place of the context line.
                t1 = time.perf_counter()
                body = emb.embed_documents(
                    [
                        (h + "\n" if h else f"{r[1]}\n") + r[6][:1500]
                        for h, r in zip(heads, rows, strict=True)
                    ]
                )
                print(f"  bodies re-embedded in {time.perf_counter() - t1:.1f}s")
            idx = [i for i, h in enumerate(heads) if h]
            t0 = time.perf_counter()
            hv = emb.embed_documents([heads[i] for i in idx])
            dt = time.perf_counter() - t0
            head = np.zeros_like(body)
            head[idx] = hv
            has = np.zeros(len(rows), dtype=bool)
            has[idx] = True
            qv = emb.embed_queries([c.query for c in gs.cases])
        print(f"{gs.name}: {len(rows)} chunks, {len(idx)} headers embedded in {dt:.1f}s")
        for c, q in zip(gs.cases, qv, strict=True):
            b = body @ q
            h = np.where(has, head @ q, -1.0)
            scores = {
                "body": b,
                "head": np.where(has, h, b),
                "max": np.maximum(b, h),
                "mix.25": np.where(has, 0.75 * b + 0.25 * h, b),
                "mix.5": np.where(has, 0.5 * b + 0.5 * h, b),
                "max+.1mix": np.maximum(b, h) + 0.1 * np.where(has, h, b),
            }
            for m in modes:
                order = np.argsort(-scores[m])[: args.k]
                hits = [(rows[i][1], rows[i][2], rows[i][3]) for i in order]
                first, _ = score_case(c, hits, args.k)
                rr = 1.0 / first if first else 0.0
                totals.setdefault(m, {}).setdefault(c.kind, []).append(rr)
                totals[m].setdefault("all", []).append(rr)
                totals[m].setdefault(gs.name, []).append(rr)
    keys = sorted({k for m in totals.values() for k in m})
    print(f"{'mode':10}" + "".join(f"{k[:10]:>11}" for k in keys))
    for m in modes:
        print(f"{m:10}" + "".join(f"{np.mean(totals[m][k]):11.3f}" for k in keys))


if __name__ == "__main__":
    main()
