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
        self.glob_sql, self._glob_py = _dialects(self.path) if self.glob else ("", "")
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


def _dialects(pattern: str) -> tuple[str, str]:
    """A glob in SQLite's dialect and in fnmatch's, read bracket by bracket. A negated
    bracket is written [!a] (shell, gitignore, fnmatch) or [^a] (SQLite GLOB, regexes):
    both are taken, and each side gets its own spelling, at a bracket's start only; a
    ``[`` that closes no bracket is itself on both sides (SQLite needs it as ``[[]``).
    Replacing the spellings anywhere, and leaving a lone ``[`` to SQLite, made the two
    disagree (``[a[!]``, ``a[``: found by tests/fuzz/filters.py)."""
    sql: list[str] = []
    py: list[str] = []
    i, n = 0, len(pattern)
    while i < n:
        if pattern[i] != "[":
            sql.append(pattern[i])
            py.append(pattern[i])
            i += 1
            continue
        j = i + 1
        negated = j < n and pattern[j] in "!^"
        j += negated
        start = j
        if j < n and pattern[j] == "]":
            j += 1  # a "]" first in a bracket is itself
        while j < n and pattern[j] != "]":
            j += 1
        if j >= n:  # no closing "]": a plain "["
            sql.append("[[]")
            py.append("[[]")
            i += 1
            continue
        body = pattern[start:j]
        backwards = _backwards_range(body)
        if backwards:
            raise ScryError(
                f"bad path filter {pattern[:40]!r}: the range {backwards!r} runs backwards"
            )
        sql.append(("[^" if negated else "[") + body + "]")
        py.append(("[!" if negated else "[") + body + "]")
        i = j + 1
    return "".join(sql), "".join(py)


def _backwards_range(body: str) -> str | None:
    """The first range of a bracket's body that runs backwards (``a--``), read as SQLite's
    GLOB reads it (a ``-`` after a member and before the end makes a range; a leading
    ``]`` is a member that starts none), or None. SQLite keeps such a range's first end
    as a member and fnmatch drops both ends, so the two forms would disagree
    (``[^a--]``: found by tests/fuzz/filters.py): it is refused instead."""
    prior = ""
    k = 1 if body.startswith("]") else 0
    while k < len(body):
        c = body[k]
        if c == "-" and prior and k + 1 < len(body):
            end = body[k + 1]
            if end < prior:
                return f"{prior}-{end}"
            prior, k = "", k + 2
            continue
        prior, k = c, k + 1
    return None
