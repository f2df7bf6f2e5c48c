"""The SQL form of a search's hard filters (languages, a path prefix or glob): a condition
on ``f``, the ``files`` alias, that every read joining ``files`` appends.

The filter itself, parsed once and also tested in Python on paths held in memory, is
:class:`scrydb.search.filters.Filter`; ``tests/test_filters.py`` checks that both forms
agree on a real table.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol


class FileFilter(Protocol):
    """What the SQL needs of a filter (:class:`scrydb.search.filters.Filter`)."""

    @property
    def langs(self) -> Sequence[str]:
        """Language ids a file must have one of (empty: any)."""
        ...

    @property
    def path(self) -> str:
        """A directory prefix, or a glob when :attr:`glob` (empty: any path)."""
        ...

    @property
    def glob(self) -> bool:
        """Whether :attr:`path` is a glob."""
        ...

    @property
    def glob_sql(self) -> str:
        """The glob in SQLite's dialect (a negated bracket written ``[^a]``)."""
        ...


def files_where(flt: FileFilter) -> tuple[str, list[Any]]:
    """``AND ...`` over ``f`` (the files table) and its parameters ("" when the filter
    passes everything). A glob matches a file or anything under a matching directory; a
    prefix matches the path itself or what lies under it (compared with ``substr``, so
    no character of the prefix is a wildcard)."""
    parts: list[str] = []
    params: list[Any] = []
    if flt.langs:
        parts.append(f"f.lang IN ({','.join('?' * len(flt.langs))})")
        params += flt.langs
    if flt.path:
        if flt.glob:
            parts.append("(f.path GLOB ? OR f.path GLOB ?)")
            params += [flt.glob_sql, flt.glob_sql + "/*"]
        else:
            prefix = flt.path + "/"
            parts.append("(f.path = ? OR substr(f.path, 1, ?) = ?)")
            params += [flt.path, len(prefix), prefix]
    return ("AND " + " AND ".join(parts)) if parts else "", params
