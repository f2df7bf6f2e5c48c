"""What the model sees: every text embedded for a chunk, the key its vector is stored
under, and the recipe version that names them.

A chunk is embedded as up to three kinds of text: its body (a context line ``repo > path >
symbol`` then its content, cut), its header (``chunk/header.py``: names, first docstring
sentence, path words) and its views (``chunk/windows.py``: windows of a long chunk and the
text of its inner comments, each after the same context line). The shared vector cache is
keyed by the exact text (``store/vcache.text_key``), so whatever builds these texts
elsewhere (the first-index estimate, ``bench/``, ``training/export_eval.py``) calls the
functions here: a copy that drifts measures texts the index never embeds.

``repo`` is always :func:`scrydb.paths.repo_name` of the tree's root (the remote's name,
so that every checkout of a repository embeds the same texts), never the folder's name.
"""

from __future__ import annotations

import hashlib
from typing import NamedTuple

from scrydb.chunk.header import header
from scrydb.chunk.windows import view_texts
from scrydb.config import Config, IndexConfig
from scrydb.store.keys import head_hash, text_hash, window_hash

#: Bump when the text given to the embedder changes (the context line, the cut): a new
#: value re-embeds every chunk, like a new model.
EMBED_TEXT_VERSION = "1"

#: What a text sent to the model is: a chunk's body, its header, a view of a long chunk.
BODY, HEAD, WINDOW = "body", "head", "window"


class Text(NamedTuple):
    """One text the index embeds for a chunk: what it is, the key of its vector (texts of
    one key share one vector) and the text itself."""

    kind: str  #: BODY, HEAD or WINDOW
    key: str  #: the hash its vector is stored under (``store/keys.py``)
    text: str  #: exactly what the model is given


def context_line(repo: str, path: str, symbol: str | None) -> str:
    """The line put before a chunk's body and views when they are embedded (not shown)."""
    return f"{repo} > {path} > {symbol}\n" if symbol else f"{repo} > {path}\n"


def body_text(repo: str, path: str, symbol: str | None, content: str, cut: int) -> str:
    """What is embedded for a chunk's body: its context line, then its first ``cut``
    characters (``[index] embed_max_chars``)."""
    return context_line(repo, path, symbol) + content[:cut]


def head_text(path: str, symbol: str | None, kind: str, content: str) -> str:
    """What is embedded for a chunk's header (a chunk with a header hash has one; the
    path stands in should the header recipe have changed under a sync)."""
    h = header(path, symbol, kind, content)
    return (h[1] if h else "") or path


def head_key(path: str, symbol: str | None, kind: str, content: str, on: bool) -> str:
    """The hash a chunk's header vector is stored under; "" when it has none (or ``[index]
    header_vectors`` is off)."""
    h = _head(path, symbol, kind, content) if on else None
    return h[0] if h else ""


def _head(path: str, symbol: str | None, kind: str, content: str) -> tuple[str, str] | None:
    """(key, text) of a chunk's header, or None when it has none."""
    h = header(path, symbol, kind, content)
    return (head_hash(h[0]), h[1]) if h else None


def views(content: str, config: IndexConfig) -> dict[int, str]:
    """A chunk's extra views by ``seq`` (windows of a long chunk, its comment view), as
    ``[index] window_vectors`` / ``comment_vectors`` allow; most chunks have none."""
    return view_texts(content, config.window_vectors, config.comment_vectors)


def view_key(view: str) -> str:
    """The hash a view's vector is stored under (its own text, without the context line)."""
    return window_hash(view)


def view_texts_of(
    repo: str, path: str, symbol: str | None, content: str, config: IndexConfig
) -> dict[int, str]:
    """What is embedded for each view of a chunk, by ``seq``: its context line, then the
    view's text."""
    line = context_line(repo, path, symbol)
    return {seq: line + v for seq, v in views(content, config).items()}


def view_text(
    repo: str, path: str, symbol: str | None, content: str, seq: int, config: IndexConfig
) -> str:
    """What is embedded for view ``seq`` of a chunk ("" when the chunk has no such view
    any more)."""
    return view_texts_of(repo, path, symbol, content, config).get(seq, "")


def chunk_texts(
    repo: str, path: str, symbol: str | None, kind: str, content: str, config: IndexConfig
) -> list[Text]:
    """Every text the index embeds for one chunk, in the order it embeds them (body,
    header, views), each with its key. Texts of one key across chunks are embedded once:
    count distinct keys to know how many texts the model sees."""
    line = context_line(repo, path, symbol)
    out = [Text(BODY, text_hash(content), line + content[: config.embed_max_chars])]
    h = _head(path, symbol, kind, content) if config.header_vectors else None
    if h:
        out.append(Text(HEAD, *h))
    out.extend(Text(WINDOW, view_key(v), line + v) for v in views(content, config).values())
    return out


def recipe(config: Config) -> str:
    """What, besides the model's id, decides a stored vector: the text recipe version,
    the cut, a configured dimension and document prefix. Part of the fingerprint (the
    index's ``embed_text`` meta) and of the shared cache file's identity."""
    out = f"{EMBED_TEXT_VERSION}:{config.index.embed_max_chars}"
    if config.embed.dim:
        out += f":d{config.embed.dim}"
    if config.embed.document_prefix:
        digest = hashlib.blake2b(config.embed.document_prefix.encode(), digest_size=4)
        out += f":p{digest.hexdigest()}"
    return out
