"""Fuzz the ``.scry.toml`` loader (:mod:`scrydb.config`) and what a loaded configuration
feeds: the walk's include/exclude patterns (:class:`scrydb.walk.Selector`).

Input: the bytes of a ``.scry.toml`` in a real repository folder. Asserted: loading
gives a Config or a ConfigError with one line, never another exception; a loaded
config keeps every fixed choice in its allowed values and every url http(s); its
include/exclude patterns build the walk's selector and judge paths without raising;
loading twice agrees; and a CPU bound.
"""

from __future__ import annotations

from pathlib import Path

from scrydb.config import CHOICES, CONFIG_NAME, find_config
from scrydb.walk import Selector

from .common import Finding, bounded, expected_errors, scratch

MAX_LEN = 4096
BOUND_S = 2.0
PATHS = ("app/x.py", "build/out.js", "docs/a b.md", "src/[x].ts", ".env", "a/b/c/d.go")
_root: Path | None = None


def setup() -> None:
    """A repository folder of the process's own (kept until the process ends)."""
    global _root
    _root = scratch("scry-fuzz-config-")
    for p in PATHS:
        (_root / p).parent.mkdir(parents=True, exist_ok=True)
        (_root / p).write_text("x = 1\n")


def test_one(data: bytes) -> None:
    """One input: the bytes of ``.scry.toml``."""
    if _root is None:
        setup()
    assert _root is not None
    (_root / CONFIG_NAME).write_bytes(data)
    cfg = None
    with expected_errors("loading .scry.toml"), bounded(BOUND_S, "loading .scry.toml"):
        cfg = find_config(_root)
        select = Selector(_root, cfg.index)
        reasons = [select.reason(p) for p in PATHS]
    if cfg is None:
        return
    for (sec, key), allowed in CHOICES.items():
        if getattr(getattr(cfg, sec), key) not in allowed:
            raise Finding(f"[{sec}] {key} = {getattr(getattr(cfg, sec), key)!r} was accepted")
    for sec in ("embed", "rerank", "chat"):
        url = getattr(cfg, sec).url
        if url and not url.startswith(("http://", "https://")):
            raise Finding(f"[{sec}] url {url!r} was accepted")
    again = find_config(_root)
    if (again.index, again.embed, again.search) != (cfg.index, cfg.embed, cfg.search):
        raise Finding("loading the same file twice gave two configurations")
    if [Selector(_root, again.index).reason(p) for p in PATHS] != reasons:
        raise Finding("the same patterns judged a path two ways")
