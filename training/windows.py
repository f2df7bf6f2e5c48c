"""Probe: extra "window" vectors for chunks longer than the model's view (since built:
scrydb/chunk/windows.py; this probe turns the built ones off and adds its own).

A chunk's body vector sees its first 256 tokens (the header line and about 800 characters
of code); on the golden sets' corpora half the chunks are longer. This probe embeds, for
every chunk longer than ``--min-windows`` views, up to ``--max-windows`` more windows of
the chunk (each: the chunk's embed header line + the next ~250 tokens of its text, the
windows overlapping by ``--overlap`` tokens), and scores a chunk in the dense leg by the
best of its body and window cosines (the header vector mixed in as shipped). Then it runs
``scry eval``'s evaluator over the golden sets, per set, kind and leg, like
``eval_golden.py``.

    python training/windows.py --db-dir /work/evalrun/db-ship --half dev \\
        --save dev-win.json evals/*.toml                      # ~5 min of embedding, cached
    python training/windows.py ... --max-windows 0            # the same run without windows

It wraps ``SearchEngine._dense`` (the shipped dense leg runs unchanged, then the window
cosines, an exact scan of the windows, raise a candidate's score or add one); nothing in
scrydb changes. The index must already exist (``eval_golden.py`` with the same --db-dir).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parent.parent
for _p in (REPO, REPO / "training"):
    if str(_p) not in sys.path:
        sys.path.insert(0, str(_p))

#: Tokens of chunk text in one window (the model sees 256 with [CLS], [SEP], the header).
VIEW = 250


def window_texts(
    tok: Any, header: str, content: str, max_windows: int, min_windows: int, overlap: int
) -> list[str]:
    """The windows of one chunk past the part its body vector already sees (none when the
    chunk would get fewer than ``min_windows``)."""
    offs = tok(content, add_special_tokens=False, return_offsets_mapping=True)["offset_mapping"]
    first = VIEW - len(tok(header, add_special_tokens=False)["input_ids"])
    out: list[str] = []
    start = first - overlap
    while start < len(offs) - 20 and len(out) < max_windows:
        end = min(len(offs) - 1, start + first)
        out.append(header + content[offs[start][0] : offs[end][1]])
        start += first - overlap
    if len(out) < min_windows:
        return []
    return out


class Windows:
    """Window vectors per index file, built on first use and cached on disk."""

    def __init__(self, args: argparse.Namespace, embedder: Any) -> None:
        self.args = args
        self.embedder = embedder
        self.by_db: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        self.counts: dict[str, tuple[int, int]] = {}  # db -> (chunks, windows)
        from transformers import AutoTokenizer

        from scrydb.embed.local import resolve_model_dir

        self.tok = AutoTokenizer.from_pretrained(str(resolve_model_dir(args.model)[0]))

    def get(self, store: Any, repo_name: str) -> tuple[np.ndarray, np.ndarray]:
        """(chunk ids, window vectors) of one index."""
        key = str(store.path)
        if key in self.by_db:
            return self.by_db[key]
        from scrydb.chunk.windows import WINDOWS_VERSION
        from scrydb.chunk.windows import window_texts as char_windows
        from scrydb.sync.base import embed_header

        a = self.args
        rows = store.rows(
            "SELECT c.id, f.path, c.symbol, c.content FROM chunks c JOIN files f ON f.id = c.file_id"
        )
        recipe = f"{a.model}:{a.max_windows}:{a.min_windows}:{a.overlap}:{VIEW}:{store.path.name}"
        if a.rule == "chars":
            recipe += f":chars{WINDOWS_VERSION}"
        cache = Path(a.cache) / (
            hashlib.blake2b(recipe.encode(), digest_size=8).hexdigest() + ".npz"
        )
        if cache.exists():
            z = np.load(cache)
            ids, vec = z["ids"], z["vec"]
        else:
            texts: list[str] = []
            owner: list[int] = []
            for cid, path, symbol, content in rows:
                if a.rule == "chars":  # the rule scrydb ships (chunk/windows.py)
                    head = embed_header(repo_name, path, symbol)
                    for t in char_windows(content):
                        texts.append(head + t)
                        owner.append(cid)
                    continue
                for t in window_texts(
                    self.tok,
                    embed_header(repo_name, path, symbol),
                    content,
                    a.max_windows,
                    a.min_windows,
                    a.overlap,
                ):
                    texts.append(t)
                    owner.append(cid)
            ids = np.asarray(owner, dtype=np.int64)
            vec = (
                self.embedder.embed_documents(texts).astype(np.float32)
                if texts
                else np.zeros((0, 1), np.float32)
            )
            cache.parent.mkdir(parents=True, exist_ok=True)
            np.savez(cache, ids=ids, vec=vec)
        self.counts[key] = (len(rows), len(ids))
        self.by_db[key] = (ids, vec)
        return ids, vec


def install(windows: Windows) -> None:
    """Wrap the dense leg: a candidate's score becomes the best of its shipped score and
    its windows' cosines; windows scoring above the pool's last add their chunk."""
    from scrydb.search import engine, rank

    orig = engine.SearchEngine._dense

    def dense(self: Any, q: Any, filt: Any, pool: int, cands: Any, res: Any) -> bool:
        ok = orig(self, q, filt, pool, cands, res)
        if not ok or filt.active:
            return ok
        ids, vec = windows.get(self.store, self.store.path.name.rsplit("-", 1)[0])
        if not len(ids):
            return ok
        cos = vec @ self.qvectors.vector(q.text, res)
        best: dict[int, float] = {}
        for cid, s in zip(ids.tolist(), cos.tolist(), strict=True):
            if s > best.get(cid, -2.0):
                best[cid] = s
        scored = {cid: c.dense_score for cid, c in cands.items() if c.dense_score is not None}
        floor = min(scored.values()) if len(scored) >= pool else -2.0
        for cid, s in best.items():
            if cid in scored:
                scored[cid] = max(scored[cid], s)
            elif s > floor:
                scored[cid] = s
        for c in cands.values():
            c.dense_rank = c.dense_score = None
        for r, (cid, s) in enumerate(sorted(scored.items(), key=lambda t: -t[1])[:pool], 1):
            c = cands.setdefault(cid, rank.Candidate(cid))
            c.dense_rank, c.dense_score = r, s
        return ok

    engine.SearchEngine._dense = dense


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("cases", nargs="+")
    ap.add_argument("--model", default="scry-code-minilm")
    ap.add_argument("--fusion", default="learned", choices=["learned", "hand"])
    ap.add_argument("--db-dir", required=True)
    ap.add_argument("--save", required=True)
    ap.add_argument("--half", default="dev", choices=["all", "dev", "test"])
    ap.add_argument("--max-windows", type=int, default=3, help="0: the shipped dense leg")
    ap.add_argument(
        "--min-windows", type=int, default=1, help="only chunks long enough for this many"
    )
    ap.add_argument("--overlap", type=int, default=40, help="tokens two windows share")
    ap.add_argument(
        "--rule",
        default="tokens",
        choices=["tokens", "chars"],
        help="chars: scrydb's own window rule (chunk/windows.py; the --*windows/--overlap "
        "options then do not apply)",
    )
    ap.add_argument("--cache", default="/work/evalrun/windows")
    args = ap.parse_args()

    from eval_golden import run_sets

    from scrydb import evaluate
    from scrydb.config import EmbedConfig
    from scrydb.embed import make_embedder

    windows = Windows(args, make_embedder(EmbedConfig(model=args.model)))
    if args.max_windows > 0:
        install(windows)
    report = run_sets(
        args.cases,
        f'[embed]\nmodel = "{args.model}"\n[search]\nfusion = "{args.fusion}"\n'
        "[index]\nwindow_vectors = false\n",  # the shipped windows off: the probe adds its own
        args.db_dir,
        args.half,
    )
    n_chunks = sum(c for c, _ in windows.counts.values())
    n_win = sum(w for _, w in windows.counts.values())
    report["windows"] = {
        "max_windows": args.max_windows,
        "min_windows": args.min_windows,
        "overlap": args.overlap,
        "chunks": n_chunks,
        "windows": n_win,
        "extra_embeddings": round(n_win / max(1, n_chunks), 3),
    }
    report["half"] = args.half
    Path(args.save).write_text(json.dumps(report, indent=1), encoding="utf-8")
    print(evaluate.render(report, None, misses=0))
    print(json.dumps(report["windows"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
