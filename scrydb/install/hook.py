"""Claude Code hooks: ``python -m scrydb.install.hook pre-tool-use --mode augment|redirect``
and ``python -m scrydb.install.hook session-start``.

**PreToolUse** (matcher ``Grep|Glob|Bash``): the harness sends the tool call as JSON on
stdin. When :func:`scrydb.install.hookquery.lookup_for` finds words to search for, the
repository's existing index is searched (the lexical leg, and the dense leg when the
query's vector is already cached: no model is loaded, torch is never imported) and the
top hits go back in the hook protocol's JSON: ``augment`` adds them as
``additionalContext`` beside the tool's own result; ``redirect`` denies a content search
once (``permissionDecision: deny``) with the hits as the reason the agent reads, and lets
the same call through when the agent repeats it.

**SessionStart**: starts a background ``scry index`` of the repository (when none is
running), so the session's first search finds embeddings ready. It prints nothing.

Both **fail open**: no repository, no index, an index still being built, a weak answer,
a slow one (over :data:`LIMIT_S`, enforced by a watchdog that ends the process) or any
error: the process exits 0 having printed nothing, and the tool runs as it would have.
Nothing here writes to stderr (the harness may show it); ``SCRY_HOOK_DEBUG=1`` does.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import threading
import time
from pathlib import Path
from typing import Any

#: The hard limit of one hook process, from its start: well under the harness's own
#: timeout (``claude_hooks.HOOK_TIMEOUT_S``); over it, the process ends printing nothing.
LIMIT_S = 2.0
#: Environment variable that changes :data:`LIMIT_S` (seconds).
LIMIT_ENV = "SCRY_HOOK_LIMIT"
#: Hits handed to the agent: enough for the usual answer, few enough to stay short.
HITS = 5
#: The hits' text is cut to about this many tokens (``present.fit_budget``).
BUDGET_TOKENS = 1200
#: Hook payloads larger than this are not a tool call we search for.
MAX_PAYLOAD = 1_000_000
#: Redirect memory older than this is deleted (a session rarely lasts longer).
SEEN_MAX_AGE_S = 3 * 24 * 3600
MODES = ("augment", "redirect")

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
        mode = args[args.index("--mode") + 1] if "--mode" in args else "augment"
        raw = sys.stdin.read(MAX_PAYLOAD + 1)
        if len(raw) > MAX_PAYLOAD:
            return 0
        payload = json.loads(raw)
        if not isinstance(payload, dict):
            return 0
        if event == "session-start":
            session_start(payload)
            return 0
        if event == "pre-tool-use" and mode in MODES:
            out = pre_tool_use(payload, mode)
            if out is not None:
                _emit(out)
    except BaseException:  # fail open: the tool runs as if there were no hook
        if debug:
            import traceback

            traceback.print_exc()
    return 0


def pre_tool_use(payload: dict[str, Any], mode: str) -> dict[str, Any] | None:
    """The hook's JSON answer to one PreToolUse payload, or None to let the tool run."""
    from scrydb.install.hookquery import lookup_for

    cwd = _cwd(payload)
    look = lookup_for(str(payload.get("tool_name", "")), payload.get("tool_input"), cwd)
    if look is None:
        return None
    session = payload.get("session_id")
    redirect = mode == "redirect" and look.redirectable and isinstance(session, str) and session
    call = json.dumps([payload.get("tool_name"), payload.get("tool_input")], sort_keys=True)
    memory = _Memory(str(session), call) if redirect else None
    if memory is not None and memory.seen():
        return None  # asked again after a redirect: the agent wants the literal result
    text = _search(look, cwd)
    if text is None:
        return None
    if memory is not None and memory.remember():
        reason = (
            f"scry answered this search instead of running {look.tool} (`{look.pattern}`): "
            f"{text}\n\nIf these do not answer it, or you need every literal match, repeat "
            "the same call and it runs as is."
        )
        return _output(permissionDecision="deny", permissionDecisionReason=reason)
    note = (
        f"scry, ranked code search over this repository, for `{look.query}` (beside "
        f"{look.tool}'s literal result): {text}"
    )
    return _output(additionalContext=note)


def session_start(payload: dict[str, Any]) -> None:
    """Start a background index of the session's repository unless one is running."""
    from scrydb import background
    from scrydb.paths import default_db_path, is_broad_root, repo_root

    root = repo_root(_cwd(payload))
    if root is None or is_broad_root(root):
        return
    db = default_db_path(root)
    if background.running(db) is None:
        background.start(root, db, None)


def _search(look: Any, cwd: str) -> str | None:
    """The top hits for a lookup as text, or None (no repository, no complete index, a
    weak answer)."""
    from scrydb.paths import default_db_path, repo_root, scope_in

    root = repo_root(cwd)
    if root is None:
        return None
    db = default_db_path(root)
    if not db.is_file():
        return None  # (before the imports below: a repository without an index costs little)
    from scrydb import present
    from scrydb.config import find_config
    from scrydb.embed import embedder_id
    from scrydb.index import Index
    from scrydb.store import Readiness

    path = None
    if look.path is not None:
        try:
            path = scope_in(root, look.path, cwd=root)
        except Exception:
            return None  # outside this repository: not ours to answer
    config = find_config(root, None)
    emb = _cached_queries_only(embedder_id(config.embed))
    with Index(root, db, config, readonly=True, embedder=emb) as ix:
        if ix.store.readiness() is not Readiness.READY:
            return None
        res = ix.search(look.query, k=HITS, lang=look.lang, path=path or None)
        if not res or res.weak or res.missing:
            return None
        present.fit_budget(res, BUDGET_TOKENS)
        legs = " + ".join(res.legs) or "lexical"
        head = f"the {len(res)} most likely places, best first ({legs}):"
        return f"{head}\n\n{present.format_results(res)}"


def _cached_queries_only(ident: str) -> Any:
    """An embedder that knows its id and nothing else: a query vector the index already
    cached is used, any other is refused (the dense leg is then skipped with a note), so
    the hook never loads a model."""
    from scrydb.embed import Embedder
    from scrydb.errors import ScryError

    class CachedQueriesOnly(Embedder):
        id = ident

        @property
        def dim(self) -> int:
            raise ScryError("the hook loads no model")

        def embed_documents(self, texts: list[str]) -> Any:
            raise ScryError("the hook loads no model")

        def embed_queries(self, texts: list[str]) -> Any:
            raise ScryError("no cached query vector (the hook loads no model)")

    return CachedQueriesOnly()


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
