"""Fuzz the MCP request handling of ``scry serve``: the server's tool dispatch and
argument validation (the SDK's schema checks and scry's own) down to the answers, over a
real index of tests/sample_repo.py built once per process (lexical: no model).

Input: a JSON object ``{"tool": NAME, "args": {...}}``; anything else is read as byte 0
choosing the tool, bytes 1-2 a signed number for its number argument (when byte 3 is
odd) and the rest the text of its main argument (for ``search`` with bit 2 of byte 3
set: its first line the query, the others its ``repos``).

The search tool's ``repos`` (other repositories, by path or by name) is fuzzed against a
registry of the harness's own: ``SCRY_CACHE_DIR`` is a scratch folder holding the served
repository's index, a second indexed repository (``other``), the index of one whose
folder was deleted (``gone``) and a file that is no index (``junk-*.db``). A ``repos``
value that names an existing file outside the scratch folder is moved inside it (the
same path under ``outside/``, which does not exist) before the call: an index file of
this machine is never opened, and a directory outside (``/``, ``..``, ``~``) has no
index in that registry.

Asserted: every call answers or raises the SDK's ToolError with one line (the message an
agent sees), never another exception (the SDK's UnexpectedToolError, a crash in the
tool, is a finding); answers hold no NUL or escape character; no index file outside the
scratch folder is opened; each call stays under a CPU bound.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import anyio
from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError
from sample_repo import write_repo

import scrydb
from scrydb.mcp_server import ScryService, build_server
from scrydb.paths import default_db_path
from scrydb.store.db import Store

from .common import Finding, bounded, one_line, scratch, text_of

MAX_LEN = 2048
BOUND_S = 5.0
#: (tool, its main text argument, its number argument)
TOOLS: tuple[tuple[str, str | None, str | None], ...] = (
    ("search", "query", "limit"),
    ("read", "file", "start_line"),
    ("related", "file", "line"),
    ("locate", "text", "limit"),
    ("status", None, None),
    ("callers", "target", "depth"),
    ("callees", "target", "depth"),
    ("refs", "target", None),
    ("map", "path", "budget"),
)
_server: Any = None
_service: Any = None
_base: Path | None = None
#: Index files opened outside the scratch folder since the last call (must stay empty).
_outside: list[str] = []


def setup() -> None:
    """The sample repository, indexed, served by a ScryService without a model or a
    file watcher, and the registry ``repos`` is resolved in (see the module's docstring;
    the folder lives until the process ends)."""
    global _server, _service, _base
    base = scratch("scry-fuzz-mcp-").resolve()
    _base = base
    os.environ["SCRY_CACHE_DIR"] = str(base / "cache")
    os.environ.pop("SCRY_DB", None)
    _watch_opens(base)
    repo = write_repo(base / "shop")
    for name in ("other", "gone"):
        extra = write_repo(base / name, {"lib/tool.py": f"def {name}_tool():\n    return 1\n"})
        with scrydb.open(extra, db=default_db_path(extra, env=False)) as ix:
            ix.sync(embed=False)
    for p in sorted((base / "gone").rglob("*"), reverse=True):
        p.rmdir() if p.is_dir() else p.unlink()
    (base / "gone").rmdir()
    (base / "cache" / "junk-000000000000.db").write_bytes(b"not an index\n" * 40)
    db = default_db_path(repo, env=False)
    _service = ScryService(repo, db, embed=False, watch=False, warn=lambda m: None)
    _service.start()
    if not _service.watcher.lexical_ready.wait(120):
        raise RuntimeError("the sample repository was not indexed in 120 s")
    _server = build_server(_service)


def _watch_opens(base: Path) -> None:
    """Record every index file opened outside ``base`` (the property the confinement of
    ``repos`` keeps; :func:`test_one` checks it after each call)."""
    opened = Store._open

    def watched(self: Store) -> None:
        if not os.path.realpath(self.path).startswith(str(base) + os.sep):
            _outside.append(str(self.path))
        opened(self)

    Store._open = watched  # type: ignore[method-assign]


def _confined(spec: Any) -> Any:
    """A ``repos`` value as the tool gets it: unchanged, unless it names an existing
    file outside the scratch folder (resolved as the tool resolves it, relative to the
    served root); that becomes the same path under ``<scratch>/outside/``."""
    assert _base is not None and _service is not None
    if not isinstance(spec, str):
        return spec
    try:
        p = Path(spec).expanduser()
        full = (p if p.is_absolute() else Path(_service.root) / p).resolve()
        if full.is_relative_to(_base) or not full.is_file():
            return spec
    except (OSError, RuntimeError, ValueError):
        return spec  # the tool meets the same error: fuzzed as it is
    return str(_base / "outside" / full.relative_to(full.anchor))


def request(data: bytes) -> tuple[str, dict[str, Any]]:
    """The tool and arguments an input asks for."""
    try:
        obj = json.loads(data)
        if isinstance(obj, dict) and isinstance(obj.get("tool"), str):
            args = obj.get("args")
            args = args if isinstance(args, dict) else {}
            if isinstance(args.get("repos"), list):
                args["repos"] = [_confined(r) for r in args["repos"]]
            return obj["tool"], args
    except (ValueError, RecursionError):
        pass
    if not data:
        return "status", {}
    name, main, number = TOOLS[data[0] % len(TOOLS)]
    args: dict[str, Any] = {}
    if main:
        args[main] = text_of(data[4:])
    if name == "search" and len(data) > 3 and data[3] & 2:
        args["query"], *repos = args["query"].split("\n")
        args["repos"] = [_confined(r) for r in repos]
    if number and len(data) > 3 and data[3] & 1:
        args[number] = int.from_bytes(data[1:3], "little", signed=True)
    return name, args


def test_one(data: bytes) -> None:
    """One input: one tool call."""
    if _server is None:
        setup()
    name, args = request(data)
    _outside.clear()
    try:
        with bounded(BOUND_S, f"the {name} tool"):
            res = anyio.run(_server.call_tool, name, args)
    except UnexpectedToolError as e:  # the SDK's wrapper of a crash (a ToolError too)
        raise Finding(f"the {name} tool crashed: {e.__cause__!r:.300}") from e
    except ToolError as e:
        one_line(str(e), f"the {name} tool's error")
        _check_confined(name)
        return
    _check_confined(name)
    for part in getattr(res, "content", None) or []:
        text = getattr(part, "text", "")
        if getattr(res, "is_error", False):
            one_line(text, f"the {name} tool's error")
        if "\x00" in text or "\x1b" in text:
            raise Finding(f"the {name} tool answered a control character: {text!r:.300}")


def _check_confined(name: str) -> None:
    if _outside:
        raise Finding(f"the {name} tool opened index files outside its folder: {_outside[:3]}")
