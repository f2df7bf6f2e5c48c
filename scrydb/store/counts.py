"""What an index holds, counted: chunks, symbols, and vectors by the role they play.

The vector accounting lives here, beside the rule it depends on (:mod:`scrydb.store.keys`):
a body, a header, a window and a comment vector are keyed in disjoint hash spaces, so a
stored vector plays exactly one role, or none (an orphan kept for reuse). Each role is
counted directly, and ``tests/test_status.py`` checks that the roles and the orphans add
up to every stored vector.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from scrydb.chunk.windows import COMMENT_SEQ

if TYPE_CHECKING:
    from scrydb.store.db import Store


@dataclass(frozen=True)
class VectorCounts:
    """Stored vectors by role."""

    stored: int  #: rows of ``embeddings``
    body: int  #: a chunk's own vector
    header: int  #: a definition's header vector
    window: int  #: a window of a long chunk
    comment: int  #: a chunk's comment view
    orphan: int  #: referenced by nothing (kept for reuse until pruned)
    pending: int  #: chunks without a body vector
    pending_texts: int  #: distinct texts among them

    @property
    def searchable(self) -> bool:
        """Whether any vector serves a chunk."""
        return self.stored > self.orphan


def vectors(store: Store) -> VectorCounts:
    """The vector accounting of an index (see the module docstring)."""
    s = store
    return VectorCounts(
        stored=int(s.scalar("SELECT count(*) FROM embeddings") or 0),
        body=int(s.scalar("SELECT count(DISTINCT emb_id) FROM chunks") or 0),
        header=int(s.scalar("SELECT count(DISTINCT head_emb_id) FROM chunks") or 0),
        window=int(
            s.scalar(
                "SELECT count(DISTINCT emb_id) FROM chunk_windows WHERE seq < ?", (COMMENT_SEQ,)
            )
            or 0
        ),
        comment=int(
            s.scalar(
                "SELECT count(DISTINCT emb_id) FROM chunk_windows WHERE seq = ?", (COMMENT_SEQ,)
            )
            or 0
        ),
        orphan=int(
            s.scalar(
                "SELECT count(*) FROM embeddings e WHERE NOT EXISTS "
                "(SELECT 1 FROM chunks c WHERE c.emb_id = e.id) AND NOT EXISTS "
                "(SELECT 1 FROM chunks c WHERE c.head_emb_id = e.id) AND NOT EXISTS "
                "(SELECT 1 FROM chunk_windows w WHERE w.emb_id = e.id)"
            )
            or 0
        ),
        pending=pending(s),
        pending_texts=int(
            s.scalar("SELECT count(DISTINCT text_hash) FROM chunks WHERE emb_id IS NULL") or 0
        ),
    )


def pending(store: Store) -> int:
    """Chunks still without a body vector."""
    return int(store.scalar("SELECT count(*) FROM chunks WHERE emb_id IS NULL") or 0)


def chunks(store: Store) -> int:
    """Chunks in the index."""
    return int(store.scalar("SELECT count(*) FROM chunks") or 0)


def symbols(store: Store) -> int:
    """Rows of the symbol table."""
    return int(store.scalar("SELECT count(*) FROM symbols") or 0)


def origins(store: Store) -> dict[int | None, int]:
    """Live vectors per origin (None: computed by the model here; else sync.base's ORIGIN_*)."""
    return dict(
        store.rows(
            "SELECT origin, count(*) FROM embeddings WHERE orphaned_at IS NULL "
            "GROUP BY origin ORDER BY origin"
        )
    )
