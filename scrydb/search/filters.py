"""The hard filters of a search, locate or token count: languages and a path prefix or
glob. One class, read as SQL over ``files f`` by the index (the SQL is built in store/:
:func:`scrydb.store.filters.files_where`) and as a predicate by code that holds paths in
memory, so both always agree.
"""

from __future__ import annotations

import fnmatch
from typing import Any

from scrydb import langs
from scrydb.errors import ScryError
from scrydb.paths import storable
from scrydb.store.filters import files_where

#: Longest ``lang`` / ``path`` filter accepted (SQLite allows 32,766 parameters and
#: GLOB patterns of 50,000 bytes; no real filter comes near this).
MAX_FILTER_CHARS = 4096


class Filter:
    """Languages (ids or aliases, ``langs.parse_filter``) and a path prefix or glob."""

    def __init__(self, lang: str | None, path: str | None) -> None:
        for name, value in (("lang", lang), ("path", path)):
            if value and (len(value) > MAX_FILTER_CHARS or not storable(value)):
                raise ScryError(f"bad {name} filter {value[:40]!r}…: too long or not text")
        self.langs = langs.parse_filter(lang)
        p = (path or "").strip()
        if p.startswith("./"):
            p = p[2:]
        self.path = p.strip("/") if p not in ("", ".", "./") else ""
        self.glob = any(ch in self.path for ch in "*?[")
        # A negated bracket is written [!a] (shell, gitignore, fnmatch) or [^a] (SQLite
        # GLOB, regexes): both are taken, and each side gets its own dialect.
        self.glob_sql = self.path.replace("[!", "[^") if self.glob else ""
        self._glob_py = self.path.replace("[^", "[!") if self.glob else ""
        self.active = bool(self.langs or self.path)

    def sql(self) -> tuple[str, list[Any]]:
        """``AND ...`` over ``f`` (the files table) and its parameters ("" when inactive)."""
        return files_where(self)

    def matches(self, path: str, lang: str | None) -> bool:
        """The same test in Python, for a file held in memory."""
        if self.langs and lang not in self.langs:
            return False
        if not self.path:
            return True
        if self.glob:
            return fnmatch.fnmatchcase(path, self._glob_py) or fnmatch.fnmatchcase(
                path, self._glob_py + "/*"
            )
        return path == self.path or path.startswith(self.path + "/")
