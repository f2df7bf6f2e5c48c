"""What every part of a sync shares: the constants, the report, the fingerprint, and
:class:`Phase`, the state one sync's phases work on. What the model sees is built in
``sync/texts.py``; a file is read and chunked in ``sync/read.py``."""

from __future__ import annotations

import json
import os
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path

from scrydb import tokens
from scrydb.chunk import CHUNKER_VERSION, Chunk
from scrydb.config import Config
from scrydb.embed import Embedder
from scrydb.paths import repo_name
from scrydb.store import Store, lookup
from scrydb.store.keys import (  # noqa: F401 - the keying rule, re-exported for sync/
    ORIGIN_CACHE,
    ORIGIN_SEED,
    head_hash,
    text_hash,
    window_hash,
)
from scrydb.sync import texts
from scrydb.sync.texts import BODY, HEAD, WINDOW  # noqa: F401 - re-exported for sync/
from scrydb.sync.texts import recipe as embed_recipe
from scrydb.walk import WalkedFile

#: Files per lexical write transaction (also capped by LEXICAL_BATCH_BYTES).
LEXICAL_BATCH_FILES = 256
LEXICAL_BATCH_BYTES = 4_000_000
#: Pending chunks read from the store per embedding round (sorted by length inside it).
EMBED_PAGE = 2048
#: Texts per embedding transaction: about 3 s of MiniLM on 2 cores, so a killed run loses
#: at most that much work, and a cancel request waits at most that long.
EMBED_COMMIT = 64
#: A sync that timed at least this many texts (after its first model call, which may
#: load the model) records its rate (texts/s) for estimates.
RATE_MIN_TEXTS = 32

#: A file whose mtime is this close before the previous sync's scan is hashed again even
#: when its stat did not change: file systems stamp times coarsely (jiffies on Linux, up
#: to 2 s on FAT), so a second edit right after a sync read the file can keep its stat.
RACY_NS = 2_000_000_000
#: Files read and chunked to estimate a first index (spread evenly over the tree).
ESTIMATE_SAMPLE = 200

#: progress(phase, done, total): phases "scan", "chunk", "embed".
Progress = Callable[[str, int, int], None]


@dataclass
class SyncReport:
    """What one sync did (returned by ``Index.sync``)."""

    files_seen: int = 0
    files_added: int = 0
    files_changed: int = 0
    files_deleted: int = 0
    files_unchanged: int = 0
    chunks_written: int = 0  #: chunk rows inserted (new or changed text)
    chunks_kept: int = 0  #: chunk rows of changed files kept as they were (lines may move)
    chunks_deleted: int = 0
    texts_embedded: int = 0  #: distinct chunk texts sent to the model
    headers_embedded: int = 0  #: distinct chunk headers sent to the model (header vectors)
    #: distinct windows of long chunks and comment views sent to the model
    windows_embedded: int = 0
    chunks_reused: int = 0  #: new chunk rows that got an existing vector
    #: distinct texts whose vector came from the shared vector cache (no model call)
    vectors_from_cache: int = 0
    #: distinct texts whose vector came from a seed index (``--seed``)
    vectors_from_seed: int = 0
    #: model time those vectors saved, at this machine's measured rate (seconds)
    seconds_saved: float = 0.0
    #: time spent on the shared cache itself (hashing texts, lookups, writes)
    seconds_cache: float = 0.0
    vectors_pruned: int = 0
    pending: int = 0  #: chunks still without a vector after this sync
    #: files read by this sync whose tree-sitter parse failed and fell back to windows
    parse_fallbacks: int = 0
    skipped: Counter[str] = field(default_factory=Counter)
    rebuilt: str | None = None  #: why everything was re-chunked / re-embedded, if it was
    cancelled: bool = False  #: stopped early on request; the next sync resumes
    embed_rate: float | None = None  #: texts/s of the model (loading not counted)
    seconds_scan: float = 0.0
    seconds_lexical: float = 0.0
    seconds_embed: float = 0.0

    @property
    def seconds(self) -> float:
        """Wall time of the whole sync."""
        return self.seconds_scan + self.seconds_lexical + self.seconds_embed

    @property
    def changed(self) -> bool:
        """Whether anything in the index changed."""
        return bool(
            self.files_added
            or self.files_changed
            or self.files_deleted
            or self.texts_embedded
            or self.headers_embedded
            or self.windows_embedded
            or self.vectors_from_cache
            or self.vectors_from_seed
            or self.rebuilt
        )

    def to_json(self) -> dict[str, object]:
        """JSON form (``scry index --json``)."""
        d: dict[str, object] = dict(self.__dict__)
        d["skipped"] = dict(sorted(self.skipped.items()))
        d["seconds"] = round(self.seconds, 3)
        return d


