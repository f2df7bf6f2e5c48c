"""Fuzz the MCP request handling of ``scry serve``: the server's tool dispatch and
argument validation (the SDK's schema checks and scry's own) down to the answers, over a
real index of tests/sample_repo.py built once per process (lexical: no model).

Input: a JSON object ``{"tool": NAME, "args": {...}}``; anything else is read as byte 0
choosing the tool, bytes 1-2 a signed number for its number argument (when byte 3 is
odd) and the rest the text of its main argument. The ``repos`` argument of search is
left out (it opens other repositories on this machine). Asserted: every call answers or
raises the SDK's ToolError with one line (the message an agent sees), never another
exception; answers hold no NUL or escape character; each call stays under a CPU bound.
"""

from __future__ import annotations

import json
import os
from typing import Any

import anyio
from mcp.server.mcpserver.exceptions import ToolError
from sample_repo import write_repo

from scrydb.mcp_server import ScryService, build_server

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


def setup() -> None:
    """The sample repository, indexed, served by a ScryService without a model or a
    file watcher (its folder lives until the process ends)."""
    global _server, _service
    base = scratch("scry-fuzz-mcp-")
    os.environ["SCRY_CACHE_DIR"] = str(base / "cache")
    repo = write_repo(base / "shop")
    _service = ScryService(repo, base / "shop.db", embed=False, watch=False, warn=lambda m: None)
    _service.start()
    if not _service.watcher.lexical_ready.wait(120):
        raise RuntimeError("the sample repository was not indexed in 120 s")
    _server = build_server(_service)


def request(data: bytes) -> tuple[str, dict[str, Any]]:
    """The tool and arguments an input asks for."""
    try:
        obj = json.loads(data)
        if isinstance(obj, dict) and isinstance(obj.get("tool"), str):
            args = obj.get("args")
            args = args if isinstance(args, dict) else {}
            args.pop("repos", None)
            return obj["tool"], args
    except (ValueError, RecursionError):
        pass
    if not data:
        return "status", {}
    name, main, number = TOOLS[data[0] % len(TOOLS)]
    args: dict[str, Any] = {}
    if main:
        args[main] = text_of(data[4:])
    if number and len(data) > 3 and data[3] & 1:
        args[number] = int.from_bytes(data[1:3], "little", signed=True)
    return name, args


def test_one(data: bytes) -> None:
    """One input: one tool call."""
    if _server is None:
        setup()
    name, args = request(data)
    try:
        with bounded(BOUND_S, f"the {name} tool"):
            res = anyio.run(_server.call_tool, name, args)
    except ToolError as e:
        one_line(str(e), f"the {name} tool's error")
        return
    for part in getattr(res, "content", None) or []:
        text = getattr(part, "text", "")
        if getattr(res, "is_error", False):
            one_line(text, f"the {name} tool's error")
        if "\x00" in text or "\x1b" in text:
            raise Finding(f"the {name} tool answered a control character: {text!r:.300}")
