"""A repository map in the manner of aider's: the most central definitions, ranked by
PageRank over the resolved reference graph (an edge from the definition around a
reference to each definition it resolves to, weighted by confidence), optionally
personalised to a part of the tree or to names the caller gives, listed with their
signatures and fitted to a token budget. What an agent reads first in an unfamiliar
repository."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

import numpy as np

from scrydb.chunk.specs import SYMBOL_ONLY_KINDS
from scrydb.search.graph import CALL_KINDS, Definition, Graph, definition_of
from scrydb.store import Store
from scrydb.store import graph as g

#: PageRank's damping factor (the usual 0.85) and its convergence bound.
DAMPING = 0.85
TOLERANCE = 1e-8
MAX_ITERATIONS = 100
#: Most definitions and references read for one map (a bigger repository is mapped from
#: the first ones, by path).
MAX_NODES = 200_000
MAX_EDGES = 1_000_000
#: Reference kinds that make an edge.
EDGE_KINDS = (*CALL_KINDS, "inherit", "type")
#: Signature lines shown per definition, and characters per line.
SIGNATURE_LINES = 3
SIGNATURE_CHARS = 160
#: Characters per token when fitting the budget (present.CHARS_PER_TOKEN's rule).
CHARS_PER_TOKEN = 3.0


@dataclass
class MapEntry:
    """One definition of the map: where, what, its signature and its rank."""

    path: str
    line: int
    symbol: str
    kind: str
    signature: str
    rank: float

    def to_json(self) -> dict[str, object]:
        """The stable JSON form."""
        return {
            "path": self.path,
            "line": self.line,
            "symbol": self.symbol,
            "kind": self.kind,
            "signature": self.signature,
            "rank": round(self.rank, 6),
        }


def pagerank(
    n: int, src: np.ndarray, dst: np.ndarray, w: np.ndarray, personal: np.ndarray | None
) -> np.ndarray:
    """PageRank of ``n`` nodes over weighted edges (power iteration; dangling nodes give
    their rank by the personalisation vector, uniform without one)."""
    if n == 0:
        return np.zeros(0)
    p = (
        np.full(n, 1.0 / n)
        if personal is None or personal.sum() <= 0
        else personal / personal.sum()
    )
    out = np.bincount(src, weights=w, minlength=n) if len(src) else np.zeros(n)
    norm_w = np.where(out[src] > 0, w / np.maximum(out[src], 1e-12), 0.0) if len(src) else w
    r = p.copy()
    for _ in range(MAX_ITERATIONS):
        flow = np.bincount(dst, weights=r[src] * norm_w, minlength=n) if len(src) else np.zeros(n)
        dangling = r[out <= 0].sum()
        nxt = DAMPING * (flow + dangling * p) + (1 - DAMPING) * p
        if np.abs(nxt - r).sum() < TOLERANCE:
            return nxt
        r = nxt
    return r


def ranked_definitions(
    store: Store, path: str | None = None, names: list[str] | None = None
) -> tuple[list[Definition], np.ndarray]:
    """Every definition (constants and variables aside) and its PageRank over the
    resolved reference graph (an edge per reference, weighted by its confidence),
    personalised to ``path`` or ``names`` when given."""
    defs = [
        definition_of(r)
        for r in g.all_definitions(store, MAX_NODES)
        if r[5] not in SYMBOL_ONLY_KINDS
    ]
    index = {d: i for i, d in enumerate(defs)}
    gr = Graph(store, whole=True)
    src: list[int] = []
    dst: list[int] = []
    wts: list[float] = []
    for ref in g.all_refs(store, EDGE_KINDS, MAX_EDGES):
        here = gr.enclosing(ref[0], ref[5])
        a = index.get(here) if here is not None else None
        if a is None:
            continue
        for target, conf in gr.resolve(ref):
            b = index.get(target)
            if b is not None and b != a:
                src.append(a)
                dst.append(b)
                wts.append(conf)
    personal = _personalisation(defs, path, names)
    ranks = pagerank(
        len(defs), np.asarray(src, dtype=np.int64), np.asarray(dst, dtype=np.int64),
        np.asarray(wts, dtype=np.float64), personal,
    )  # fmt: skip
    return defs, ranks


def repo_map(
    store: Store, path: str | None = None, names: list[str] | None = None, budget: int = 1024
) -> list[MapEntry]:
    """The map's definitions, most central first, fitted to about ``budget`` tokens as
    :func:`format_map` prints them. ``path``: a directory prefix or file the ranking is
    personalised to; ``names``: symbols to personalise to."""
    defs, ranks = ranked_definitions(store, path, names)
    order = np.argsort(-ranks, kind="stable")
    out: list[MapEntry] = []
    used = 0.0
    seen_files: set[str] = set()
    for i in order.tolist():
        d = defs[i]
        sig = signature(store, d)
        cost = (len(sig) + 8 + (0 if d.path in seen_files else len(d.path) + 2)) / CHARS_PER_TOKEN
        if out and used + cost > budget:
            break
        used += cost
        seen_files.add(d.path)
        out.append(MapEntry(d.path, d.line, d.symbol, d.kind, sig, float(ranks[i])))
    return out


def _personalisation(
    defs: list[Definition], path: str | None, names: list[str] | None
) -> np.ndarray | None:
    if not path and not names:
        return None
    p = np.zeros(len(defs))
    prefix = (path or "").strip("/")
    wanted = {n.split(".")[-1].lower() for n in names or []}
    for i, d in enumerate(defs):
        if prefix and (d.path == prefix or d.path.startswith(prefix + "/")):
            p[i] += 1.0
        if wanted and d.symbol.split(".")[-1].lower() in wanted:
            p[i] += 1.0
    return p if p.sum() > 0 else None


def signature(store: Store, d: Definition) -> str:
    """A definition's first lines up to its body's opening (``:`` or ``{``), at most
    SIGNATURE_LINES, whitespace collapsed."""
    got = g.chunk_text(store, d.chunk_id)
    if got is None:
        return d.symbol
    start, content = got
    lines = content.split("\n")[d.line - start :]
    parts: list[str] = []
    for raw in lines[:SIGNATURE_LINES]:
        s = raw.strip()
        if not s:
            continue
        parts.append(s)
        if s.endswith((":", "{", "=>", ";")) or ") {" in s:
            break
    text = " ".join(parts).rstrip("{").rstrip() or d.symbol
    return text[:SIGNATURE_CHARS]


def format_map(entries: list[MapEntry]) -> str:
    """The map as text: files in order of their best definition, each definition's
    signature under its file with its line."""
    by_file: dict[str, list[MapEntry]] = defaultdict(list)
    for e in entries:
        by_file[e.path].append(e)
    out: list[str] = []
    for path, items in by_file.items():
        out.append(f"{path}:")
        for e in sorted(items, key=lambda e: e.line):
            out.append(f"  {e.line:>5}  {e.signature}")
    return "\n".join(out)
