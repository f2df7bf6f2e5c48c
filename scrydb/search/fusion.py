"""How a query's candidates get one score: the fusion strategies behind one interface, and a
public hook to observe what a fusion saw.

The legs (lexical, dense, votes, factors) leave their evidence on the candidates;
:func:`rank.evidence` reads it into one typed record (:class:`rank.Evidence`). A strategy
scores from it: ``hand`` (rank.py's weights per query shape) or ``learned`` (the fitted
linear model of learned.py, which starts from the hand score). ``[search] fusion`` picks
one; a new strategy is a :class:`Fusion` subclass added to :data:`STRATEGIES`.

Training code observes the evidence with :func:`observing` instead of replacing engine
methods at run time (``training/fusion.py`` dumps features this way).
"""

from __future__ import annotations

import contextlib
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from scrydb.search import learned, rank
from scrydb.search.query import Query
from scrydb.search.rank import Candidate


@dataclass(frozen=True)
class Fused:
    """What one fusion saw and did: the query, its candidates (each ``score`` now set),
    the share of the query's content words found in the best lexical hits, the strategy."""

    query: Query
    candidates: list[Candidate]
    coverage: float
    strategy: str


class Fusion(ABC):
    """One score per candidate from the evidence of the legs."""

    name: str
    #: whether :meth:`score` reads the query's coverage (computed only when needed)
    uses_coverage: bool = False

    @abstractmethod
    def score(self, cands: dict[int, Candidate], q: Query, coverage: float) -> None:
        """Set every candidate's ``score`` (in place)."""


class HandFusion(Fusion):
    """rank.py's hand-set weights per query shape, votes added, factors multiplied."""

    name = "hand"

    def score(self, cands: dict[int, Candidate], q: Query, coverage: float) -> None:
        rank.fuse(cands, *rank.WEIGHTS[q.shape])


class LearnedFusion(Fusion):
    """The fitted linear model over the same evidence (search/fusion.json)."""

    name = "learned"
    uses_coverage = True

    def score(self, cands: dict[int, Candidate], q: Query, coverage: float) -> None:
        learned.fuse(cands, q.shape, coverage)


#: The strategies by ``[search] fusion`` name.
STRATEGIES: dict[str, Fusion] = {f.name: f for f in (HandFusion(), LearnedFusion())}

_observers: list[Callable[[Fused], None]] = []


@contextlib.contextmanager
def observing(fn: Callable[[Fused], None]) -> Iterator[None]:
    """Call ``fn`` with a :class:`Fused` after every fusion in this process while the
    block runs (for training and diagnostics; searches do not depend on it)."""
    _observers.append(fn)
    try:
        yield
    finally:
        _observers.remove(fn)


def fuse(strategy: str, cands: dict[int, Candidate], q: Query) -> None:
    """Score ``cands`` with the named strategy, then tell the observers."""
    f = STRATEGIES[strategy]
    cov = learned.coverage(q.terms, cands) if (f.uses_coverage or _observers) else 1.0
    f.score(cands, q, cov)
    if _observers:
        event = Fused(q, list(cands.values()), cov, f.name)
        for fn in list(_observers):
            fn(event)
