"""The ``search`` tool's ``repos`` argument: a search over several indexed repositories
(:mod:`scrydb.multi`), the served one among them when it is named."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from scrydb import present
from scrydb.catalog import RepoSource, resolve_repo
from scrydb.index import Index
from scrydb.mcp_server.service import ScryService, _Cancel
from scrydb.multi import MultiSearch

#: Most repositories one search names (each is an index to open and a list to merge).
MAX_REPOS = 20

ReposArg = Annotated[
    list[str] | None,
    Field(
        max_length=MAX_REPOS,
        description=(
            "Search these repositories instead of this one: roots (absolute, or relative to "
            "this repository's root) or names of indexed repositories; name this one too "
            "to include it. Each is searched with its own index and model, as it is; the "
            "lists merge by rank and each hit names its repository (repo:path:lines)."
        ),
    ),
]


class RepoSearch:
    """Searches across repositories for one server: the other indexes stay open between
    calls (their models load once); the served repository is searched through the
    service's own reader, which its watcher keeps fresh."""

    def __init__(self, svc: ScryService) -> None:
        self.svc = svc
        self.multi = MultiSearch()

    def answer(
        self,
        cancel: _Cancel,
        repos: list[str],
        query: str,
        limit: int,
        lang: str | None,
        path: str | None,
    ) -> str:
        """The tool's answer for ``repos`` (a name that matches no repository is an error;
        a repository that cannot be searched is a note)."""
        sources = [resolve_repo(r, base=self.svc.root) for r in repos]
        if all(s.root != self.svc.root for s in sources):
            res = self.multi.search(
                sources, query, k=limit, lang=lang, path=path, cancel=cancel.check
            )
            return present.format_search(res, limit)
        notes = self.svc.await_index(cancel)

        def with_served(ix: Index) -> str:
            mixed: list[Index | RepoSource] = [ix if s.root == ix.root else s for s in sources]
            res = self.multi.search(
                mixed, query, k=limit, lang=lang, path=path, cancel=cancel.check
            )
            return present.format_search(res, limit, notes, self.svc.embedding_now())

        return self.svc.with_reader(cancel, with_served)
