"""Window vectors: extra vectors over the parts of a long chunk its body vector never sees.

The packaged models read 256 tokens: a chunk's context line and about 750 characters of
its code. Half the chunks of a typical repository are longer, and a question about their
middle ("where are the retries counted") cannot match a vector of their first lines. A
chunk much longer than that view gets up to :data:`MAX_WINDOWS` more vectors, each over
the next stretch of its text (the windows overlap a little, and each starts at a line
start), and the dense leg scores the chunk by the best of its body and window cosines.

Measured with ``training/windows.py`` on the golden sets (scry-code-minilm, learned
fusion, MRR@10): windows for every chunk past the view cost 0.59 extra embeddings per
chunk and gave dev 0.676 -> 0.696; windows only for chunks that need at least three (about
one in seven) cost 0.18 per chunk and gave dev 0.676 -> 0.703, test 0.681 -> 0.697: the
gain is in very long chunks. So :data:`MIN_WINDOWS` is 3.

The windows are cut by characters, not tokens, so they do not depend on the model (code
averages about 3.1 characters per MiniLM token; the 250th token of a chunk falls near
character 760).

A chunk's inner comments are one more view of it (:func:`view_texts`), stored and scored
like a window at ``seq`` :data:`COMMENT_SEQ`.
"""

from __future__ import annotations

from scrydb.chunk.header import inner_comments

#: Bump when the window rule changes: an index with another version re-derives its windows.
#: 2: a chunk's inner comments are one more view (:data:`COMMENT_SEQ`).
WINDOWS_VERSION = "2"
#: Characters of chunk text the body vector sees, and one window's length (the model cuts
#: whatever does not fit).
VIEW_CHARS = 760
#: Characters a window shares with the text before it (a line cut in two is seen whole).
OVERLAP_CHARS = 130
#: Windows per chunk, at most; a chunk that would get fewer than MIN_WINDOWS gets none.
MAX_WINDOWS = 3
MIN_WINDOWS = 3
#: The ``seq`` of a chunk's comment view among its windows (after any window's).
COMMENT_SEQ = MAX_WINDOWS
#: A window is not started this close to the end of a chunk.
TAIL_CHARS = 60
#: How far a window's start may move back to begin at a line start.
SNAP_CHARS = 120


def window_spans(content: str) -> list[tuple[int, int]]:
    """(start, end) character offsets of a chunk's windows, in order; [] for a chunk
    short enough for its body vector (or one that needs fewer than MIN_WINDOWS)."""
    step = VIEW_CHARS - OVERLAP_CHARS
    first = step - 40  # the body's view also holds its context line
    if len(content) < first + (MIN_WINDOWS - 1) * step + TAIL_CHARS:
        return []
    spans: list[tuple[int, int]] = []
    start = first
    while start < len(content) - TAIL_CHARS and len(spans) < MAX_WINDOWS:
        nl = content.rfind("\n", max(0, start - SNAP_CHARS), start)
        a = nl + 1 if nl >= 0 else start
        spans.append((a, min(len(content), a + VIEW_CHARS)))
        start = a + step
    return spans if len(spans) >= MIN_WINDOWS else []


def window_texts(content: str) -> list[str]:
    """The text of each window of a chunk (see :func:`window_spans`)."""
    return [content[a:b] for a, b in window_spans(content)]


def view_texts(content: str, windows: bool = True, comments: bool = True) -> dict[int, str]:
    """The extra views of a chunk embedded beside its body and header, by ``seq``: its
    windows (0 .. MAX_WINDOWS - 1, when ``windows``) and the text of its inner comments
    (COMMENT_SEQ, when ``comments`` and it has any; ``chunk.header.inner_comments``). The
    dense leg treats every view alike: a chunk scores by the best of its body and views.
    """
    out = dict(enumerate(window_texts(content))) if windows else {}
    text = inner_comments(content) if comments else ""
    if text:
        out[COMMENT_SEQ] = text
    return out


def views_recipe(windows: bool, comments: bool) -> str:
    """What derived a chunk's views (the index's ``window_text`` meta): a change derives
    them again."""
    if not windows and not comments:
        return "off"
    return f"{WINDOWS_VERSION}:{'w' if windows else ''}{'c' if comments else ''}"
