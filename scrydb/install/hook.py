"""The hooks: ``python -m scrydb.install.hook pre-tool-use|after-tool --mode augment|redirect
[--agent claude|codex|gemini]`` and ``python -m scrydb.install.hook session-start``.

**PreToolUse** (Claude Code: matcher ``Grep|Glob|Bash``; Codex CLI: ``Bash``, the same
JSON both ways): the harness sends the tool call as JSON on stdin. When
:func:`scrydb.install.hookquery.lookup_for` finds words to search for, the repository's
existing index is searched (the lexical leg, and the dense leg when the query's vector is
already cached: no model is loaded, torch is never imported) and the top hits go back in
the hook protocol's JSON: ``augment`` adds them as ``additionalContext`` beside the tool's
own result; ``redirect`` denies a content search once (``permissionDecision: deny``) with
the hits as the reason the agent reads, and lets the same call through when the agent
repeats it. **Gemini CLI** (geminicli.com/docs/hooks/reference) adds context only after a
tool ran: augment is its ``AfterTool`` hook (``after-tool``: the hits as
``hookSpecificOutput.additionalContext``), redirect its ``BeforeTool`` hook (``decision:
deny`` with the hits as ``reason``); its tool calls are read as the Claude Code tools they
match (:data:`_GEMINI_TOOLS`).

**SessionStart**: starts a background ``scry index`` of the repository (when none is
running), so the session's first search finds embeddings ready. It prints nothing.

All **fail open**: no repository, no index, an index still being built, a weak answer,
a slow one (over :data:`LIMIT_S`, enforced by a watchdog that ends the process) or any
error: the process exits 0 having printed nothing, and the tool runs as it would have.
Nothing here writes to stderr (the harness may show it); ``SCRY_HOOK_DEBUG=1`` does.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import sys
import threading
import time
from pathlib import Path
from typing import Any

#: The hard limit of one hook process, from its start: well under the harness's own
#: timeout (``hookconfig.HOOK_TIMEOUT_S``); over it, the process ends printing nothing.
LIMIT_S = 2.0
#: Environment variable that changes :data:`LIMIT_S` (seconds).
LIMIT_ENV = "SCRY_HOOK_LIMIT"
#: Hook payloads larger than this are not a tool call we search for.
MAX_PAYLOAD = 1_000_000
#: Seconds after a session start started an indexer in which another does not start one.
START_GRACE_S = 30.0
#: Redirect memory older than this is deleted (a session rarely lasts longer).
SEEN_MAX_AGE_S = 3 * 24 * 3600
MODES = ("augment", "redirect")
#: Whose hook protocol a call speaks (``--agent``): Codex CLI's is Claude Code's.
AGENTS = ("claude", "codex", "gemini")
#: Gemini CLI's search tools (geminicli.com/docs/tools/file-system and /shell) as the Claude
#: Code tool hookquery reads, and its argument names -> Gemini's.
_GEMINI_TOOLS: dict[str, tuple[str, dict[str, str]]] = {
    "search_file_content": ("Grep", {"pattern": "pattern", "path": "path", "glob": "include"}),
    "glob": ("Glob", {"pattern": "pattern", "path": "path"}),
    "run_shell_command": ("Bash", {"command": "command"}),
}

_out_lock = threading.Lock()


def main(argv: list[str] | None = None) -> int:
    """Run one hook; always returns 0 (the tool runs unless a decision was printed)."""
    started = time.monotonic()
    args = list(sys.argv[1:] if argv is None else argv)
    debug = bool(os.environ.get("SCRY_HOOK_DEBUG"))
    if not debug:
        _silence_stderr()
    _arm_watchdog(started, _limit())
    try:
        event = args[0] if args else ""
        mode = _option(args, "--mode", "augment")
        agent = _option(args, "--agent", "claude")
        raw = sys.stdin.read(MAX_PAYLOAD + 1)
        if len(raw) > MAX_PAYLOAD:
            return 0
        payload = json.loads(raw)
        if not isinstance(payload, dict):
            return 0
        if event == "session-start":
            session_start(payload)
            return 0
        if event in ("pre-tool-use", "after-tool") and mode in MODES and agent in AGENTS:
            deadline = started + _limit()
            out = pre_tool_use(payload, mode, agent, event == "after-tool", deadline)
            if out is not None:
                _emit(out)
    except BaseException:  # fail open: the tool runs as if there were no hook
        if debug:
            import traceback

            traceback.print_exc()
    return 0


def pre_tool_use(
    payload: dict[str, Any],
    mode: str,
    agent: str = "claude",
    after: bool = False,
    deadline: float | None = None,
) -> dict[str, Any] | None:
    """The hook's JSON answer to one tool call (``after``: Gemini CLI's AfterTool, the tool
    has run), or None to let the tool run untouched; ``deadline`` (``time.monotonic()``)
    bounds the wait for the warm helper (default: :data:`LIMIT_S` from now)."""
    from scrydb.install.hookquery import lookup_for

    if deadline is None:
        deadline = time.monotonic() + _limit()

    cwd = _cwd(payload)
    tool, tool_input = _tool_call(payload, agent)
    look = lookup_for(tool, tool_input, cwd)
    if look is None:
        return None
    if agent == "gemini" and look.tool in ("Grep", "Glob"):
        look = dataclasses.replace(look, tool=str(payload.get("tool_name")))
    # Gemini CLI adds context only after the tool ran; before it, it can only deny.
    adds_context = agent != "gemini" or after
    session = payload.get("session_id")
    redirect = (
        not after and mode == "redirect" and look.redirectable and isinstance(session, str)
    ) and bool(session)
    if not redirect and not adds_context:
        return None
    call = json.dumps([payload.get("tool_name"), payload.get("tool_input")], sort_keys=True)
    memory = _Memory(str(session), call) if redirect else None
    if memory is not None and memory.seen():
        return None  # asked again after a redirect: the agent wants the literal result
    text = _search(look, cwd, deadline)
    if text is None:
        return None
    if memory is not None and memory.remember():
        reason = (
            f"scry answered this search instead of running {look.tool} (`{look.pattern}`): "
            f"{text}\n\nIf these do not answer it, or you need every literal match, repeat "
            "the same call and it runs as is."
        )
        return _deny(agent, reason)
    if not adds_context:
        return None
    note = (
        f"scry, ranked code search over this repository, for `{look.query}` (beside "
        f"{look.tool}'s literal result): {text}"
    )
    return _context(agent, note)


def _tool_call(payload: dict[str, Any], agent: str) -> tuple[str, Any]:
    """The call as the Claude Code tool :func:`~scrydb.install.hookquery.lookup_for`
    reads (Codex CLI sends that shape already: ``Bash`` with ``command``)."""
    name, args = str(payload.get("tool_name", "")), payload.get("tool_input")
    if agent != "gemini":
        return name, args
    tool, keys = _GEMINI_TOOLS.get(name, ("", {}))
    if not isinstance(args, dict):
        return tool, None
    return tool, {ours: args[theirs] for ours, theirs in keys.items() if theirs in args}


def _deny(agent: str, reason: str) -> dict[str, Any]:
    """A refusal the agent reads (geminicli.com/docs/hooks/reference, BeforeTool:
    ``decision``/``reason``; Claude Code and Codex: ``permissionDecision``)."""
    if agent == "gemini":
        return {"decision": "deny", "reason": reason}
    return _output(permissionDecision="deny", permissionDecisionReason=reason)


def _context(agent: str, note: str) -> dict[str, Any]:
    """Text added beside the tool's result (Gemini CLI, AfterTool:
    ``hookSpecificOutput.additionalContext`` is appended to the result)."""
    if agent == "gemini":
        return {"hookSpecificOutput": {"additionalContext": note}}
    return _output(additionalContext=note)


def session_start(payload: dict[str, Any]) -> None:
    """Start a background index of the session's repository unless one is running, and
    the warm helper unless one answers (so the session's first search is quick too)."""
    from scrydb import background
    from scrydb.install import hookd
    from scrydb.paths import default_db_path, is_broad_root, repo_root

    root = repo_root(_cwd(payload))
    if root is None or is_broad_root(root):
        return
    db = default_db_path(root)
    if background.running(db) is None and _first_start(db):
        background.start(root, db, None)
    if not hookd.running():
        hookd.spawn()


def _first_start(db: Path) -> bool:
    """Whether no other session start has started an indexer of ``db`` in the last
    :data:`START_GRACE_S` (a started indexer records itself only once it is running, so
    two sessions starting together would otherwise start two). Best effort."""
    from scrydb.paths import cache_dir

    mark = cache_dir() / "hooks" / (db.name + ".started")
    try:
        mark.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(mark, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
        os.close(fd)
        return True
    except FileExistsError:
        try:
            if time.time() - mark.stat().st_mtime < START_GRACE_S:
                return False
            os.utime(mark)  # an old mark: this start is the first of a new round
            return True
        except OSError:
            return True
    except OSError:
        return True


def _search(look: Any, cwd: str, deadline: float) -> str | None:
    """The top hits for a lookup as text, or None (no repository, no complete index, a
    weak answer). Asked of the warm helper (:mod:`scrydb.install.hookd`) when one is
    running; else searched here, and a helper started for the calls to come."""
    from scrydb.paths import default_db_path, filter_path, repo_root, scope_in

    root = repo_root(cwd)
    if root is None:
        return None
    db = default_db_path(root)
    if not db.is_file():
        return None  # (before anything else: a repository without an index costs little)
    path = None
    if look.path is not None:
        try:
            path = filter_path(root, scope_in(root, look.path, cwd=root) or None)
        except Exception:
            return None  # outside this repository: not ours to answer
    from scrydb.install import hookd

    request = {"root": str(root), "db": str(db), "query": look.query, "lang": look.lang}
    try:
        return hookd.ask(dict(request, path=path), deadline)
    except hookd.NotRunning:
        hookd.spawn()
    return hookd.search_index(root, db, look.query, look.lang, path)


def _option(args: list[str], name: str, default: str) -> str:
    i = args.index(name) + 1 if name in args else 0
    return args[i] if 0 < i < len(args) else default


def _cwd(payload: dict[str, Any]) -> str:
    cwd = payload.get("cwd")
    return cwd if isinstance(cwd, str) and cwd else os.getcwd()


def _output(**fields: str) -> dict[str, Any]:
    return {"hookSpecificOutput": {"hookEventName": "PreToolUse", **fields}}


class _Memory:
    """Which calls of a session were redirected (one file per session in the cache):
    each is denied once, then runs. Best effort: a memory that cannot be read or kept
    means no redirect (the tool runs, with the hits beside it)."""

    def __init__(self, session: str, call: str) -> None:
        from scrydb.paths import cache_dir

        self.folder = cache_dir() / "hooks"
        self.key = hashlib.blake2b(call.encode(), digest_size=12).hexdigest()
        name = hashlib.blake2b(session.encode(), digest_size=12).hexdigest() + ".seen"
        self.path = self.folder / name

    def seen(self) -> bool:
        try:
            return self.key in self.path.read_text(encoding="ascii").split()
        except FileNotFoundError:
            return False
        except OSError:
            return True

    def remember(self) -> bool:
        """Record the call; False when that failed."""
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            with open(self.path, "a", encoding="ascii") as f:
                f.write(self.key + "\n")
        except OSError:
            return False
        _forget_old(self.folder)
        return True


def _forget_old(folder: Path) -> None:
    now = time.time()
    for p in folder.glob("*.seen"):
        try:
            if now - p.stat().st_mtime > SEEN_MAX_AGE_S:
                p.unlink()
        except OSError:
            pass


def _limit() -> float:
    try:
        return max(0.05, float(os.environ.get(LIMIT_ENV, LIMIT_S)))
    except ValueError:
        return LIMIT_S


def _arm_watchdog(started: float, limit: float) -> None:
    """End the process, silently and successfully, once ``limit`` seconds have passed; an
    answer being written is finished first (the two share a lock), never cut."""

    def fire() -> None:
        time.sleep(max(0.0, started + limit - time.monotonic()))
        _out_lock.acquire()
        os._exit(0)

    threading.Thread(target=fire, name="scry-hook-watchdog", daemon=True).start()


def _emit(out: dict[str, Any]) -> None:
    data = (json.dumps(out, ensure_ascii=False) + "\n").encode()
    with _out_lock:
        view = memoryview(data)
        while view:
            view = view[os.write(1, view) :]


def _silence_stderr() -> None:
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 2)
        os.close(devnull)
    except OSError:
        pass


if __name__ == "__main__":
    code = main()
    sys.stdout.flush()
    os._exit(code)  # no interpreter teardown: the hook's time is the agent's time
