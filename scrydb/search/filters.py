"""The hard filters of a search, locate or token count: languages and a path prefix or
glob. One class, read as SQL over ``files f`` by the index (the SQL is built in store/:
:func:`scrydb.store.filters.files_where`) and as a predicate by code that holds paths in
memory, so both always agree.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from scrydb import langs
from scrydb.errors import ScryError, shown
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
        self._glob_re: re.Pattern[str] | None = None
        self.glob_sql = ""
        if self.glob:
            self.glob_sql, self._glob_re = _dialects(self.path)
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
        if self._glob_re is not None:
            return self._glob_re.match(path) is not None
        return path == self.path or path.startswith(self.path + "/")


def _dialects(pattern: str) -> tuple[str, re.Pattern[str]]:
    """A glob in SQLite's dialect and as a compiled regex for the in-memory test, both
    written from one reading of it (:func:`_read_glob`), so they cannot disagree: each
    bracket is read once, as SQLite's GLOB reads it, into its members and ranges, and the
    regex's class is written from those (fnmatch reads some brackets otherwise: ``[]-a]``
    is ``]``, ``-`` and ``a`` to SQLite and the range ``]``..``a`` to fnmatch)."""
    sql: list[str] = []
    parts: list[str | _Bracket] = []
    for piece in _read_glob(pattern):
        if isinstance(piece, _Bracket):
            sql.append(("[^" if piece.negated else "[") + piece.body + "]")
        else:
            sql.append("[[]" if piece == "[" else piece)
        parts.append(piece)
    whole = _regex(parts)
    under = _regex([*parts, "/", "*"])
    return "".join(sql), re.compile(f"{whole}|{under}")


@dataclass(frozen=True)
class _Bracket:
    """One bracket as SQLite's GLOB reads it: negated or not, its body as written (for
    the SQL form) and the single characters and ranges it holds (for the regex)."""

    negated: bool
    body: str
    members: tuple[str, ...]
    ranges: tuple[tuple[str, str], ...]


def _read_glob(pattern: str) -> list[str | _Bracket]:
    """The pieces of a glob: ``*``, ``?``, a literal character (a ``[`` that closes no
    bracket is itself, on both sides: SQLite needs it written ``[[]``) or a bracket.

    A bracket is read as SQLite's ``patternCompare`` reads it: ``^`` first negates (and
    ``!``, the shell's, gitignore's and fnmatch's spelling, which the SQL form writes as
    ``^``); then a ``]`` is itself and starts no range; up to the next ``]`` each
    character is a member, and a ``-`` between a member that starts no range and a
    character before the end makes a range from that member (which stays a member) to
    that character; any other ``-`` is itself. A range that runs backwards (``a--``,
    ``z-a``) is refused with one line: to SQLite it holds its first end alone, to
    fnmatch and git nothing, and it is a typing slip either way (``[^a--]``: found by
    tests/fuzz/filters.py)."""
    pieces: list[str | _Bracket] = []
    i, n = 0, len(pattern)
    while i < n:
        if pattern[i] != "[":
            pieces.append(pattern[i])
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
            pieces.append("[")
            i += 1
            continue
        pieces.append(_read_bracket(pattern, negated, pattern[start:j]))
        i = j + 1
    return pieces


def _read_bracket(pattern: str, negated: bool, body: str) -> _Bracket:
    """A bracket's body (between its ``[`` or ``[^`` and its closing ``]``) read into its
    members and ranges (see :func:`_read_glob`)."""
    members: list[str] = []
    ranges: list[tuple[str, str]] = []
    prior = ""  # the member a "-" would start a range from ("" after a range, or a "]")
    k = 0
    if body.startswith("]"):
        members.append("]")
        k = 1
    while k < len(body):
        c = body[k]
        if c == "-" and prior and k + 1 < len(body):
            end = body[k + 1]
            if end < prior:
                raise ScryError(
                    f"bad path filter {pattern[:40]!r}: the range {shown(prior)}-{shown(end)} "
                    "runs backwards"
                )
            ranges.append((prior, end))
            prior, k = "", k + 2
            continue
        members.append(c)
        prior, k = c, k + 1
    return _Bracket(negated, body, tuple(members), tuple(ranges))


def _regex(pieces: list[str | _Bracket]) -> str:
    """A full-match regex of a glob's pieces (``*`` crosses ``/``, as SQLite's does). An
    interior ``*fixed`` is an atomic lazy group, as fnmatch writes it, so many stars
    cannot backtrack without end."""
    atoms: list[str] = []  # each piece's regex; "*" kept as the sentinel STAR
    for piece in pieces:
        if isinstance(piece, _Bracket):
            inner = "".join(map(re.escape, piece.members)) + "".join(
                f"{re.escape(lo)}-{re.escape(hi)}" for lo, hi in piece.ranges
            )
            atoms.append(("[^" if piece.negated else "[") + inner + "]")
        elif piece == "*":
            if not atoms or atoms[-1] != _STAR:
                atoms.append(_STAR)
        else:
            atoms.append("." if piece == "?" else re.escape(piece))
    out: list[str] = []
    i, n = 0, len(atoms)
    while i < n and atoms[i] != _STAR:
        out.append(atoms[i])
        i += 1
    while i < n:  # STAR fixed STAR fixed ... (fnmatch.translate's scheme)
        i += 1
        fixed: list[str] = []
        while i < n and atoms[i] != _STAR:
            fixed.append(atoms[i])
            i += 1
        if i == n:
            out.append(".*" + "".join(fixed))
        else:
            out.append(f"(?>.*?{''.join(fixed)})")
    return f"(?s:{''.join(out)})\\Z"


#: A ``*`` among a glob's regex atoms (no other atom is a bare ``*``: a literal one is
#: escaped, ``?`` is ``.``, a bracket is a class).
_STAR = "*"
