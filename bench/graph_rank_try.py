"""Graph signals in the ranking, tried (issue 44, item 5): runs ``scry eval`` with one
extra vote cast after the path and content priors, so each try in evals/RESULTS.md can be
repeated. The shipped graph vote (``graph.connected_votes``: ``resolved W 10 called``
below, kept) is switched off while a try runs, so every try is measured against the
ranker without it (the baseline of the tries).

    python bench/graph_rank_try.py central 0.1 -- evals/*.toml --legs --db-dir DIR --save F.json
    python bench/graph_rank_try.py pagerank 0.5 -- ...
    python bench/graph_rank_try.py connected 0.5 10 calls -- ...

Votes (weight W as rank-1 votes, the unit of rank.SCORE_VOTE; the learned fusion sees
them through its "hand" feature, as it does the report's votes):

* ``central W``: a centrality prior from the index at query time, over the candidates
  only: the most uses (calls, decorators, bases; by the name as written) of a name the
  chunk defines, as ``W * log1p(n) / log1p(the pool's most)``.
* ``pagerank W``: the same from the PageRank of the chunk's best definition over the
  resolved reference graph (``repomap.ranked_definitions``, computed once per index per
  process: what a stored prior would give), ``W * log1p(1000 r) / log1p(1000 max r)``.
* ``connected W DEPTH [calls|called|both]``: a candidate that calls a chunk both legs rank
  in their top DEPTH ("calls"), that such a chunk calls ("called"), or either (default),
  gets W; by name (``store/graph.neighbours``).
* ``resolved W DEPTH [calls|called|both]``: the same over resolved edges (search/graph.py,
  confidence >= 0.7) instead of names.
"""

from __future__ import annotations

import math
import sys
from typing import Any

from scrydb.chunk.specs import SYMBOL_ONLY_KINDS
from scrydb.cli import main as scry_main
from scrydb.search import graph, learned, rank, repomap, votes
from scrydb.store import Store
from scrydb.store import graph as g

_PAGERANK: dict[str, dict[int, float]] = {}


def central(store: Store, cands: dict[int, rank.Candidate], w: float) -> None:
    """The in-degree prior (module docstring)."""
    counts = g.use_counts(store, list(cands), tuple(SYMBOL_ONLY_KINDS))
    top = max(counts.values(), default=0)
    for cid, n in counts.items():
        if n > 0 and top > 0:
            cands[cid].votes["central"] = w * math.log1p(n) / math.log1p(top)


def pagerank(store: Store, cands: dict[int, rank.Candidate], w: float) -> None:
    """The PageRank prior (module docstring)."""
    key = str(store.path)
    if key not in _PAGERANK:
        defs, ranks = repomap.ranked_definitions(store)
        best: dict[int, float] = {}
        for d, r in zip(defs, ranks.tolist(), strict=True):
            best[d.chunk_id] = max(best.get(d.chunk_id, 0.0), r)
        _PAGERANK[key] = best
    got = {cid: _PAGERANK[key][cid] for cid in cands if cid in _PAGERANK[key]}
    top = max(got.values(), default=0.0)
    for cid, r in got.items():
        if top > 0:
            cands[cid].votes["central"] = w * math.log1p(1000 * r) / math.log1p(1000 * top)


def connected(
    store: Store, cands: dict[int, rank.Candidate], w: float, depth: int, direction: str
) -> None:
    """The "connected to a strong hit" vote (module docstring)."""
    strong = [
        cid
        for cid, c in cands.items()
        if c.lex_rank is not None
        and c.lex_rank <= depth
        and c.dense_rank is not None
        and c.dense_rank <= depth
    ]
    calls, called = g.neighbours(store, strong, list(cands))
    chosen = calls if direction == "calls" else called if direction == "called" else calls | called
    for cid in chosen:
        cands[cid].votes["connected"] = w


def resolved(
    store: Store, cands: dict[int, rank.Candidate], w: float, depth: int, direction: str
) -> None:
    """The "connected" vote over resolved edges (module docstring)."""
    strong = {
        cid
        for cid, c in cands.items()
        if c.lex_rank is not None
        and c.lex_rank <= depth
        and c.dense_rank is not None
        and c.dense_rank <= depth
    }
    if not strong:
        return
    gr = graph.Graph(store)
    calls: set[int] = set()
    called: set[int] = set()
    for cid in cands:
        for ref in g.refs_of_chunk(store, cid):
            if ref[4] not in graph.CALL_KINDS:
                continue
            for target, conf in gr.resolve(ref):
                if conf < graph.UNIQUE or target.chunk_id == cid:
                    continue
                if cid in strong and target.chunk_id in cands:
                    called.add(target.chunk_id)
                if target.chunk_id in strong:
                    calls.add(cid)
    chosen = calls if direction == "calls" else called if direction == "called" else calls | called
    for cid in chosen:
        cands[cid].votes["connected"] = w


def install(args: list[str]) -> None:
    """Cast the vote ``args`` name after the path and content priors of every query."""
    kind, w = args[0], float(args[1])
    original = votes.path_signals

    def with_graph(store: Store, config: Any, q: Any, cands: Any, memo: Any) -> None:
        original(store, config, q, cands, memo)
        if kind == "central":
            central(store, cands, w)
        elif kind == "pagerank":
            pagerank(store, cands, w)
        elif kind == "connected":
            connected(store, cands, w, int(args[2]), args[3] if len(args) > 3 else "both")
        elif kind == "resolved":
            resolved(store, cands, w, int(args[2]), args[3] if len(args) > 3 else "both")
        else:
            raise SystemExit(f"graph_rank_try: unknown vote {kind!r}")

    votes.path_signals = with_graph  # type: ignore[assignment]
    graph.connected_votes = lambda store, cands: None  # type: ignore[assignment]
    rank.VOTE_NAMES = rank.VOTE_NAMES | {"central", "connected"}  # type: ignore[misc]
    learned.UNUSED_VOTES.update(central="tried", connected="tried")


def main() -> None:
    """``graph_rank_try.py VOTE ARGS -- SCRY EVAL ARGS`` (module docstring)."""
    if "--" not in sys.argv:
        raise SystemExit(__doc__)
    cut = sys.argv.index("--")
    install(sys.argv[1:cut])
    scry_main(["eval", *sys.argv[cut + 1 :]])


if __name__ == "__main__":
    main()
