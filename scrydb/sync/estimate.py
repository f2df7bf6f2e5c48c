"""What a first (or full) index will cost, from a sample of the tree."""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

from scrydb.config import Config
from scrydb.paths import repo_name
from scrydb.store.vcache import VectorCache, text_key
from scrydb.sync.base import ESTIMATE_SAMPLE, text_hash
from scrydb.sync.read import read_and_chunk
from scrydb.sync.texts import body_text
from scrydb.walk import walk


@dataclass
class Estimate:
    """What a first (or full) index of a tree will cost, from a sample of its files."""

    files: int
    bytes: int
    chunks: int  #: expected chunk rows
    texts: int  #: expected distinct chunk texts (what the model embeds)
    seconds_lexical: float  #: until lexical search works
    seconds_embed: float  #: embedding at ``rate``
    rate: float  #: texts/s
    rate_measured: bool  #: measured on this machine (else the documented default)
    #: share of the sample's chunk texts already in the shared vector cache (0: none, or
    #: no cache): the model embeds only the rest
    cached: float = 0.0


def estimate(
    root: Path,
    config: Config,
    rate: float,
    rate_measured: bool,
    cache: VectorCache | None = None,
) -> Estimate:
    """Walk ``root`` (stat only), read and chunk a sample of its files as the index does
    (``read.read_and_chunk``: the same skip rules), and extrapolate; with ``cache``, the
    sample's chunk texts are looked up there (another worktree or clone of the repository
    has most of them)."""
    files = walk(root, config.index).files
    total = sum(f.size for f in files)
    step = max(1, len(files) // ESTIMATE_SAMPLE)
    sample = files[::step][:ESTIMATE_SAMPLE]
    t0 = time.perf_counter()
    s_bytes = s_chunks = 0
    hashes: set[str] = set()
    s_texts = 0
    keys: list[bytes] = []
    name = repo_name(root)
    cut = config.index.embed_max_chars
    for f in sample:
        got = read_and_chunk(root, f, config.index)  # the index's read and skip rules
        s_bytes += got.size
        s_chunks += len(got.chunks)
        for c in got.chunks:
            h = text_hash(c.content)
            if h not in hashes:
                hashes.add(h)
                s_texts += 1
                if cache is not None:
                    keys.append(text_key(body_text(name, f.path, c.symbol, c.content, cut)))
    cached = len(cache.get(keys)) / len(keys) if cache is not None and keys else 0.0
    elapsed = time.perf_counter() - t0
    scale = total / s_bytes if s_bytes else 0.0
    chunks = round(s_chunks * scale)
    texts = round(s_texts * scale)
    # Writing the rows costs about as much again as chunking; the sample's one-time costs
    # (loading grammars) make up for it on a tree of any size (measured: 10k files).
    return Estimate(
        files=len(files),
        bytes=total,
        chunks=chunks,
        texts=texts,
        seconds_lexical=elapsed * scale,
        seconds_embed=texts * (1 - cached) / rate if rate > 0 else 0.0,
        rate=rate,
        rate_measured=rate_measured,
        cached=cached,
    )
