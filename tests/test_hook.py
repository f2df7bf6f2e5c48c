"""The hook (``python -m scrydb.install.hook``) as a subprocess, fed recorded payloads of
each harness's documented shape (Claude Code, Codex CLI, Gemini CLI): augment and redirect
answers parse as the protocol's JSON; exact-byte searches pass through; a missing index, a timeout and a crash
all fail open (exit 0, nothing printed) within the limit. ``hookquery`` is tested directly."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sample_repo import write_repo

import scrydb
from scrydb.install import hook, hookd
from scrydb.install.hookquery import Lookup, lookup_for, regex_words

# -- which calls are searched, and for what ---------------------------------------------------


@pytest.mark.parametrize(
    ("pattern", "words"),
    [
        ("compute_backoff", "compute_backoff"),
        ("retry backoff", "retry backoff"),
        (r"def compute_backoff\(", "def compute_backoff("),
        (r"\bRetryPolicy\b", "RetryPolicy"),
        ("class.*Repository", "class Repository"),
        (r"user_id\s*=\s*", "user_id ="),
        ("fetchUser|loadUser", "fetchUser loadUser"),
        ("(timeout|deadline)_ms", "timeout deadline _ms"),
        (r"config\.toml", "config.toml"),
        (r"def\s+\w+\(", None),  # \w: a real regular expression
        ("^import", None),
        ("[Rr]etry", None),
        ("err(or)?", None),
        ("a{2,}", None),
        ("(?i)retry", None),
        ("id", None),  # no word of three letters
        ("x" * 300, None),
    ],
)
def test_regex_words(pattern: str, words: str | None) -> None:
    assert regex_words(pattern) == words


def test_fixed_strings_are_taken_literally() -> None:
    assert regex_words("items[0].get(", fixed=True) == "items[0].get("


def test_lookups_for_tool_calls(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "app.py").write_text("x = 1\n")
    cwd = str(tmp_path)
    src = str(tmp_path / "src")

    def look(tool: str, inp: dict[str, Any]) -> Lookup | None:
        return lookup_for(tool, inp, cwd)

    g = look("Grep", {"pattern": "retry", "path": "src", "glob": "*.py"})
    assert g == Lookup("retry", "retry", "Grep", src, "python")
    assert look("Grep", {"pattern": "retry", "type": "rust"}) == Lookup(
        "retry", "retry", "Grep", None, "rust"
    )
    assert look("Grep", {"pattern": "retry", "path": "src/app.py"}) is None  # a known file
    assert look("Grep", {"pattern": "retry", "output_mode": "count"}) is None
    assert look("Grep", {"pattern": "retry", "multiline": True}) is None
    gl = look("Glob", {"pattern": "**/*retry*.py"})
    assert gl is not None and gl.query == "retry" and gl.lang == "python" and not gl.redirectable
    assert look("Glob", {"pattern": "**/*.py"}) is None  # no word to search for
    assert look("Glob", {"pattern": "src/app.py"}) is None  # a concrete path
    b = look("Bash", {"command": "rg -n -t py 'retry backoff' src"})
    assert b == Lookup("retry backoff", "retry backoff", "rg", src, "python")
    b = look("Bash", {"command": "grep -rn --include=*.py -A3 RetryPolicy . | head -20"})
    assert b is not None and b.query == "RetryPolicy" and b.lang == "python"
    assert look("Bash", {"command": "git grep -n compute_backoff"}) is not None
    f = look("Bash", {"command": "find src -name '*backoff*'"})
    assert f is not None and f.query == "backoff" and f.path == src and not f.redirectable
    for command in [
        "grep -c retry -r .",  # a count
        "rg -l retry",  # a file list
        "grep -v retry src/app.py",
        "rg retry | wc -l",  # piped into a counter
        "grep retry src/app.py",  # a known file
        "grep -rn retry . > out.txt",  # redirection
        "cd src && grep -rn retry .",  # compound
        "rg -r new retry",  # rg's replace
        "find . -name '*retry*' -delete",
        "find . -type f",
        "grep -rn '^def ' .",
        "rg $(cat pattern.txt)",
        "ls -la",
    ]:
        assert look("Bash", {"command": command}) is None, command
    assert look("Read", {"file_path": "src/app.py"}) is None
    assert look("Bash", {"command": "grep 'unclosed"}) is None


# -- the hook process ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def indexed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, dict[str, str]]]:
    """The sample repository (a root: .scry.toml), indexed with the real model; the env
    that points the hook at its index."""
    base = tmp_path_factory.mktemp("hook")
    repo = write_repo(base / "shop")
    (repo / ".scry.toml").write_text("")
    db = base / "shop.db"
    with scrydb.open(repo, db=db) as ix:
        ix.sync()
    env = dict(os.environ, SCRY_DB=str(db), SCRY_CACHE_DIR=str(base / "cache"))
    env.pop("SCRY_HOOK_DEBUG", None)
    env.pop(hook.LIMIT_ENV, None)
    env[hookd.HELPER_ENV] = "1"  # the hooks here start a warm helper and use it
    env[hookd.IDLE_ENV] = "120"
    yield repo, env
    stop_helpers(base / "cache")


def stop_helpers(cache: Path) -> int:
    """Stop the warm helpers the hooks started under ``cache``; how many there were."""
    return sum(hookd.stop(p) for p in (cache / "hooks").glob("helper-*.sock"))


def payload(
    tool: str, tool_input: dict[str, Any], cwd: Path, session: str = "sess-1"
) -> dict[str, Any]:
    """A PreToolUse payload as Claude Code sends it on stdin."""
    return {
        "session_id": session,
        "transcript_path": str(cwd / ".claude" / "transcript.jsonl"),
        "cwd": str(cwd),
        "permission_mode": "default",
        "hook_event_name": "PreToolUse",
        "tool_name": tool,
        "tool_input": tool_input,
        "tool_use_id": "toolu_01ABC123",
    }


def run_hook(
    data: dict[str, Any] | str, *args: str, env: dict[str, str], cwd: Path
) -> tuple[subprocess.CompletedProcess[str], float]:
    """One hook process; (the result, its wall time in seconds)."""
    t0 = time.perf_counter()
    r = subprocess.run(
        [sys.executable, "-m", "scrydb.install.hook", *args],
        input=data if isinstance(data, str) else json.dumps(data),
        env=env,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
    )
    return r, time.perf_counter() - t0


def answer(r: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    """The hook's JSON answer, checked against the protocol's shape."""
    assert r.returncode == 0 and r.stderr == "", r.stderr
    out = json.loads(r.stdout)
    assert set(out) == {"hookSpecificOutput"}
    spec = out["hookSpecificOutput"]
    assert spec["hookEventName"] == "PreToolUse"
    assert set(spec) <= {
        "hookEventName",
        "permissionDecision",
        "permissionDecisionReason",
        "additionalContext",
    }
    return dict(spec)


def silent(r: subprocess.CompletedProcess[str]) -> bool:
    return r.returncode == 0 and r.stdout == "" and r.stderr == ""


def site(tmp_path: Path, code: str) -> dict[str, str]:
    """PYTHONPATH with a sitecustomize.py running ``code`` in the hook process."""
    folder = tmp_path / "site"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "sitecustomize.py").write_text(textwrap.dedent(code))
    return {"PYTHONPATH": os.pathsep.join([str(folder), os.environ.get("PYTHONPATH", "")])}


@pytest.mark.slow
def test_augment_adds_ranked_hits_beside_the_tool(
    indexed: tuple[Path, dict[str, str]], tmp_path: Path
) -> None:
    repo, env = indexed
    log = tmp_path / "imports.log"
    env = dict(env, **site(tmp_path, NO_TORCH), SCRY_IMPORT_LOG=str(log))
    grep = {"pattern": "compute_backoff", "path": str(repo), "output_mode": "content", "-n": True}
    r, _ = run_hook(
        payload("Grep", grep, repo), "pre-tool-use", "--mode", "augment", env=env, cwd=repo
    )
    spec = answer(r)
    assert "permissionDecision" not in spec  # the tool runs, with the hits beside it
    context = spec["additionalContext"]
    assert "app/retry.py:9-12" in context and "compute_backoff" in context
    assert "Grep's literal result" in context
    bash = {"command": "rg -n 'RetryPolicy' app", "description": "find the policy"}
    r, _ = run_hook(payload("Bash", bash, repo), "pre-tool-use", env=env, cwd=repo)
    assert "app/retry.py:15" in answer(r)["additionalContext"]
    assert not log.exists(), log.read_text()  # neither torch nor sentence-transformers


NO_TORCH = """
import os, sys
class _Watch:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in ("torch", "sentence_transformers", "transformers"):
            with open(os.environ["SCRY_IMPORT_LOG"], "a") as f:
                f.write(name + "\\n")
        return None
