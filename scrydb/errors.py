"""Errors that reach the user as one clean line.

The CLI turns every :class:`ScryError` into ``scry: error: <message>`` on stderr and exit
code 2; library callers catch them like any exception. Anything else escaping is a bug.
"""

from __future__ import annotations


def shown(text: str) -> str:
    """Text a user gave (a name, a path, a TOML key) as one printable line inside a
    message: control characters (a newline, a NUL, an escape) written as Python escapes
    them. The one rule for the config's errors (a quoted TOML key may hold a newline:
    found by tests/fuzz/config.py), ``repos`` and the names in answers
    (``present.show_name``)."""
    if text.isprintable():
        return text
    return "".join(ch if ch.isprintable() else repr(ch)[1:-1] for ch in text)


class ScryError(Exception):
    """A problem the user can act on (bad input, bad index file, bad config)."""

    exit_code = 2


class IndexError_(ScryError):
    """The index file is unusable: not a scrydb index, newer schema, another repo."""


class ConfigError(ScryError):
    """The configuration (``.scry.toml`` or ``--config``) is invalid."""


class LockedError(ScryError):
    """Another process holds the index's writer lock."""


class EmbedderError(ScryError):
    """The embedding model could not be loaded or an endpoint failed for good."""
