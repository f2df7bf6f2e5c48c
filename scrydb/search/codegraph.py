"""The code graph's face for the public API (``Index.graph``): one object with the four
questions, over search/graph.py (resolution) and search/repomap.py (the map)."""

from __future__ import annotations

from pathlib import Path

from scrydb.paths import filter_path
from scrydb.search import graph
from scrydb.search.repomap import MapEntry, repo_map
from scrydb.store import Store


class CodeGraph:
    """The code graph of one index (``Index.graph``): who calls what, every reference to
    a name, and a repository map. Targets are ``NAME``, ``Class.name`` or ``path:LINE``;
    an unknown one raises :class:`~scrydb.search.graph.UnknownSymbol` (a ``ScryError`` with ``suggestions``)."""

    def __init__(self, store: Store, root: Path) -> None:
        self.store = store
        self.root = root

    def callers(
        self, target: str, depth: int = 1
    ) -> tuple[list[graph.Definition], list[graph.Reference]]:
        """The definitions ``target`` names and the references that call them, each with
        the definition around it and a confidence; ``depth`` > 1 follows callers of
        callers."""
        return graph.callers(self.store, target, depth)

    def callees(
        self, target: str, depth: int = 1
    ) -> tuple[list[graph.Definition], list[graph.Reference]]:
        """What the definitions ``target`` names call, each call resolved."""
        return graph.callees(self.store, target, depth)

    def refs(self, target: str) -> graph.RefsResult:
        """The definitions ``target`` names and every reference resolved to them."""
        return graph.refs(self.store, target)

    def map(
        self, path: str | None = None, names: list[str] | None = None, budget: int = 1024
    ) -> list[MapEntry]:
        """A repository map (search/repomap.py), personalised to ``path`` (relative to the
        root, or absolute inside it) or to ``names``, within about ``budget`` tokens."""
        return repo_map(self.store, filter_path(self.root, path), names, budget)
