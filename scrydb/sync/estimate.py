"""What a first (or full) index will cost, from a sample of the tree: the texts the model
will embed (bodies, headers, windows and comment views, distinct by the keys the index
stores them under, less those the shared vector cache holds) at the rate measured here."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path

from scrydb.config import Config
from scrydb.paths import repo_name
from scrydb.store.vcache import VectorCache, text_key
from scrydb.sync.base import ESTIMATE_SAMPLE
from scrydb.sync.read import read_and_chunk
from scrydb.sync.texts import chunk_texts
from scrydb.walk import walk


@dataclass
class Estimate:
    """What a first (or full) index of a tree will cost, from a sample of its files."""

    files: int
    bytes: int
    chunks: int  #: expected chunk rows
    #: expected distinct texts the index embeds (every kind), cached or not
    texts: int
    seconds_lexical: float  #: until lexical search works
    seconds_embed: float  #: embedding the texts not cached, at ``rate``
    rate: float  #: texts/s
    rate_measured: bool  #: measured on this machine (else the documented default)
    #: share of the sample's texts already in the shared vector cache (0: none, or no
    #: cache): the model embeds only the rest
    cached: float = 0.0
    #: expected distinct texts per kind ("body", "head", "window")
    kinds: dict[str, int] = field(default_factory=dict)

    @property
    def to_embed(self) -> int:
        """Texts the model is expected to embed (those the cache does not hold)."""
        return round(self.texts * (1 - self.cached))


def estimate(
    root: Path,
    config: Config,
    rate: float,
    rate_measured: bool,
    cache: VectorCache | None = None,
) -> Estimate:
    """Walk ``root`` (stat only), read and chunk a sample of its files as the index does
    (``read.read_and_chunk``: the same skip rules), build every text the index would
    embed for their chunks (``texts.chunk_texts``) and extrapolate by bytes; with
    ``cache``, the sample's texts are looked up there (another worktree or clone of the
    repository has most of them)."""
    files = walk(root, config.index).files
    total = sum(f.size for f in files)
    n = len(files)
    # Spread evenly over the whole (sorted) tree: the first ESTIMATE_SAMPLE files alone
    # would leave out its last folders (tests/, training/), which differ in texts per byte.
    sample = (
        [files[i * n // ESTIMATE_SAMPLE] for i in range(ESTIMATE_SAMPLE)]
        if n > ESTIMATE_SAMPLE
        else files
    )
    t0 = time.perf_counter()
    s_bytes = s_chunks = 0
    seen: set[tuple[str, str]] = set()  # (kind, key): one vector each
    kinds: dict[str, int] = {}
    keys: list[bytes] = []
    name = repo_name(root)
    for f in sample:
        got = read_and_chunk(root, f, config.index)
        s_bytes += got.size
        s_chunks += len(got.chunks)
        for c in got.chunks:
            for t in chunk_texts(name, f.path, c.symbol, c.kind, c.content, config.index):
                if (t.kind, t.key) in seen:
                    continue
                seen.add((t.kind, t.key))
                kinds[t.kind] = kinds.get(t.kind, 0) + 1
                if cache is not None:
                    keys.append(text_key(t.text))
    cached = len(cache.get(keys)) / len(keys) if cache is not None and keys else 0.0
    elapsed = time.perf_counter() - t0
    scale = total / s_bytes if s_bytes else 0.0
    texts = round(len(seen) * scale)
    # Writing the rows costs about as much again as chunking; the sample's one-time costs
    # (loading grammars) make up for it on a tree of any size (measured: 10k files).
    return Estimate(
        files=len(files),
        bytes=total,
        chunks=round(s_chunks * scale),
        texts=texts,
        seconds_lexical=elapsed * scale,
        seconds_embed=texts * (1 - cached) / rate if rate > 0 else 0.0,
        rate=rate,
        rate_measured=rate_measured,
        cached=cached,
        kinds={k: round(v * scale) for k, v in sorted(kinds.items())},
    )
