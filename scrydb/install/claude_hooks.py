"""Claude Code's hooks for scry, in its settings file (``hooks.PreToolUse`` and
``hooks.SessionStart``, each a list of matcher groups).

scry's groups are the ones whose command runs :data:`HOOK_MODULE`: an install adds or
updates them, ``--hooks off`` and an uninstall remove them, and every other hook in the
file is left as it was (byte for byte: :mod:`scrydb.install.jsonc`).
"""

from __future__ import annotations

import os
import shlex
import sys
from typing import Any

from scrydb.install import jsonc

#: The module the hook commands run (``python -m``): how scry's groups are recognised.
HOOK_MODULE = "scrydb.install.hook"
#: What the hook may answer, and what turns it off.
MODES = ("augment", "redirect", "off")
#: The default mode (README: the agent keeps its literal result and gets the ranked places
#: beside it; nothing is taken away, so a wrong guess costs tokens, never an answer).
DEFAULT_MODE = "augment"
#: The harness's own limit on one hook run (seconds); the hook ends itself long before
#: (``hook.LIMIT_S``), this only bounds a hook that could not.
HOOK_TIMEOUT_S = 10
#: The tools the PreToolUse hook sees.
PRE_TOOL_MATCHER = "Grep|Glob|Bash"
#: SessionStart sources that start a background index (not ``clear`` or ``compact``).
SESSION_MATCHER = "startup|resume"


def hook_command(event: str, mode: str | None = None) -> str:
    """The shell command of one hook: this interpreter, by absolute path, running the
    hook module (no ``scry`` CLI, no click: it must start fast)."""
    argv = [os.path.abspath(sys.executable), "-m", HOOK_MODULE, event]
    if mode is not None:
        argv += ["--mode", mode]
    return shlex.join(argv)


def groups(mode: str) -> dict[str, dict[str, Any]]:
    """scry's matcher group per hook event for ``mode`` (augment or redirect)."""

    def group(matcher: str, command: str) -> dict[str, Any]:
        return {
            "matcher": matcher,
            "hooks": [{"type": "command", "command": command, "timeout": HOOK_TIMEOUT_S}],
        }

    return {
        "PreToolUse": group(PRE_TOOL_MATCHER, hook_command("pre-tool-use", mode)),
        "SessionStart": group(SESSION_MATCHER, hook_command("session-start")),
    }


def is_ours(group: Any) -> bool:
    """Whether a matcher group runs scry's hook."""
    if not isinstance(group, dict) or not isinstance(group.get("hooks"), list):
        return False
    return any(
        isinstance(h, dict) and HOOK_MODULE in str(h.get("command", "")) for h in group["hooks"]
    )


def installed_mode(text: str) -> str | None:
    """The mode of scry's PreToolUse hook in a settings text, or None."""
    for g in _list(text, "PreToolUse"):
        if is_ours(g):
            for h in g["hooks"]:
                args = shlex.split(str(h.get("command", "")))
                if "--mode" in args and args.index("--mode") + 1 < len(args):
                    return args[args.index("--mode") + 1]
    return None


def set_hooks(text: str, mode: str) -> str:
    """``text`` with scry's hooks for ``mode`` (``off`` removes them)."""
    if mode == "off":
        return remove_hooks(text)
    for event, want in groups(mode).items():
        items = _list(text, event)
        mine = [i for i, g in enumerate(items) if is_ours(g)]
        if mine:
            text = jsonc.replace_item(text, ["hooks", event], mine[0], want)
            for i in reversed(mine[1:]):  # duplicates (a hand copy): one is enough
                text = jsonc.remove_entry(text, ["hooks", event], i)
        else:
            text = jsonc.append_item(text, ["hooks", event], want)
    return text


def remove_hooks(text: str) -> str:
    """``text`` without scry's hook groups (lists and the ``hooks`` object they leave
    empty go too)."""
    for event in ("PreToolUse", "SessionStart"):
        for i in reversed([i for i, g in enumerate(_list(text, event)) if is_ours(g)]):
            text = jsonc.remove_entry(text, ["hooks", event], i)
    return text


def _list(text: str, event: str) -> list[Any]:
    value = jsonc.get(text, ["hooks", event])
    if value is None:
        return []
    if not isinstance(value, list):
        raise jsonc.EditError(f"hooks.{event} is not a list")
    return value
