"""Export the golden sets' dense-leg inputs from built indexes, for scoring models offline
(``training/dscore.py``) without building an index per model.

    python -m training export-eval --db-dir EVAL_DBS --out DIR evals/*.toml [--vectors]

Writes ``DIR/evaldata.json.gz``: per set, every distinct text the index embeds (chunk
bodies, headers and windows, built by the same functions the indexer uses), the chunks
(path, language, lines, their body/header/window text numbers) and the cases (the query as
the dense leg embeds it, kind, half, the chunks that answer it, and the chunks a case's
``lang``/``path_prefix`` allows). With ``--vectors``, ``DIR/vectors.npz`` holds the index's
own vectors of those texts (fp16), so a query-side change can be scored without embedding
a single chunk. The indexes must be built (``training/eval_golden.py`` builds them).
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
import tempfile
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent


def export_set(ix, root: Path, gs, config) -> tuple[dict, list[int]]:
    """(the set's record, the embedding id of each of its texts)."""
    from scrydb.paths import repo_name
    from scrydb.search.query import dense_text
    from scrydb.sync import texts as model_texts

    s = ix.store
    cfg = config.index
    repo = repo_name(ix.root)  # the name the index embedded (sync/texts.py)
    texts: list[str] = []
    ids: list[int] = []
    number: dict[int, int] = {}

    def tid(eid: int | None, text: str) -> int:
        if eid is None:
            return -1
        if eid not in number:
            number[eid] = len(texts)
            texts.append(text)
            ids.append(eid)
        return number[eid]

    wins: dict[int, list[tuple[int, int | None]]] = {}
    for cid, seq, eid in s.rows("SELECT chunk_id, seq, emb_id FROM chunk_windows ORDER BY 1, 2"):
        wins.setdefault(cid, []).append((seq, eid))
    chunks = []
    for cid, path, lang, a, b, kind, sym, content, eid, hid in s.rows(
        "SELECT c.id, f.path, f.lang, c.start_line, c.end_line, c.kind, c.symbol, c.content, "
        "c.emb_id, c.head_emb_id FROM chunks c JOIN files f ON f.id = c.file_id ORDER BY c.id"
    ):
        bi = tid(eid, model_texts.body_text(repo, path, sym, content, cfg.embed_max_chars))
        hi = tid(hid, model_texts.head_text(path, sym, kind, content))
        # windows and the comment view, as the index derived them
        views = model_texts.view_texts_of(repo, path, sym, content, cfg)
        wl = [
            tid(weid, views[seq])
            for seq, weid in wins.get(cid, [])
            if weid is not None and seq in views
        ]
        chunks.append([path, lang, a, b, bi, hi, wl])
    cases = []
    for c in gs.cases:
        rel = [
            i
            for i, ch in enumerate(chunks)
            if any(t.matches(ch[0], ch[2], ch[3]) for t in c.targets)
        ]
        allowed = None
        if c.lang or c.path_prefix:
            prefix = (c.path_prefix or "").rstrip("/")
            allowed = [
                i
                for i, ch in enumerate(chunks)
                if (not c.lang or ch[1] == c.lang) and ch[0].startswith(prefix)
            ]
        cases.append(
            {
                "q": dense_text(c.query),
                "query": c.query,
                "kind": c.kind,
                "half": c.half,
                "rel": rel,
                "allowed": allowed,
            }
        )
    return {"texts": texts, "chunks": chunks, "cases": cases}, ids


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("cases", nargs="+", help="golden-set files")
    ap.add_argument("--db-dir", required=True, help="where eval_golden.py built the indexes")
    ap.add_argument("--out", required=True)
    ap.add_argument("--model", default="scry-code-minilm", help="the model the indexes hold")
    ap.add_argument("--vectors", action="store_true", help="also the index's own vectors")
    args = ap.parse_args()

    import scrydb
    from scrydb import evaluate
    from scrydb.config import find_config
    from scrydb.store.vectors import read_rows

    cfg = Path(tempfile.mkdtemp(prefix="scry-export-")) / "scry.toml"
    cfg.write_text(f'[embed]\nmodel = "{args.model}"\n')
    ev = evaluate.Evaluator(db_dir=args.db_dir)
    data: dict = {"sets": {}}
    vecs: dict[str, np.ndarray] = {}
    for f in args.cases:
        gs = evaluate.load_set(f)
        root = ev.corpus_of(gs)
        db = Path(args.db_dir) / evaluate.db_name(gs.name, root)
        if not db.exists():
            print(f"{f}: no index at {db} (build it with eval_golden.py)", file=sys.stderr)
            return 1
        with scrydb.open(root, db=db, config=str(cfg), readonly=True) as ix:
            rec, ids = export_set(ix, root, gs, find_config(root, str(cfg)))
            data["sets"][gs.name] = rec
            if args.vectors:
                rowids, mat = read_rows(ix.store, ix.store.vec_dim() or 0, None)
                pos = {int(e): i for i, e in enumerate(rowids)}
                vecs[gs.name] = mat[[pos[e] for e in ids]].astype(np.float16)
        print(
            f"{gs.name}: {len(rec['texts'])} texts, {len(rec['chunks'])} chunks, "
            f"{len(rec['cases'])} cases",
            file=sys.stderr,
        )
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    with gzip.open(out / "evaldata.json.gz", "wt", encoding="utf-8") as fh:
        json.dump(data, fh)
    if args.vectors:
        np.savez(out / "vectors.npz", **vecs)  # type: ignore[arg-type]
    return 0


if __name__ == "__main__":
    sys.exit(main())