if os.environ.get("SCRY_IMPORT_LOG"):
    sys.meta_path.insert(0, _Watch())
"""


@pytest.mark.slow
def test_redirect_answers_once_then_lets_the_same_call_run(
    indexed: tuple[Path, dict[str, str]],
) -> None:
    repo, env = indexed
    data = payload("Grep", {"pattern": "retry backoff"}, repo, session="sess-redirect")
    r, _ = run_hook(data, "pre-tool-use", "--mode", "redirect", env=env, cwd=repo)
    spec = answer(r)
    assert spec["permissionDecision"] == "deny"
    assert "app/retry.py" in spec["permissionDecisionReason"]
    assert "repeat the same call" in spec["permissionDecisionReason"]
    r, _ = run_hook(data, "pre-tool-use", "--mode", "redirect", env=env, cwd=repo)
    assert silent(r)  # asked again: Grep runs
    other = payload("Grep", {"pattern": "retry backoff"}, repo, session="sess-other")
    r, _ = run_hook(other, "pre-tool-use", "--mode", "redirect", env=env, cwd=repo)
    assert answer(r)["permissionDecision"] == "deny"
    # A file-name search is never denied: its hits only go beside it.
    glob = payload("Glob", {"pattern": "**/*retry*.py"}, repo, session="sess-glob")
    r, _ = run_hook(glob, "pre-tool-use", "--mode", "redirect", env=env, cwd=repo)
    spec = answer(r)
    assert "permissionDecision" not in spec and "app/retry.py" in spec["additionalContext"]


def codex_payload(command: str, cwd: Path, session: str = "codex-1") -> dict[str, Any]:
    """A PreToolUse payload as Codex CLI sends it for its shell tool (every field its
    documented wire schema requires: codex-rs/hooks/schema/generated/
    pre-tool-use.command.input.schema.json)."""
    return {
        "session_id": session,
        "turn_id": "turn-1",
        "transcript_path": None,
        "cwd": str(cwd),
        "hook_event_name": "PreToolUse",
        "model": "gpt-5-codex",
        "permission_mode": "default",
        "tool_name": "Bash",
        "tool_input": {"command": command},
        "tool_use_id": "call_01",
    }


def gemini_payload(
    event: str, tool: str, tool_input: dict[str, Any], cwd: Path, session: str = "gem-1"
) -> dict[str, Any]:
    """A BeforeTool / AfterTool payload as Gemini CLI sends it (geminicli.com/docs/hooks/
    reference: the base fields, ``tool_name``, ``tool_input``, and after the tool its
    ``tool_response``); tool names and arguments from its tools reference."""
    data: dict[str, Any] = {
        "session_id": session,
        "transcript_path": str(cwd / ".gemini" / "chat.json"),
        "cwd": str(cwd),
        "hook_event_name": event,
        "timestamp": "2026-12-07T21:00:00.000Z",
        "tool_name": tool,
        "tool_input": tool_input,
    }
    if event == "AfterTool":
        data["tool_response"] = {"llmContent": "Found 1 match", "returnDisplay": "1 match"}
    return data


@pytest.mark.slow
def test_codex_gets_claude_codes_json_for_its_shell_tool(
    indexed: tuple[Path, dict[str, str]],
) -> None:
    repo, env = indexed
    args = ("pre-tool-use", "--mode", "augment", "--agent", "codex")
    r, _ = run_hook(codex_payload("rg -n compute_backoff app", repo), *args, env=env, cwd=repo)
    spec = answer(r)
    assert "app/retry.py:9-12" in spec["additionalContext"]
    assert "rg's literal result" in spec["additionalContext"]
    redirect = ("pre-tool-use", "--mode", "redirect", "--agent", "codex")
    data = codex_payload("grep -rn 'retry backoff' .", repo, session="codex-r")
    r, _ = run_hook(data, *redirect, env=env, cwd=repo)
    assert answer(r)["permissionDecision"] == "deny"
    r, _ = run_hook(data, *redirect, env=env, cwd=repo)
    assert silent(r)  # asked again: the command runs
    r, _ = run_hook(codex_payload("rg -c retry app", repo), *args, env=env, cwd=repo)
    assert silent(r)  # a count: exact output wanted


@pytest.mark.slow
def test_gemini_augments_after_the_tool_and_redirects_before_it(
    indexed: tuple[Path, dict[str, str]],
) -> None:
    repo, env = indexed
    after = ("after-tool", "--mode", "augment", "--agent", "gemini")
    grep = {"pattern": "compute_backoff", "path": str(repo), "include": "*.py"}
    data = gemini_payload("AfterTool", "search_file_content", grep, repo)
    r, _ = run_hook(data, *after, env=env, cwd=repo)
    assert r.returncode == 0 and r.stderr == "", r.stderr
    out = json.loads(r.stdout)
    assert set(out) == {"hookSpecificOutput"} and set(out["hookSpecificOutput"]) == {
        "additionalContext"
    }
    context = out["hookSpecificOutput"]["additionalContext"]
    assert "app/retry.py:9-12" in context
    assert "search_file_content's literal result" in context
    shell = gemini_payload(
        "AfterTool", "run_shell_command", {"command": "grep -rn RetryPolicy ."}, repo
    )
    r, _ = run_hook(shell, *after, env=env, cwd=repo)
    assert "app/retry.py:15" in json.loads(r.stdout)["hookSpecificOutput"]["additionalContext"]
    glob = gemini_payload("AfterTool", "glob", {"pattern": "**/*retry*.py"}, repo)
    r, _ = run_hook(glob, *after, env=env, cwd=repo)
    assert "app/retry.py" in json.loads(r.stdout)["hookSpecificOutput"]["additionalContext"]
    before = ("pre-tool-use", "--mode", "redirect", "--agent", "gemini")
    data = gemini_payload("BeforeTool", "search_file_content", {"pattern": "retry backoff"}, repo)
    r, _ = run_hook(data, *before, env=env, cwd=repo)
    assert r.returncode == 0 and r.stderr == "", r.stderr
    out = json.loads(r.stdout)
    assert set(out) == {"decision", "reason"} and out["decision"] == "deny"
    assert "app/retry.py" in out["reason"] and "repeat the same call" in out["reason"]
    r, _ = run_hook(data, *before, env=env, cwd=repo)
    assert silent(r)  # asked again: the tool runs
    # BeforeTool cannot add context: a file-name search (never denied) passes through,
    # as does a tool scry does not read.
    glob = gemini_payload("BeforeTool", "glob", {"pattern": "**/*retry*.py"}, repo)
    assert silent(run_hook(glob, *before, env=env, cwd=repo)[0])
    read = gemini_payload("BeforeTool", "read_file", {"path": str(repo / "app/retry.py")}, repo)
    assert silent(run_hook(read, *before, env=env, cwd=repo)[0])


@pytest.mark.slow
def test_exact_byte_searches_pass_through(indexed: tuple[Path, dict[str, str]]) -> None:
    repo, env = indexed
    calls = [
        ("Grep", {"pattern": r"def\s+\w+\(", "output_mode": "content"}),
        ("Grep", {"pattern": "compute_backoff", "path": "app/retry.py"}),
        ("Grep", {"pattern": "compute_backoff", "output_mode": "count"}),
        ("Glob", {"pattern": "app/retry.py"}),
        ("Bash", {"command": "grep -c compute_backoff -r ."}),
        ("Bash", {"command": "rg compute_backoff | wc -l"}),
        ("Read", {"file_path": str(repo / "app" / "retry.py")}),
        ("Grep", {"pattern": "zzqqxx_nothing_like_this"}),  # nothing found: nothing said
    ]
    for tool, inp in calls:
        r, _ = run_hook(
            payload(tool, inp, repo), "pre-tool-use", "--mode", "redirect", env=env, cwd=repo
        )
        assert silent(r), (tool, inp, r.stdout)


@pytest.mark.slow
def test_the_dense_leg_joins_when_the_query_vector_is_cached(
    indexed: tuple[Path, dict[str, str]],
) -> None:
    repo, env = indexed
    question = "where is the delay between attempts computed"
    data = payload("Grep", {"pattern": question}, repo)
    r, _ = run_hook(data, "pre-tool-use", env=env, cwd=repo)
    assert "(lexical)" in answer(r)["additionalContext"]  # no vector: no model loaded
    s = subprocess.run(
        [sys.executable, "-m", "scrydb.cli", "search", question, "--no-sync", "-n", "3"],
        env=env,
        cwd=repo,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert s.returncode == 0, s.stderr  # computes the query vector and caches it
    r, _ = run_hook(data, "pre-tool-use", env=env, cwd=repo)
    context = answer(r)["additionalContext"]
    assert "(lexical + dense)" in context and "app/retry.py" in context


@pytest.mark.slow
def test_fails_open_without_an_index_or_a_repository(tmp_path: Path) -> None:
    repo = tmp_path / "fresh"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    (repo / "a.py").write_text("def compute_backoff():\n    return 1\n")
    env = dict(os.environ, SCRY_CACHE_DIR=str(tmp_path / "cache"))
    env.pop("SCRY_DB", None)
    for cwd in (repo, tmp_path):
        data = payload("Grep", {"pattern": "compute_backoff"}, cwd)
        r, secs = run_hook(data, "pre-tool-use", env=env, cwd=cwd)
        assert silent(r) and secs < hook.LIMIT_S + 5
    assert not (tmp_path / "cache").exists() or not list((tmp_path / "cache").glob("*.db"))


SLOW_LOOKUP = """
import time
import scrydb.install.hookquery as q
_real = q.lookup_for
def lookup_for(*args, **kwargs):
    time.sleep(60)
    return _real(*args, **kwargs)
