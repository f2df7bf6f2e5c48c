"""Which chunker a file goes to (:func:`chunk_file`): the tree-sitter chunker where a
grammar spec exists (a C++ header named ``.h`` included), Markdown/reST sections, TOML/INI
tables, YAML keys, blank-line-snapped windows for anything else, and windows again when
any of them fails."""

from __future__ import annotations

import logging
import re
from collections.abc import Callable

from scrydb.chunk.records import Chunk

log = logging.getLogger(__name__)

#: Lines that only C++ has: ``.h`` files holding C++ are chunked with the C++ grammar.
_CPP_HINTS = re.compile(
    r"^[ \t]*(?:namespace[ \t]+[\w:]+[ \t]*\{|template[ \t]*<|using[ \t]+namespace\b"
    r"|class[ \t]+\w+[^;(){}\n]*\{|(?:public|private|protected)[ \t]*:)",
    re.MULTILINE,
)
_CPP_SNIFF_CHARS = 200_000


def looks_like_cpp(text: str) -> bool:
    """Whether a file detected as C holds C++ (a ``.h`` header of a C++ library): the
    chunker parses it with the C++ grammar then."""
    return _CPP_HINTS.search(text, 0, _CPP_SNIFF_CHARS) is not None


#: Bump when chunk boundaries, kinds, symbols or references change: the index
#: fingerprint holds it and a changed value makes the next sync re-chunk every file.
#: 7: chunks carry their outgoing references (``Chunk.refs``).
CHUNKER_VERSION = "7"


def chunk_file(
    path: str, text: str, lang: str | None, on_fallback: Callable[[str], None] | None = None
) -> list[Chunk]:
    """Split ``text`` (the decoded content of ``path``) into chunks.

    ``lang`` is the id from :func:`scrydb.langs.detect`. Languages with a grammar spec
    get definition-level chunks, Markdown/reST heading sections, TOML tables and YAML
    top-level keys their own pieces, anything else blank-line-snapped windows. Never
    raises: any internal failure (including a parse that exceeds its time budget)
    falls back to windows, and ``on_fallback(why)`` is told (the sync counts them).
    """
    if not text.strip():
        return []
    from scrydb.chunk import text as text_chunker

    try:
        return _dispatch(text, lang)
    except Exception as e:
        log.debug("chunking %s as %s failed; using windows", path, lang, exc_info=True)
        if on_fallback is not None:
            on_fallback(f"{type(e).__name__}: {e}")
    try:
        return text_chunker.window_chunks(text)
    except Exception:  # pragma: no cover - last resort, keeps the contract
        log.exception("window chunking of %s failed", path)
        return _plain_windows(text)


def _dispatch(text: str, lang: str | None) -> list[Chunk]:
    from scrydb.chunk import text as text_chunker
    from scrydb.chunk.specs import SPECS

    spec = SPECS.get(lang or "")
    if lang == "c" and looks_like_cpp(text):  # a C++ header named .h
        spec = SPECS["cpp"]
    if spec is not None:
        from scrydb.chunk.code import chunk_code

        return chunk_code(text, spec)
    if lang == "markdown":
        return text_chunker.markdown_chunks(text)
    if lang == "rst":
        return text_chunker.rst_chunks(text)
    if lang in ("toml", "ini"):  # both have [section] headers
        return text_chunker.toml_chunks(text)
    if lang == "yaml":
        return text_chunker.yaml_chunks(text)
    return text_chunker.window_chunks(text)


def _plain_windows(text: str, size: int = 40) -> list[Chunk]:
    """Fixed windows of ``size`` lines: the fallback of the fallback."""
    lines = text.split("\n")
    out: list[Chunk] = []
    for a in range(0, len(lines), size):
        rows = [r for r in range(a, min(a + size, len(lines))) if lines[r].strip()]
        if rows:
            s, e = rows[0], rows[-1]
            out.append(Chunk(s + 1, e + 1, "block", None, "\n".join(lines[s : e + 1])))
    return out
