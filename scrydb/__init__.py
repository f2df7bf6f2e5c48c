"""scrydb: local hybrid code search in one SQLite file.

import scrydb
with scrydb.open("path/to/repo") as ix:
    ix.sync()
    hits = ix.search("where is the retry backoff computed", k=5)
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from scrydb.errors import ScryError

if TYPE_CHECKING:
    from scrydb.config import Config
    from scrydb.index import Index, Status, find_root, open
    from scrydb.multi import search_many
    from scrydb.results import Hit, Match, ReadResult, Results
    from scrydb.sync import SyncReport

__version__ = "0.1.0"

#: Names imported on first use: the index pulls in SQLite, sqlite-vec and numpy, which
#: ``scry --help`` and other light commands must not pay for; the config and results
#: modules (dataclasses, tomllib) are not needed by a hook process (scrydb.install.hook).
_LAZY = {
    "Config": "scrydb.config",
    "Hit": "scrydb.results",
    "Match": "scrydb.results",
    "ReadResult": "scrydb.results",
    "Results": "scrydb.results",
    "Index": "scrydb.index",
    "Status": "scrydb.index",
    "find_root": "scrydb.index",
    "open": "scrydb.index",
    "search_many": "scrydb.multi",
    "SyncReport": "scrydb.sync",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'scrydb' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


__all__ = [
    "Config",
    "Hit",
    "Index",
    "Match",
    "ReadResult",
    "Results",
    "ScryError",
    "Status",
    "SyncReport",
    "__version__",
    "find_root",
    "open",
    "search_many",
]
