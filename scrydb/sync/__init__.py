"""Incremental sync: walk -> diff -> chunk -> write (lexical first) -> embed what is new.

* A file whose (size, mtime_ns) match the index is not read. A changed stat with the
  same hash only updates the stat. Otherwise the file is re-chunked, and its new chunks
  are diffed against its old ones: an unchanged chunk keeps its row (only its line
  numbers move), so an edit rewrites only the chunks it touched.
* Files, chunks, symbols and FTS rows are committed in batches before any embedding, so
  search works lexically while vectors are computed; each embedding batch is its own
  transaction, so a killed run keeps everything committed and the next run resumes.
* Vectors are reused by chunk text hash: an unchanged, renamed or moved chunk costs no
  embedding. Unreferenced vectors are kept (the ``orphan_keep`` most recently orphaned)
  for branch switches and undos.
* The fingerprint (schema, chunker, tokenizer, embedder, embedded-text recipe) decides
  what a sync must rebuild; each rebuild is announced with one warning line.
"""

from scrydb.sync.base import (
    EMBED_COMMIT,
    LEXICAL_BATCH_FILES,
    Progress,
    SyncReport,
    embed_config_json,
    file_stat,
    fingerprint,
    text_hash,
)
from scrydb.sync.estimate import Estimate, estimate
from scrydb.sync.read import decode, file_hash, read_file
from scrydb.sync.syncer import Syncer
from scrydb.sync.texts import EMBED_TEXT_VERSION
from scrydb.sync.texts import recipe as embed_recipe

__all__ = [
    "EMBED_COMMIT",
    "EMBED_TEXT_VERSION",
    "LEXICAL_BATCH_FILES",
    "Estimate",
    "Progress",
    "SyncReport",
    "Syncer",
    "decode",
    "embed_config_json",
    "embed_recipe",
    "estimate",
    "file_hash",
    "file_stat",
    "fingerprint",
    "read_file",
    "text_hash",
]
