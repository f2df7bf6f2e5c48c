"""Result types of the public API, one family of dataclasses with a stable ``to_json()``:
:class:`Hit` and :class:`Results` (search, related), :class:`Match` (locate) and
:class:`ReadResult` (read).

``Hit.to_json()`` is the documented, stable ``--json`` schema (README "JSON output").
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

#: Most lines one ``read`` serves: ``scry read``, the MCP ``read`` tool and
#: ``Index.read`` alike (a larger range is read in pages).
READ_MAX_LINES = 300


@dataclass
class Hit:
    """One ranked code chunk."""

    path: str  #: POSIX path relative to the repository root
    start_line: int  #: first line of the chunk (1-based)
    end_line: int  #: last line of the chunk (inclusive)
    lang: str | None  #: language id (``python``, ``typescript`` ...) or None
    kind: str  #: function, method, class, ..., section, block, code
    #: qualified symbol (``Client.send``) or None; a chunk holding several small peer
    #: definitions names them all (``"ConsoleError, MarkupError"``), or the one of them
    #: that the query named
    symbol: str | None
    #: fused score, in (0, 1] for the default learned fusion (the best hit of a list
    #: scores 1); only the order is meaningful; ``--explain`` shows the same number
    score: float
    snippet: str  #: the lines around the best-matching line (whole chunk when short)
    anchor_line: int  #: the best-matching line (1-based, inside the chunk)
    snippet_start: int  #: first line of the snippet
    truncated: bool  #: True when the snippet is shorter than the chunk
    chunk_id: int = 0
    explain: dict[str, Any] | None = None  #: component ranks/scores (``--explain``)
    #: the repository the hit is in, by name (a search over several repositories,
    #: :func:`scrydb.search_many`); None for a search of one repository
    repo: str | None = None

    @property
    def location(self) -> str:
        """``path:start-end``, or ``repo:path:start-end`` when the hit names its repository."""
        where = f"{self.path}:{self.start_line}-{self.end_line}"
        return f"{self.repo}:{where}" if self.repo else where

    def to_json(self) -> dict[str, Any]:
        """The stable JSON form of a hit (``explain`` and ``repo`` only when set)."""
        d = asdict(self)
        for key in ("explain", "repo"):
            if d[key] is None:
                del d[key]
        return d


class Results(list[Hit]):
    """A list of hits, plus what the caller should know about how they were found."""

    def __init__(self, hits: list[Hit] | None = None) -> None:
        super().__init__(hits or [])
        self.query: str = ""
        self.shape: str = ""  #: identifier, keyword, question or location
        self.notes: list[str] = []  #: e.g. "lexical only: 120 chunks wait for embeddings"
        self.weak: bool = False  #: the best match is poor: the answer may not be indexed
        self.suggestions: list[str] = []  #: existing identifiers close to the query terms
        self.legs: list[str] = []  #: legs that ran: lexical, dense, rerank
        #: identifiers of the query that occur nowhere in the index (the hits are near
        #: matches only; the CLI exits 1)
        self.missing: list[str] = []
        #: chunks still waiting for embeddings (found lexically only meanwhile)
        self.pending: int = 0
        self.timings: dict[str, float] = {}
        #: a search over several repositories: each searched repository's name (as its
        #: hits give it in ``Hit.repo``) -> its root; empty for a search of one
        self.repos: dict[str, str] = {}

    def to_json(self) -> dict[str, Any]:
        """The stable JSON form of a result list (``repos`` only when set)."""
        out: dict[str, Any] = {
            "query": self.query,
            "shape": self.shape,
            "hits": [h.to_json() for h in self],
            "notes": self.notes,
            "weak": self.weak,
            "suggestions": self.suggestions,
            "missing": self.missing,
            "legs": self.legs,
        }
        if self.repos:
            out["repos"] = self.repos
        return out


@dataclass
class Match:
    """One literal match of ``locate``: a line inside an indexed chunk."""

    path: str  #: POSIX path relative to the repository root
    line: int  #: the matching line (1-based)
    column: int  #: where the text starts in it (1-based)
    text: str  #: the line (cut around the match when very long)
    chunk_start: int  #: first line of the chunk holding it
    chunk_end: int  #: last line of that chunk
    kind: str  #: the chunk's kind
    symbol: str | None  #: the chunk's symbol

    @property
    def location(self) -> str:
        """``path:line``."""
        return f"{self.path}:{self.line}"

    def to_json(self) -> dict[str, Any]:
        """The stable JSON form of a match."""
        return asdict(self)


@dataclass
class ReadResult:
    """Text served by ``Index.read``: indexed chunk lines of one file."""

    path: str
    start_line: int
    end_line: int
    text: str
    lang: str | None = None
    truncated: bool = False  #: the request was capped (``max_lines``)
    chunks: list[tuple[int, int, str, str | None]] = field(
        default_factory=list
    )  #: (start, end, kind, symbol)

    def to_json(self) -> dict[str, Any]:
        """JSON form."""
        return asdict(self)
