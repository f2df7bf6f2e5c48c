"""Fuzz the chunker across languages: real tree-sitter parses of fuzzed bytes.

Input: byte 0 picks the language (every grammar spec, the text chunkers, and none),
byte 1's low bit picks tiny size limits (so small inputs reach the class and statement
splitting), the rest is the file's bytes, decoded as the sync decodes a file. Asserted:
the contract of :mod:`scrydb.chunk` (``check_invariants`` of tests/test_chunk.py: chunks
sorted, disjoint, every non-blank line in exactly one, content exactly its lines, every
definition inside its chunk), references inside their chunk in source order, known
kinds, ``chunk_file`` never raising, the same answer twice, and a CPU bound.
"""

from __future__ import annotations

from test_chunk import check_invariants

from scrydb.chunk import REF_KINDS, chunk_file
from scrydb.chunk import assemble as asm
from scrydb.chunk.refs import MAX_REFS_PER_CHUNK
from scrydb.chunk.specs import SPECS
from scrydb.sync.read import decode

from .common import Finding, bounded

MAX_LEN = 8192
#: CPU seconds one chunking of at most MAX_LEN bytes may take (instrumented code is
#: several times slower than plain).
BOUND_S = 5.0
LANGS: list[str | None] = [*sorted(SPECS), "markdown", "rst", "toml", "ini", "yaml", "text", None]
#: Chunk.kind, as :mod:`scrydb.chunk` lists it.
CHUNK_KINDS = frozenset(
    "function method class struct interface enum trait impl object union module namespace "
    "type macro property code section block".split()
)
#: (MAX_CHUNK_BYTES, TARGET_CHUNK_BYTES): the defaults, and tiny ones (tests/test_chunk.py).
LIMITS = ((asm.MAX_CHUNK_BYTES, asm.TARGET_CHUNK_BYTES), (300, 150))


def split_input(data: bytes) -> tuple[str | None, bool, str]:
    """(language, tiny limits, text) of one input."""
    if len(data) < 2:
        return None, False, decode(data)
    return LANGS[data[0] % len(LANGS)], bool(data[1] & 1), decode(data[2:])


def test_one(data: bytes) -> None:
    """One input (see the module's docstring)."""
    lang, tiny, text = split_input(data)
    asm.MAX_CHUNK_BYTES, asm.TARGET_CHUNK_BYTES = LIMITS[tiny]
    try:
        with bounded(BOUND_S, f"chunk_file as {lang}"):
            chunks = chunk_file("fuzzed", text, lang)
        again = chunk_file("fuzzed", text, lang)
    finally:
        asm.MAX_CHUNK_BYTES, asm.TARGET_CHUNK_BYTES = LIMITS[0]
    check_invariants(text, chunks)
    if [(c.start_line, c.end_line, c.kind, c.symbol) for c in again] != [
        (c.start_line, c.end_line, c.kind, c.symbol) for c in chunks
    ]:
        raise Finding(f"chunking {lang} twice gave two answers")
    for c in chunks:
        if c.kind not in CHUNK_KINDS:
            raise Finding(f"{lang}: unknown chunk kind {c.kind!r}")
        if len(c.refs) > MAX_REFS_PER_CHUNK:
            raise Finding(f"{lang}: {len(c.refs)} references in one chunk")
        where = [(r.line, r.column) for r in c.refs]
        if where != sorted(where):
            raise Finding(f"{lang}: references out of source order: {where[:10]}")
        for r in c.refs:
            if not c.start_line <= r.line <= c.end_line or r.kind not in REF_KINDS or not r.name:
                raise Finding(f"{lang}: reference {r} outside chunk {c.start_line}-{c.end_line}")
