"""How a stored vector is keyed, and where it came from.

A vector row (``embeddings``) is keyed by a hash of the text it embeds. Bodies, headers and
windows (a comment view is a window at ``COMMENT_SEQ``) hash in disjoint spaces (a prefix
no chunk text can start with), so one row plays one role; :mod:`scrydb.store.counts`
counts them on that rule.
"""

from __future__ import annotations

import hashlib


def text_hash(content: str) -> str:
    """Key of embedding reuse: blake2b-128 of the chunk content."""
    return hashlib.blake2b(content.encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()


def head_hash(key: str) -> str:
    """Key of a header vector's reuse (the key of ``chunk.header.header``): a hash apart from
    every chunk text's."""
    return text_hash("\x00head\x00" + key)


def window_hash(text: str) -> str:
    """Key of a window vector's reuse (the window's text, chunk/windows.py): a hash apart
    from every chunk text's and header's."""
    return text_hash("\x00win\x00" + text)


#: ``embeddings.origin``: where a vector came from when not from the model (NULL):
#: the shared vector cache, or a seed index (``sync/reuse.py``).
ORIGIN_CACHE, ORIGIN_SEED = 1, 2
