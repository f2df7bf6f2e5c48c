"""Fuzz the code tokenizer (:mod:`scrydb.tokens`): what the lexical index stores for a
chunk's body, its symbols and its path, and how a query's names are squashed.

Asserted: deterministic (the cached and the uncached computation agree, and a second
call agrees), bounded output (a body grows at most 4x plus two characters per
identifier: whole, squashed and words), every identifier of the text kept whole in its
prepared body (an exact identifier must stay findable), identifier words lower case
and drawn from the identifier, and a CPU bound.
"""

from __future__ import annotations

from scrydb import tokens

from .common import Finding, bounded, text_of

MAX_LEN = 4096
BOUND_S = 2.0


def _fresh_split(ident: str) -> tuple[str, ...]:
    return tokens.split_identifier.__wrapped__(ident)  # type: ignore[attr-defined]


def test_one(data: bytes) -> None:
    """One input: a chunk body, and the same text read as symbols and as a path."""
    text = text_of(data)
    with bounded(BOUND_S, "tokenizing"):
        body = tokens.index_text(text)
        symbols = text.split("\n")[:50]
        sym = tokens.symbol_text(symbols)
        stem, dirs = tokens.path_texts(text.replace("\n", "/"))
        words = tokens.words(text)
    idents = tokens._IDENT.findall(text)
    if tokens.index_text(text) != body or tokens.symbol_text(symbols) != sym:
        raise Finding("tokenizing the same text twice gave two answers")
    if len(body) > 4 * len(text) + 2 * len(idents):
        raise Finding(f"body grew from {len(text)} to {len(body)} characters")
    kept = set(tokens._IDENT.findall(body))
    for ident in idents:
        if ident not in kept:
            raise Finding(f"identifier {ident!r} is not kept whole in its body")
        parts = _fresh_split(ident)
        if parts != tokens.split_identifier(ident):
            raise Finding(f"cached and fresh split of {ident!r} differ")
        squashed = ident.lower()
        for p in parts:
            if p != p.lower() or p not in squashed:
                raise Finding(f"word {p!r} of {ident!r} is not a lower-case part of it")
        if tokens.normalise_name(ident) != ("".join(parts) or ident.lower()):
            raise Finding(f"normalise_name({ident!r}) disagrees with its words")
    for w in words:
        if w not in text:
            raise Finding(f"word {w!r} is not in the text")
    for s in (stem, dirs, sym):
        if len(s) > 6 * len(text) + 16:
            raise Finding(f"a path or symbol text grew from {len(text)} to {len(s)} characters")
