"""The sync: change detection, then the lexical phase, then the embedding phase (see
the package docstring)."""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from scrydb.config import Config
from scrydb.embed import Embedder
from scrydb.errors import ScryError
from scrydb.store import SCHEMA_VERSION, Store, counts, scrydb_version
from scrydb.store import files as indexed_files
from scrydb.sync.base import Progress, SyncReport, _counter_text, fingerprint
from scrydb.sync.changes import detect
from scrydb.sync.embedding import EmbeddingPhase
from scrydb.sync.lexical import LexicalPhase
from scrydb.sync.models import ModelSwitch
from scrydb.sync.read import DECODER_VERSION
from scrydb.sync.reuse import SeedIndex


class Syncer:
    """Brings one store up to date with one working tree.

    ``embedder`` builds the model (called only when there is something to embed);
    ``embedder_id`` is its identity, known without loading it: the fingerprint is
    checked with it even when this sync does not embed. ``exclude`` holds paths (relative
    to the root) that are never indexed: the index's own files when it lives in the tree.
    ``cancel`` is polled between batches; when it returns True the sync stops early,
    leaving a consistent index that the next sync completes.
    """

    def __init__(
        self,
        store: Store,
        root: Path,
        config: Config,
        embedder: Callable[[], Embedder] | None,
        progress: Progress | None = None,
        warn: Callable[[str], None] | None = None,
        *,
        embedder_id: str | None = None,
        exclude: Iterable[str] = (),
        cancel: Callable[[], bool] | None = None,
        seed: str | os.PathLike[str] | None = None,
    ) -> None:
        self.store = store
        self.root = root
        self.config = config
        self._embedder_factory = embedder
        self.embedder_id = embedder_id
        self.exclude = frozenset(exclude)
        self.seed = seed
        self.progress = progress or (lambda phase, done, total: None)
        self.warn = warn or (lambda msg: None)
        self.cancel = cancel or (lambda: False)
        self.report = SyncReport()
        self._model: Embedder | None = None
        factory = self._embedder if embedder is not None else None

        def hooks() -> dict[str, Any]:
            return {
                "embedder": factory,
                "embedder_id": embedder_id,
                "progress": self.progress,
                "warn": self.warn,
                "cancel": self.cancel,
            }

        self.lexical = LexicalPhase(store, root, config, self.report, **hooks())
        self.models = ModelSwitch(store, root, config, self.report, **hooks())
        self.embedding = EmbeddingPhase(
            store, root, config, self.report, switch=self.models, **hooks()
        )

    def _embedder(self) -> Embedder:
        """The model, built once per sync on first use (loading it may take seconds)."""
        if self._model is None:
            assert self._embedder_factory is not None
            self._model = self._embedder_factory()
        return self._model

    # -- the whole run -----------------------------------------------------------------
    def run(self, full: bool = False, embed: bool = True) -> SyncReport:
        """One sync. The caller holds the store's writer lock for its duration."""
        t0 = time.perf_counter()
        scan_ns = time.time_ns()
        if not (self.root.is_dir() and os.access(self.root, os.R_OK | os.X_OK)):
            # A vanished or unreadable root must not read as "every file was deleted".
            raise ScryError(f"cannot read the repository root {self.root}; the index is unchanged")
        seed = None
        if self.seed is not None:
            # Checked before anything changes: a seed of another fingerprint is one error.
            seed = SeedIndex.open(self.seed, self.config, str(self.embedder_id), self.store.path)
        try:
            self.embedding.seed = seed
            return self._run(t0, scan_ns, full, embed)
        finally:
            self.embedding.seed = None
            if seed is not None:
                seed.close()

    def _run(self, t0: float, scan_ns: int, full: bool, embed: bool) -> SyncReport:
        self._check_fingerprint(full)
        ch = detect(self.store, self.root, self.config, self.exclude, self.report)
        self.report.seconds_scan = time.perf_counter() - t0

        t1 = time.perf_counter()
        complete = self.lexical.write(ch.todo, ch.existing, ch.deleted, ch.stale_skips)
        # Only after a complete pass: a rebuild stopped half-way has many vectors that are
        # unreferenced only until the rest of the files are written again.
        if complete and (
            self.report.chunks_deleted or self.report.chunks_reused or self.report.rebuilt
        ):
            self.embedding.track_orphans()
        self.report.seconds_lexical = time.perf_counter() - t1

        if complete and embed and self._embedder_factory is not None:
            t2 = time.perf_counter()
            self.embedding.embed_pending()
            self.report.seconds_embed = time.perf_counter() - t2
        self.report.pending = counts.pending(self.store)
        with self.store.transaction():
            if complete:
                self.store.set_meta("last_sync", str(time.time()))
                self.store.set_meta("scan_ns", str(scan_ns))
                self.store.set_meta("files_seen", str(self.report.files_seen))
                if self.store.meta("decoder") != DECODER_VERSION:
                    self.store.set_meta("decoder", DECODER_VERSION)
                self.store.set_meta(
                    "skipped_walk", _counter_text(ch.walk_skipped + self.lexical._read_failures)
                )
            if self.report.embed_rate:
                self.store.set_meta("embed_rate", f"{self.report.embed_rate:.2f}")
        return self.report

    # -- fingerprint -------------------------------------------------------------------

    def _check_fingerprint(self, full: bool) -> None:
        s = self.store
        fp = fingerprint(self.config, self.embedder_id)
        want = {"chunker": fp["chunker"], "tokenizer": fp["tokenizer"]}
        have = {k: s.meta(k) for k in want}
        fresh = indexed_files.count(s) == 0 and have["chunker"] is None
        # A new embedder is loaded and probed before anything in the index changes: a
        # model that cannot load is one error, and the index stays as it was.
        probed = self.models.probe()
        with s.transaction():
            if full:
                self.lexical.clear()
                s.drop_vectors()
                s.clear_next_vectors()
                self.report.rebuilt = "--full"
            elif s.rebuilt_from is not None:
                # Store found a schema it cannot migrate and started the file afresh.
                self.warn(
                    f"index schema changed ({s.rebuilt_from} -> {SCHEMA_VERSION}): "
                    "rebuilding the index from nothing"
                )
                self.report.rebuilt = f"schema {s.rebuilt_from} -> {SCHEMA_VERSION}"
            elif not fresh and have != want:
                changed = ", ".join(
                    f"{k} {have[k]} -> {want[k]}" for k in want if have[k] != want[k]
                )
                self.warn(
                    f"index format changed ({changed}): re-indexing every file (vectors are reused)"
                )
                self.lexical.clear()
                self.report.rebuilt = changed
            s.rebuilt_from = None
            for k, v in want.items():
                if have[k] != v and v is not None:
                    s.set_meta(k, v)
            if s.meta("root") != str(self.root):
                s.set_meta("root", str(self.root))
            if s.meta("scrydb_version") != scrydb_version():
                s.set_meta("scrydb_version", scrydb_version())
            self.models.check(probed)
