"""Before a command or a tool answers: index first, sync, or neither. One policy for ``scry``
and ``scry serve``.

Both ask :meth:`scrydb.store.Store.readiness` (the one rule for "is there an index yet") and
get a :class:`Plan`:

- **never indexed**, or **a first index that was stopped** before its lexical pass completed:
  index before answering. The lexical pass runs first (search works as soon as it commits);
  embeddings follow in this process, or in a background indexer when the caller allows one
  and ``[index] background`` is on. A stopped first index resumes where it stopped (its
  committed files are kept).
- **indexed** (an empty tree included): an incremental lexical sync before answering, unless
  the caller said not to; when it leaves at most :data:`AUTO_EMBED_MAX` chunks without
  vectors (an edit or two), the caller embeds them itself.

The CLI runs the plan in the command (``scry.cli.common.auto_sync``); the MCP server's
watcher runs it in the background and its tools wait for the lexical pass.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from scrydb.store import Readiness

if TYPE_CHECKING:
    from scrydb.index import Index

#: A search embeds chunks still without vectors itself when there are at most this many
#: (an edit or two); more are left to ``scry index``, ``scry watch`` or the server.
AUTO_EMBED_MAX = 64


@dataclass(frozen=True)
class Plan:
    """What to do before answering (see the module docstring)."""

    readiness: Readiness
    first: bool  #: index before answering: never indexed, or the first index was stopped
    embed_now: bool  #: the first index embeds in this process
    background: bool  #: the first index leaves its embeddings to a background indexer
    sync: bool  #: an incremental lexical sync before answering (an existing index)

    def notice(self, root: str | Path) -> str | None:
        """What to tell the user before a first index (None when there is none)."""
        if self.readiness is Readiness.NONE:
            return f"no index for {root} yet: indexing it now (once)…"
        if self.readiness is Readiness.PARTIAL:
            return f"the first index of {root} was stopped before it finished: finishing it now…"
        return None


def plan(
    ix: Index, *, embed: bool = True, no_sync: bool = False, allow_background: bool = True
) -> Plan:
    """The plan for the open index ``ix``.

    ``embed=False``: the caller never loads the model (``scry locate``, ``serve
    --no-embed``). ``allow_background``: the caller may leave embeddings to a detached
    indexer (the CLI; the server embeds in its own watcher). ``no_sync``: answer an
    existing index as it is.
    """
    state = ix.store.readiness()
    if ix.store.readonly:
        return Plan(state, first=False, embed_now=False, background=False, sync=False)
    if state is not Readiness.READY:
        bg = embed and allow_background and ix.config.index.background
        return Plan(state, first=True, embed_now=embed and not bg, background=bg, sync=False)
    return Plan(state, first=False, embed_now=False, background=False, sync=not no_sync)


def embed_after_sync(pending: int, embed: bool = True) -> bool:
    """Whether a caller that synced an existing index embeds what is pending itself."""
    return embed and 0 < pending <= AUTO_EMBED_MAX


def first_index_note(error: str | None, describe: str) -> str:
    """The note an answer carries while its first index is not complete: it could not be
    built (``error``), or it is still being built (``describe``: what the sync is doing)."""
    if error is not None:
        return f"note: the first index could not be built ({error})"
    return f"note: the first index is still being built ({describe}): results are incomplete"
