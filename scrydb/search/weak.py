"""Whether a result list is weak, which names of the query exist nowhere, and the
existing names to suggest instead ("did you mean").

A list is *weak* when nothing in it is good evidence for the query: an identifier query
whose name occurs nowhere in the index; a query none of whose words occur anywhere (the
hits are neighbours by meaning only: random letters, a word from another project); or
no hit with a lexical match and no close vector. Weak lists carry suggestions, and the
CLI exits 1 for a missing identifier (README, exit codes).
"""

from __future__ import annotations

from scrydb import tokens
from scrydb.search import votes
from scrydb.search.query import Query
from scrydb.search.rank import Candidate
from scrydb.store import Store, legs, lookup

#: A result list is weak when no hit has a lexical match of any content word and the
#: best cosine is below this.
WEAK_COSINE = 0.35
#: Shortest query word a suggestion is looked up for (shorter ones match too much).
SUGGEST_MIN_CHARS = 4


def missing_identifiers(store: Store, q: Query) -> list[str]:
    """The identifiers of an identifier-shaped query that no indexed chunk contains, as
    a definition or as a token (``FooBarBazQux`` where nothing is called that).

    A name counts as present when a definition has its normalised form or the lexical
    index holds it, whole or squashed (``max_attempts`` and ``maxAttempts`` are one)."""
    if q.shape != "identifier":
        return []
    out: list[str] = []
    for ident in q.identifiers:
        last = [p for p in _parts(ident) if p]
        if not last:
            continue
        name = last[-1]
        norm = tokens.normalise_name(name)
        if lookup.has_symbol_name(store, norm):
            continue
        if any(lookup.has_term(store, t) for t in {name.lower(), norm}):
            continue
        out.append(ident)
    return out


def _parts(ident: str) -> list[str]:
    for sep in ("::", "->", "#"):
        ident = ident.replace(sep, ".")
    return ident.strip("()").split(".")


def is_weak(
    chosen: list[Candidate], cands: dict[int, Candidate], lexical_ran: bool, missing: list[str]
) -> bool:
    """Whether the chosen hits are poor evidence (see the module docstring). ``cands``:
    the whole pool; ``lexical_ran``: the lexical leg was asked (fused or lexical mode)."""
    if not chosen or missing:
        return True
    if any(c.votes.get("symbol") for c in chosen):
        return False
    if lexical_ran and not any(c.lex_rank is not None for c in cands.values()):
        return True  # not one query word occurs in the index: meaning alone found these
    best_cos = max((c.dense_score or 0.0) for c in chosen)
    lexical = any(c.lex_rank is not None for c in chosen)
    return not lexical and best_cos < WEAK_COSINE


def suggest(store: Store, q: Query, limit: int = 5) -> list[str]:
    """Existing symbol names close to the query's words ("did you mean")."""
    out: list[str] = []
    for w in q.identifiers + [t for t in q.terms if len(t) >= SUGGEST_MIN_CHARS]:
        norm = tokens.normalise_name(w.split(".")[-1])
        for name in votes.fuzzy_names(store, norm, max_dist=2):
            row = legs.symbol_spelling(store, name)
            if row and row not in out:
                out.append(row)
        if len(out) >= limit:
            break
    return out[:limit]
