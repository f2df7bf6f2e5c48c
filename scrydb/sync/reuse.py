"""Where a vector may come from before the model is asked: the per-user shared cache
(``store/vcache.py``: keyed by the exact text the model embeds, so another worktree,
clone or branch of the repository pays nothing for the texts it shares) and a seed index
(``scry index --seed OTHER.db``: an index of the same fingerprint built elsewhere, by CI
or a colleague, read by the index's own text hashes as the index reuses its own)."""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from scrydb.config import Config
from scrydb.errors import ScryError
from scrydb.paths import cache_dir, expand_user
from scrydb.store import Store, lookup
from scrydb.store.vcache import VectorCache, cache_disabled_by_env, text_key
from scrydb.sync.base import ORIGIN_CACHE, ORIGIN_SEED, embed_recipe

#: Hashes per seed lookup statement.
SEED_CHUNK = 2048


def vectors_identity(embedder_id: str | None, recipe: str | None) -> str:
    """What decides a stored vector: the model's id and the embedded-text recipe (the
    fingerprint a seed must share, and a shared cache file is named by)."""
    return f"{embedder_id} | {recipe}"


def shared_cache_dir() -> Path:
    """Where the shared vector cache lives: ``<cache directory>/vectors``."""
    return cache_dir() / "vectors"


def shared_cache_enabled(config: Config) -> bool:
    """Whether this sync may use the shared cache (config and ``SCRY_SHARED_CACHE``)."""
    return config.index.shared_cache and not cache_disabled_by_env()


def open_shared_cache(
    config: Config,
    embedder_id: str,
    dim: int,
    warn: Callable[[str], None],
    *,
    readonly: bool = False,
) -> VectorCache | None:
    """The shared cache file of this fingerprint (opened on first use), or None when it
    is turned off. A model named by a directory is keyed by the directory too: two model
    folders of one name are two models."""
    if not shared_cache_enabled(config):
        return None
    identity = f"{vectors_identity(embedder_id, embed_recipe(config))} | {dim}d"
    model = Path(os.path.expanduser(config.embed.model))
    if config.embed.provider == "local" and model.is_dir():
        identity += f" | {model.resolve()} | {_weights_stamp(model)}"
    elif config.embed.provider != "local":
        identity += f" | {config.embed.url}"
    return VectorCache(
        shared_cache_dir(),
        identity,
        dim,
        int(config.index.shared_cache_mb * 1024 * 1024),
        warn=warn,
        readonly=readonly,
    )


def make_reuse(
    config: Config,
    embedder_id: str | None,
    dim: int,
    seed: SeedIndex | None,
    warn: Callable[[str], None],
) -> Reuse:
    """The sources one embedding run tries before its model."""
    cache = open_shared_cache(config, embedder_id, dim, warn) if embedder_id else None
    return Reuse(cache, seed, dim)


def _weights_stamp(model_dir: Path) -> str:
    """Size and mtime of a model directory's weight files: a model retrained in place
    (same folder, same name) gets a cache file of its own, never the old vectors."""
    parts = []
    for p in sorted(model_dir.glob("*.safetensors")) + sorted(model_dir.glob("*.bin")):
        with contextlib.suppress(OSError):
            st = p.stat()
            parts.append(f"{p.name}:{st.st_size}:{st.st_mtime_ns}")
    return ",".join(parts)


class SeedIndex:
    """Another scrydb index whose vectors this one may take: same fingerprint (model and
    embedded-text recipe) and dimension, checked before anything changes."""

    def __init__(self, path: Path, store: Store) -> None:
        self.path = path
        self.store = store
        self.taken = 0

    @classmethod
    def open(
        cls, path: str | os.PathLike[str], config: Config, embedder_id: str, own_db: Path
    ) -> SeedIndex:
        """Open ``path`` read-only; a missing file, a foreign file or one from another
        fingerprint is a ScryError that names both fingerprints."""
        p = expand_user(str(path)).resolve()
        if not p.is_file():
            raise ScryError(f"seed index {path} does not exist")
        if p == own_db.resolve():
            raise ScryError(f"seed index {path} is this index itself")
        try:
            store = Store(p, readonly=True)
        except ScryError as e:
            raise ScryError(f"cannot use seed index {path}: {e}") from None
        try:
            theirs = vectors_identity(store.meta("embedder"), store.meta("embed_text"))
            mine = vectors_identity(embedder_id, embed_recipe(config))
            if store.meta("embedder") is None or not store.has_table("vec_float"):
                raise ScryError(f"seed index {path} holds no vectors")
            if theirs != mine:
                raise ScryError(
                    f"seed index {path} was built with {theirs}, this index uses {mine}: "
                    "its vectors do not fit"
                )
        except BaseException:
            store.close()
            raise
        return cls(p, store)

    @property
    def dim(self) -> int | None:
        """The seed's vector dimension."""
        return self.store.vec_dim()

    def get(self, hashes: list[str]) -> dict[str, np.ndarray]:
        """The seed's vectors among the index hashes ``hashes`` (body, header, window)."""
        found: dict[str, np.ndarray] = {}
        for i in range(0, len(hashes), SEED_CHUNK):
            found.update(lookup.vectors_by_hash(self.store, hashes[i : i + SEED_CHUNK]))
        return found

    def close(self) -> None:
        """Close the seed file."""
        with contextlib.suppress(Exception):
            self.store.close()


class Reuse:
    """The sources a sync tries before the model, in order: the shared cache, then the
    seed. ``take`` splits pending (hash, text) items into found vectors and the rest;
    ``give`` puts the model's vectors into the cache."""

    def __init__(self, cache: VectorCache | None, seed: SeedIndex | None, dim: int) -> None:
        self.cache = cache
        self.seed = seed if seed is not None and seed.dim == dim else None
        self.dim = dim
        self._seconds = 0.0

    @property
    def seconds(self) -> float:
        """Time spent on the shared cache: hashing texts, lookups, writes."""
        return self._seconds + (self.cache.stats.seconds if self.cache is not None else 0.0)

    def take(
        self, items: list[tuple[str, str]]
    ) -> tuple[list[tuple[str, np.ndarray, int]], list[tuple[str, str]]]:
        """(found: (hash, vector, origin), rest: the items still for the model)."""
        found: list[tuple[str, np.ndarray, int]] = []
        rest = items
        if self.cache is not None and rest:
            t0 = time.perf_counter()
            keys = [text_key(t) for _h, t in rest]
            self._seconds += time.perf_counter() - t0
            hits = self.cache.get(keys)
            if hits:
                left = []
                for (h, t), k in zip(rest, keys, strict=True):
                    v = hits.get(k)
                    if v is not None:
                        found.append((h, v, ORIGIN_CACHE))
                    else:
                        left.append((h, t))
                rest = left
        if self.seed is not None and rest:
            seeded = {
                h: v
                for h, v in self.seed.get([h for h, _t in rest]).items()
                if v.shape == (self.dim,)
            }
            if seeded:
                found.extend((h, seeded[h], ORIGIN_SEED) for h, _t in rest if h in seeded)
                rest = [(h, t) for h, t in rest if h not in seeded]
        return found, rest

    def give(self, items: list[tuple[str, str]], vectors: np.ndarray) -> None:
        """Remember the model's vectors of ``items`` in the shared cache."""
        if self.cache is not None:
            t0 = time.perf_counter()
            keys = [text_key(t) for _h, t in items]
            self._seconds += time.perf_counter() - t0
            self.cache.put(keys, vectors)

    def close(self) -> None:
        """Close the cache file (the seed is closed by whoever opened it)."""
        if self.cache is not None:
            self.cache.close()