q.lookup_for = lookup_for
"""

CRASH = """
import scrydb.install.hookquery as q
def lookup_for(*args, **kwargs):
    raise RuntimeError("injected crash")
q.lookup_for = lookup_for
"""


@pytest.mark.slow
def test_fails_open_on_timeout_and_on_crash(
    indexed: tuple[Path, dict[str, str]], tmp_path: Path
) -> None:
    repo, env = indexed
    data = payload("Grep", {"pattern": "compute_backoff"}, repo)
    slow_env = dict(env, **site(tmp_path / "slow", SLOW_LOOKUP), **{hook.LIMIT_ENV: "1.0"})
    r, secs = run_hook(data, "pre-tool-use", env=slow_env, cwd=repo)
    assert silent(r) and secs < 1.0 + 5, secs  # the watchdog, not the 60 s sleep
    crash_env = dict(env, **site(tmp_path / "crash", CRASH))
    r, _ = run_hook(data, "pre-tool-use", env=crash_env, cwd=repo)
    assert silent(r)
    r, _ = run_hook(data, "pre-tool-use", env=dict(crash_env, SCRY_HOOK_DEBUG="1"), cwd=repo)
    assert r.returncode == 0 and "injected crash" in r.stderr  # the crash did happen
    for garbage in ("", "not json", "[1, 2]", json.dumps({"tool_name": "Grep"})):
        r, _ = run_hook(garbage, "pre-tool-use", env=env, cwd=repo)
        assert silent(r)
    r, _ = run_hook(data, "pre-tool-use", "--mode", "bogus", env=env, cwd=repo)
    assert silent(r)


@pytest.mark.slow
def test_session_start_starts_a_background_index(tmp_path: Path) -> None:
    """A real background ``scry index`` is started (once, however many sessions start);
    when it is done the index holds every chunk's embedding and the session's first Grep
    is answered from it (dense leg included, once the query's vector is cached)."""
    from scrydb import background
    from scrydb.paths import default_db_path

    repo = tmp_path / "proj"
    (repo / "app").mkdir(parents=True)  # small: the indexer's time is mostly the model's load
    (repo / "app" / "retry.py").write_text(
        "def compute_backoff(attempt):\n    return min(30, 2 ** attempt)\n"
    )
    (repo / "app" / "cart.py").write_text("def cart_total(items):\n    return sum(items)\n")
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    cache = tmp_path / "cache"
    env = dict(os.environ, SCRY_CACHE_DIR=str(cache), **{hookd.HELPER_ENV: "0"})
    env.pop("SCRY_DB", None)
    start = {
        "session_id": "s",
        "transcript_path": "t",
        "cwd": str(repo),
        "hook_event_name": "SessionStart",
        "source": "startup",
    }
    # Two sessions start at once (the indexer records itself only once it runs).
    t0 = time.perf_counter()
    both = [
        subprocess.Popen(
            [sys.executable, "-m", "scrydb.install.hook", "session-start"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            env=env, cwd=repo, text=True,
        )
        for _ in range(2)
    ]  # fmt: skip
    for proc in both:
        out, err = proc.communicate(json.dumps(start), timeout=120)
        assert proc.returncode == 0 and out == "" and err == ""
    assert time.perf_counter() - t0 < hook.LIMIT_S + 5  # they start it, never wait for it
    old = os.environ.get("SCRY_CACHE_DIR")
    os.environ["SCRY_CACHE_DIR"] = str(cache)
    try:
        db = default_db_path(repo)
        deadline = time.monotonic() + 240
        while background.running(db) is None and time.monotonic() < deadline:
            time.sleep(0.1)  # the indexer records itself once it has started
        assert background.running(db) is not None
        r, _ = run_hook(start, "session-start", "--agent", "gemini", env=env, cwd=repo)
        assert silent(r)
        log = background.log_path(db).read_text()
        assert log.count("scry index (background)") == 1  # one indexer for three starts
        while background.running(db) is not None and time.monotonic() < deadline:
            time.sleep(0.5)
        assert background.running(db) is None, "the background index did not finish"
        with scrydb.open(repo, readonly=True) as ix:
            st = ix.status(check_stale=False, check_git=False)
        assert st.chunks > 0 and st.vectors > 0 and st.pending == 0  # embeddings ready
    finally:
        if old is None:
            os.environ.pop("SCRY_CACHE_DIR", None)
        else:
            os.environ["SCRY_CACHE_DIR"] = old
    grep = payload("Grep", {"pattern": "compute_backoff"}, repo)
    r, _ = run_hook(grep, "pre-tool-use", env=env, cwd=repo)
    assert "app/retry.py:1-2" in answer(r)["additionalContext"]
    # Fails open: no repository (nothing started, nothing written), garbage on stdin.
    outside = dict(start, cwd=str(tmp_path))
    c2 = dict(env, SCRY_CACHE_DIR=str(tmp_path / "c2"))
    r, _ = run_hook(outside, "session-start", env=c2, cwd=tmp_path)
    assert silent(r) and not (tmp_path / "c2").exists()
    for garbage in ("", "{", "[]"):
        assert silent(run_hook(garbage, "session-start", env=c2, cwd=repo)[0])
    assert not (tmp_path / "c2").exists()


@pytest.mark.slow
def test_the_warm_helper_answers_as_the_hook_does_and_fails_open(
    indexed: tuple[Path, dict[str, str]], tmp_path: Path
) -> None:
    """The first answering hook starts a helper (a socket only its user can open); later
    hooks get its answer, the same text a hook without it computes; a helper that died is
    replaced; one that does not answer costs the hook its limit, never the tool its run."""
    repo, env = indexed
    cache = Path(env["SCRY_CACHE_DIR"])
    data = payload("Grep", {"pattern": "compute_backoff"}, repo)
    alone, _ = run_hook(data, "pre-tool-use", env=dict(env, **{hookd.HELPER_ENV: "0"}), cwd=repo)
    r, _ = run_hook(data, "pre-tool-use", env=env, cwd=repo)
    deadline = time.monotonic() + 60
    while not list((cache / "hooks").glob("helper-*.sock")) and time.monotonic() < deadline:
        time.sleep(0.1)  # the helper binds its socket once its imports are done
    (sock,) = (cache / "hooks").glob("helper-*.sock")
    assert sock.stat().st_mode & 0o777 == 0o600
    with_helper, _ = run_hook(data, "pre-tool-use", env=env, cwd=repo)
    assert answer(with_helper) == answer(alone) == answer(r)
    assert stop_helpers(cache) == 1 and not sock.exists()
    r, _ = run_hook(data, "pre-tool-use", env=env, cwd=repo)  # none running: answers itself
    assert answer(r) == answer(alone)
    while not sock.exists() and time.monotonic() < deadline:
        time.sleep(0.1)  # and started a new one
    assert stop_helpers(cache) == 1
    # A helper that accepts and never answers: the hook gives up at its limit, silently.
    import socket

    mute = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    mute.bind(str(sock))
    mute.listen(4)
    try:
        slow = dict(env, **{hook.LIMIT_ENV: "1.0"})
        r, secs = run_hook(data, "pre-tool-use", env=slow, cwd=repo)
        assert silent(r) and secs < 1.0 + 5, secs
    finally:
        mute.close()
        sock.unlink()


@pytest.mark.slow
def test_session_start_starts_the_warm_helper_too(tmp_path: Path) -> None:
    from scrydb import background

    repo = tmp_path / "empty"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    cache = tmp_path / "cache"
    env = dict(os.environ, SCRY_CACHE_DIR=str(cache), **{hookd.HELPER_ENV: "1"})
    env.pop("SCRY_DB", None)
    start = {"session_id": "s", "cwd": str(repo), "hook_event_name": "SessionStart"}
    r, _ = run_hook(start, "session-start", env=env, cwd=repo)
    assert silent(r)
    deadline = time.monotonic() + 120
    while not list((cache / "hooks").glob("helper-*.sock")) and time.monotonic() < deadline:
        time.sleep(0.1)  # the helper binds its socket once its imports are done
    assert stop_helpers(cache) == 1
    old = os.environ.get("SCRY_CACHE_DIR")
    os.environ["SCRY_CACHE_DIR"] = str(cache)
    try:
        from scrydb.paths import default_db_path

        db = default_db_path(repo)
        while background.running(db) is not None and time.monotonic() < deadline:
            time.sleep(0.1)  # the background index of the empty repository ends by itself
    finally:
        if old is None:
            os.environ.pop("SCRY_CACHE_DIR", None)
        else:
            os.environ["SCRY_CACHE_DIR"] = old
