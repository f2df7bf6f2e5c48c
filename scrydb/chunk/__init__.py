"""Chunking: a file's text -> a list of :class:`Chunk` (function/class-level where a
tree-sitter grammar exists, headings for Markdown, blank-line-snapped windows elsewhere).

Contract (relied on by the store, search, ``read`` and ``related``):

* chunks are sorted, do not overlap, and every non-blank line of the file lies in
  exactly one chunk;
* ``start_line``/``end_line`` are 1-based and inclusive; ``content`` is exactly those
  lines of the file joined by ``\\n`` (no trailing newline; a ``\\r`` before it stays);
* ``chunk_file`` never raises on any input text: a parse failure (or a parse past its
  time budget) falls back to windows.

Layout of the package: this module is the contract and the dispatch;
:mod:`~scrydb.chunk.specs` the per-language table (definition node types, names,
comments); :mod:`~scrydb.chunk.code` the tree-sitter chunker;
:mod:`~scrydb.chunk.text` Markdown/reST/TOML/YAML and windows;
:mod:`~scrydb.chunk.assemble` sizes, cutting and the merge rules, with the limits
``MAX_CHUNK_BYTES`` (a definition up to this stays whole), ``TARGET_CHUNK_BYTES`` (size
aimed at when cutting) and ``MIN_CHUNK_LINES`` (shorter spans join a neighbour).

Rules worth knowing when reading results:

* comments, docstrings, decorators and attributes directly above a definition (no
  blank line in between) belong to its chunk;
* a big class-like definition becomes a header chunk (kind of the class, e.g.
  ``class``) plus one chunk per member; a big function is cut at statements, every
  piece keeping the function's kind and symbol;
* ``Chunk.kind`` is one of function, method, class, struct, interface, enum, trait,
  impl, object, union, module, namespace, type, macro, property (definitions), code
  (module-level statements), section (Markdown/reST), block (windows, TOML, YAML);
  ``SymbolDef.kind`` uses the same words plus constant and variable (module- and
  class-level bindings: assignments, ``const``/``let``/``var``, fields, exported values;
  recorded as symbols only, never a local of a function);
* ``SymbolDef.line`` is the line of the definition's name (after its decorators);
  every definition, nested or not, is in the ``defs`` of the chunk holding that line.
* a chunk into which small neighbours were merged is named by all the definitions it
  holds side by side (``symbol`` ``"ConsoleError, MarkupError"``, ``kind`` the biggest
  one's); members under their class's header leave the class's name alone. A search
  whose query names one of them shows that one (``scrydb.search.engine``);
* a class (or any part of one) and a function outside every class never share a
  chunk: a small function appended after a class stands alone or joins a free
  neighbour (``scrydb.chunk.assemble.can_merge``).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from dataclasses import dataclass, field

from scrydb.chunk.specs.base import SYMBOL_ONLY_KINDS

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


#: Bump when chunk boundaries, kinds or symbols change: the index fingerprint holds it
#: and a changed value makes the next sync re-chunk every file.
CHUNKER_VERSION = "6"


@dataclass(slots=True)
class SymbolDef:
    """A definition found by the parser (goes into the ``symbols`` table)."""

    name: str  #: bare name, e.g. ``send``
    qualname: str  #: qualified name, e.g. ``Client.send``
    kind: str  #: function, method, class, struct, interface, enum, trait, type, ...
    line: int  #: 1-based line of the definition (of its name)


@dataclass(slots=True)
class Chunk:
    """A retrievable unit of a file."""

    start_line: int
    end_line: int
    kind: str  #: function, method, class, ..., section (markdown), block (window), code
    #: qualified symbol of the chunk's main definition, if any; ``"A, B"`` when small
    #: peer definitions were merged into one chunk (``kind`` is then the biggest one's)
    symbol: str | None
    content: str
    defs: list[SymbolDef] = field(default_factory=list)
    #: the definitions ``symbol`` names when it names several (``["A", "B"]``), else []
    peers: list[str] = field(default_factory=list)

    def index_names(self) -> list[str]:
        """The chunk's symbols for the lexical index: the one or several its label
        names, then every other definition it holds, except a class's fields and
        constants (``TRPCError.code``): they are symbols (identifier queries find them
        through the symbol table) but not what the class's chunk is about, and in the
        BM25 symbol column they lifted class chunks over the functions a question asked
        for (`scry eval`, all sets, fused MRR@10: with them 0.742, without 0.744)."""
        named = self.peers or ([self.symbol] if self.symbol else [])
        return named + [
            d.qualname for d in self.defs if d.qualname not in named and not _member_binding(d)
        ]


def _member_binding(d: SymbolDef) -> bool:
    """A constant or variable defined inside a class-like container (a field)."""
    return d.kind in SYMBOL_ONLY_KINDS and "." in d.qualname


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
