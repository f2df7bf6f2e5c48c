"""scry's hooks in an agent's hook settings: Claude Code's ``settings.json``, Codex CLI's
``hooks.json`` and Gemini CLI's ``settings.json`` (a ``hooks`` object of event name ->
list of matcher groups, in all three).

Each agent's shape is one :class:`Dialect`, from its documentation:

- Claude Code (code.claude.com/docs/en/hooks): ``PreToolUse`` on ``Grep|Glob|Bash``
  answers with ``hookSpecificOutput.additionalContext`` (augment) or
  ``permissionDecision: deny`` (redirect); ``SessionStart`` takes a ``startup|resume``
  matcher; ``timeout`` in seconds.
- Codex CLI (developers.openai.com/codex/hooks; the wire schema
  ``codex-rs/hooks/schema/generated/pre-tool-use.command.{input,output}.schema.json``):
  the same JSON as Claude Code; its shell tool reaches ``PreToolUse`` as ``tool_name:
  "Bash"`` with ``tool_input: {"command": ...}``; hooks live in ``<repo>/.codex/hooks.json``
  or ``$CODEX_HOME/hooks.json``; a ``SessionStart`` matcher is read against the start's
  source, ``startup``/``resume``/``clear``/``compact`` (``codex-rs/hooks/src/events/
  session_start.rs``); empty output on exit 0 changes nothing; ``timeout`` in seconds.
- Gemini CLI (geminicli.com/docs/hooks/reference): ``BeforeTool`` can only deny (``decision:
  deny`` with a ``reason`` the agent reads) or rewrite the call, so redirect is a
  ``BeforeTool`` hook; context is added after the tool ran, ``AfterTool``'s
  ``hookSpecificOutput.additionalContext`` (appended to the tool's result), so augment is
  an ``AfterTool`` hook. Lifecycle matchers are exact strings, so ``SessionStart`` has
  none; ``timeout`` in milliseconds; empty output on exit 0 changes nothing
  (``packages/core/src/hooks/hookRunner.ts``). Tool names from
  geminicli.com/docs/tools/file-system and /shell: ``search_file_content``, ``glob``,
  ``run_shell_command``.

scry's groups are the ones whose command runs :data:`HOOK_MODULE`: an install adds or
updates them, ``--hooks off`` and an uninstall remove them, and every other hook in the
file is left as it was (byte for byte: :mod:`scrydb.install.jsonc`).
"""

from __future__ import annotations

import os
import shlex
import sys
from dataclasses import dataclass
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
#: The tools Claude Code's PreToolUse hook sees.
PRE_TOOL_MATCHER = "Grep|Glob|Bash"
#: SessionStart sources that start a background index (not ``clear`` or ``compact``).
SESSION_MATCHER = "startup|resume"
#: Gemini CLI's search tools, as its hook payloads name them.
GEMINI_TOOLS = "search_file_content|glob|run_shell_command"


@dataclass(frozen=True)
class Dialect:
    """One agent's hook settings: the events and matchers scry's groups use."""

    name: str  #: the hook's ``--agent``
    #: mode -> (event, matcher, hook event argument) of the tool hook.
    tool_hooks: dict[str, tuple[str, str, str]]
    session_matcher: str | None  #: None: no matcher (every session start)
    timeout: int  #: in the unit the agent reads

    @property
    def events(self) -> tuple[str, ...]:
        """Every event scry's groups may use in this dialect (for removal)."""
        tools = [ev for ev, _m, _a in self.tool_hooks.values()]
        return (*dict.fromkeys(tools), "SessionStart")


CLAUDE = Dialect(
    "claude",
    {m: ("PreToolUse", PRE_TOOL_MATCHER, "pre-tool-use") for m in ("augment", "redirect")},
    SESSION_MATCHER,
    HOOK_TIMEOUT_S,
)
CODEX = Dialect(
    "codex",
    {m: ("PreToolUse", "Bash", "pre-tool-use") for m in ("augment", "redirect")},
    SESSION_MATCHER,
    HOOK_TIMEOUT_S,
)
GEMINI = Dialect(
    "gemini",
    {
        "augment": ("AfterTool", GEMINI_TOOLS, "after-tool"),
        "redirect": ("BeforeTool", GEMINI_TOOLS, "pre-tool-use"),
    },
    None,
    HOOK_TIMEOUT_S * 1000,
)
DIALECTS = {d.name: d for d in (CLAUDE, CODEX, GEMINI)}


def hook_command(event: str, mode: str | None = None, agent: str = "claude") -> str:
    """The shell command of one hook: this interpreter, by absolute path, running the
    hook module (no ``scry`` CLI, no click: it must start fast)."""
    argv = [os.path.abspath(sys.executable), "-m", HOOK_MODULE, event]
    if mode is not None:
        argv += ["--mode", mode]
    if agent != "claude":
        argv += ["--agent", agent]
    return shlex.join(argv)


def groups(mode: str, dialect: Dialect = CLAUDE) -> dict[str, dict[str, Any]]:
    """scry's matcher group per hook event for ``mode`` (augment or redirect)."""

    def group(matcher: str | None, command: str) -> dict[str, Any]:
        hook = {"type": "command", "command": command, "timeout": dialect.timeout}
        return {**({"matcher": matcher} if matcher else {}), "hooks": [hook]}

    event, matcher, arg = dialect.tool_hooks[mode]
    return {
        event: group(matcher, hook_command(arg, mode, dialect.name)),
        "SessionStart": group(
            dialect.session_matcher, hook_command("session-start", None, dialect.name)
        ),
    }


def is_ours(group: Any) -> bool:
    """Whether a matcher group runs scry's hook."""
    if not isinstance(group, dict) or not isinstance(group.get("hooks"), list):
        return False
    return any(
        isinstance(h, dict) and HOOK_MODULE in str(h.get("command", "")) for h in group["hooks"]
    )


def installed_mode(text: str, dialect: Dialect = CLAUDE) -> str | None:
    """The mode of scry's tool hook in a settings text, or None."""
    for event in dialect.events:
        for g in _list(text, event):
            if is_ours(g):
                for h in g["hooks"]:
                    args = shlex.split(str(h.get("command", "")))
                    if "--mode" in args and args.index("--mode") + 1 < len(args):
                        return args[args.index("--mode") + 1]
    return None


def set_hooks(text: str, mode: str, dialect: Dialect = CLAUDE) -> str:
    """``text`` with scry's hooks for ``mode`` (``off`` removes them)."""
    if mode == "off":
        return remove_hooks(text, dialect)
    want = groups(mode, dialect)
    for event in dialect.events:
        if event not in want:  # a mode switch that moves the hook to another event
            text = _remove_ours(text, event)
    for event, group in want.items():
        items = _list(text, event)
        mine = [i for i, g in enumerate(items) if is_ours(g)]
        if mine:
            text = jsonc.replace_item(text, ["hooks", event], mine[0], group)
            for i in reversed(mine[1:]):  # duplicates (a hand copy): one is enough
                text = jsonc.remove_entry(text, ["hooks", event], i)
        else:
            text = jsonc.append_item(text, ["hooks", event], group)
    return text


def remove_hooks(text: str, dialect: Dialect = CLAUDE) -> str:
    """``text`` without scry's hook groups (lists and the ``hooks`` object they leave
    empty go too)."""
    for event in dialect.events:
        text = _remove_ours(text, event)
    return text


def _remove_ours(text: str, event: str) -> str:
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