@dataclass
class _Staged:
    """A file read and chunked, waiting to be written."""

    walked: WalkedFile
    lang: str | None
    digest: str
    n_lines: int
    chunks: list[Chunk]
    hashes: list[str]


def fingerprint(config: Config, embedder_id: str | None) -> dict[str, str | None]:
    """What this scrydb would write: meta key -> value. A stored value that differs
    makes the next sync rebuild (chunker, tokenizer: re-chunk; embedder, embed_text:
    re-embed)."""
    return {
        "chunker": CHUNKER_VERSION,
        "tokenizer": tokens.TOKENIZER_VERSION,
        "embedder": embedder_id,
        "embed_text": embed_recipe(config),
    }


def embed_config_json(config: Config) -> str:
    """The ``[embed]`` settings that made the index's vectors, as JSON (a model directory
    made absolute): searches rebuild the query embedder from it while a re-embed for a
    new model is under way."""
    d = asdict(config.embed)
    p = Path(os.path.expanduser(d["model"]))
    if d["provider"] == "local" and p.is_dir():
        d["model"] = str(p.resolve())
    return json.dumps(d, sort_keys=True)


def _counter_text(c: Counter[str]) -> str:
    return ",".join(f"{k}={v}" for k, v in sorted(c.items()))


def file_stat(path: Path) -> tuple[int, int] | None:
    """(size, mtime_ns) of a file, or None when it cannot be stat'ed."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_size, st.st_mtime_ns


class Phase:
    """One sync's shared state, as each phase sees it: the store, the tree, the config,
    the report being filled, and the caller's warn/progress/cancel hooks. ``embedder``
    returns the model (built once per sync, on first use); None: this sync has none."""

    def __init__(
        self,
        store: Store,
        root: Path,
        config: Config,
        report: SyncReport,
        *,
        embedder: Callable[[], Embedder] | None,
        embedder_id: str | None,
        progress: Progress,
        warn: Callable[[str], None],
        cancel: Callable[[], bool],
    ) -> None:
        self.store = store
        self.root = root
        self.config = config
        self.report = report
        self._embedder_factory = embedder
        self.embedder_id = embedder_id
        self.progress = progress
        self.warn = warn
        self.cancel = cancel
        self.repo_name = repo_name(root)

    def embedder(self) -> Embedder:
        """The embedder (built on first use; loading it may take seconds)."""
        assert self._embedder_factory is not None
        return self._embedder_factory()

    def body_text(self, path: str, symbol: str | None, content: str) -> str:
        """What is embedded for a chunk's body (``texts.body_text`` for this tree)."""
        return texts.body_text(
            self.repo_name, path, symbol, content, self.config.index.embed_max_chars
        )

    def window_text(self, path: str, symbol: str | None, content: str, seq: int) -> str:
        """What is embedded for view ``seq`` of a chunk ("" when it has no such view any
        more; ``texts.view_text`` for this tree)."""
        return texts.view_text(self.repo_name, path, symbol, content, seq, self.config.index)

    @staticmethod
    def head_text(path: str, symbol: str | None, kind: str, content: str) -> str:
        """What is embedded for a chunk's header (``texts.head_text``)."""
        return texts.head_text(path, symbol, kind, content)

    def count_reused(self, origin: int, n: int) -> None:
        """Add ``n`` texts whose vector came from ``origin`` (no model call) to the report."""
        if origin == ORIGIN_CACHE:
            self.report.vectors_from_cache += n
        elif origin == ORIGIN_SEED:
            self.report.vectors_from_seed += n

    def count_embedded(self, kind: str, n: int) -> None:
        """Add ``n`` texts of ``kind`` (BODY, HEAD, WINDOW) sent to the model to the report."""
        r = self.report
        if kind == HEAD:
            r.headers_embedded += n
        elif kind == WINDOW:
            r.windows_embedded += n
        else:
            r.texts_embedded += n

    def _cancelled(self) -> bool:
        if not self.report.cancelled and self.cancel():
            self.report.cancelled = True
        return self.report.cancelled

    def _lookup_embeddings(self, hashes: Iterable[str]) -> dict[str, int]:
        """text_hash -> embedding id for the hashes that already have a vector."""
        return lookup.embedding_ids(self.store, hashes)
