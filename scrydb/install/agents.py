"""The one table of coding agents ``scry install`` knows: where each keeps its MCP servers
and its instructions, in which format, at which scope, and the shape of its server entry.

Every location and key here is the agent's documented one (checked against each agent's
documentation, December; docs/agents.md has the table with the sources' names):

| agent | MCP servers, project / user | entry | instructions, project / user |
|---|---|---|---|
| Claude Code | ``.mcp.json`` / ``~/.claude.json`` ``mcpServers`` | type, command, args | CLAUDE.md / ``~/.claude/CLAUDE.md`` |
| Cursor | ``.cursor/mcp.json`` / ``~/.cursor/mcp.json`` ``mcpServers`` | command, args | ``.cursor/rules/scry.mdc`` / (settings only) |
| Codex CLI | ``.codex/config.toml`` / ``$CODEX_HOME/config.toml`` ``[mcp_servers.scry]`` | command, args | AGENTS.md / ``$CODEX_HOME/AGENTS.md`` |
| Gemini CLI | ``.gemini/settings.json`` / ``~/.gemini/settings.json`` ``mcpServers`` | command, args | GEMINI.md / ``~/.gemini/GEMINI.md`` |
| VS Code | ``.vscode/mcp.json`` / the profile's ``mcp.json`` ``servers`` | type, command, args | ``.github/copilot-instructions.md`` / (settings only) |
| Windsurf | — / ``~/.codeium/windsurf/mcp_config.json`` ``mcpServers`` | command, args | — / ``memories/global_rules.md`` |
| opencode | ``opencode.json(c)`` / ``~/.config/opencode/opencode.json(c)`` ``mcp`` | type local, command [argv] | AGENTS.md / ``~/.config/opencode/AGENTS.md`` |
| Zed | ``.zed/settings.json`` / ``~/.config/zed/settings.json`` ``context_servers`` | source custom, command, args | the first of Zed's rule files, else AGENTS.md / (Rules Library only) |
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from scrydb.errors import ScryError

SCOPES = ("project", "user")
#: The server's name in every agent's configuration (tools appear as ``mcp__scry__search``).
SERVER_NAME = "scry"
#: Front matter of the Cursor rule file scry creates: always in context.
CURSOR_RULE_HEAD = (
    "---\ndescription: When to search the code with scry and when grep is still right\n"
    "alwaysApply: true\n---\n\n"
)
#: Zed reads the first of these project rule files that exists (zed.dev/docs/ai/rules).
ZED_RULE_FILES = (
    ".rules",
    ".cursorrules",
    ".windsurfrules",
    ".clinerules",
    ".github/copilot-instructions.md",
    "AGENT.md",
    "AGENTS.md",
    "CLAUDE.md",
    "GEMINI.md",
)


@dataclass(frozen=True)
class Where:
    """Where an install goes: the scope, the project's root (project scope), the home
    directory and the environment (``XDG_CONFIG_HOME``, ``APPDATA``, ``CODEX_HOME``)."""

    scope: str
    root: Path | None
    home: Path
    env: Mapping[str, str] = field(default_factory=dict)
    platform: str = sys.platform

    @property
    def base(self) -> Path:
        """The project's root, or the home directory for the user scope."""
        return self.root if self.root is not None else self.home

    def config_home(self) -> Path:
        """``$XDG_CONFIG_HOME`` or ``~/.config``."""
        xdg = self.env.get("XDG_CONFIG_HOME")
        return Path(xdg) if xdg else self.home / ".config"

    def app_config(self) -> Path:
        """Where desktop applications keep their per-user settings on this platform."""
        if self.platform == "darwin":
            return self.home / "Library" / "Application Support"
        if self.platform.startswith("win"):
            return Path(self.env.get("APPDATA") or self.home / "AppData" / "Roaming")
        return self.config_home()

    def codex_home(self) -> Path:
        return Path(self.env.get("CODEX_HOME") or self.home / ".codex")

    def show(self, path: Path) -> str:
        """``path`` as people read it: relative to the project, or under ``~``."""
        for base, label in ((self.root, ""), (self.home, "~/")):
            if base is None:
                continue
            try:
                rel = path.relative_to(base)
            except ValueError:
                continue
            return label + rel.as_posix() if label else rel.as_posix()
        return str(path)


@dataclass(frozen=True)
class Target:
    """One file an install writes: its format and, for a configuration, the keys of the map
    that holds the MCP servers; for instructions, what starts a file scry creates."""

    path: Path
    fmt: str  #: "json", "toml" or "markdown"
    container: tuple[str, ...] = ()
    prefix: str = ""
    #: JSON: another container the file may already use instead (opencode's ``mcp.servers``).
    alt_container: tuple[str, ...] | None = None


@dataclass(frozen=True)
class Agent:
    """One coding agent (a row of :data:`AGENTS`)."""

    name: str
    label: str
    aliases: tuple[str, ...]
    scopes: tuple[str, ...]  #: the first is the default
    config: Callable[[Where], Target]
    instructions: Callable[[Where], Target | None]
    entry: Callable[[list[str]], dict[str, Any]]  #: the server entry from its argv
    binaries: tuple[str, ...]  #: on PATH when the agent is installed
    homes: Callable[[Where], tuple[Path, ...]]  #: directories it keeps per user
    #: A variable the agent expands to the open project (the server's ``--root``).
    workspace_var: str | None = None
    #: The settings file scry's hooks go into (``--hooks``); None: no hooks for this agent.
    hooks: Callable[[Where], Target] | None = None
    #: Whose hook protocol they speak (a key of ``hookconfig.DIALECTS``).
    hook_dialect: str = "claude"


def _split(argv: list[str]) -> dict[str, Any]:
    return {"command": argv[0], "args": argv[1:]}


def _json(path: Path, *container: str) -> Target:
    return Target(path, "json", container)


def _md(path: Path, prefix: str = "") -> Target:
    return Target(path, "markdown", prefix=prefix)


def _root(w: Where) -> Path:
    assert w.root is not None
    return w.root


def _by_scope(
    project: Callable[[Where], Any] | None, user: Callable[[Where], Any] | None
) -> Callable[[Where], Any]:
    def pick(w: Where) -> Any:
        f = project if w.scope == "project" else user
        return f(w) if f is not None else None

    return pick


def _opencode_file(folder: Path) -> Path:
    """opencode reads ``opencode.json`` or ``opencode.jsonc``: the one that exists."""
    jsonc = folder / "opencode.jsonc"
    return jsonc if jsonc.exists() else folder / "opencode.json"


def _opencode(folder: Path) -> Target:
    return Target(_opencode_file(folder), "json", ("mcp",), alt_container=("mcp", "servers"))


def _zed_rules(w: Where) -> Target:
    root = _root(w)
    for name in ZED_RULE_FILES:
        if (root / name).is_file():
            return _md(root / name)
    return _md(root / "AGENTS.md")


AGENTS: tuple[Agent, ...] = (
    Agent(
        "claude-code",
        "Claude Code",
        ("claude",),
        SCOPES,
        _by_scope(
            lambda w: _json(_root(w) / ".mcp.json", "mcpServers"),
            lambda w: _json(w.home / ".claude.json", "mcpServers"),
        ),
        _by_scope(
            lambda w: _md(_root(w) / "CLAUDE.md"),
            lambda w: _md(w.home / ".claude" / "CLAUDE.md"),
        ),
        lambda argv: {"type": "stdio", **_split(argv)},
        ("claude",),
        lambda w: (w.home / ".claude",),
        # Project hooks go in the local settings (not committed): their command is this
        # machine's interpreter.
        hooks=_by_scope(
            lambda w: _json(_root(w) / ".claude" / "settings.local.json", "hooks"),
            lambda w: _json(w.home / ".claude" / "settings.json", "hooks"),
        ),
    ),
    Agent(
        "cursor",
        "Cursor",
        (),
        SCOPES,
        _by_scope(
            lambda w: _json(_root(w) / ".cursor" / "mcp.json", "mcpServers"),
            lambda w: _json(w.home / ".cursor" / "mcp.json", "mcpServers"),
        ),
        _by_scope(
            lambda w: _md(_root(w) / ".cursor" / "rules" / "scry.mdc", CURSOR_RULE_HEAD), None
        ),
        _split,
        ("cursor", "cursor-agent"),
        lambda w: (w.home / ".cursor",),
        workspace_var="${workspaceFolder}",
    ),
    Agent(
        "codex",
        "Codex CLI",
        ("codex-cli",),
        SCOPES,
        _by_scope(
            lambda w: Target(_root(w) / ".codex" / "config.toml", "toml", ("mcp_servers",)),
            lambda w: Target(w.codex_home() / "config.toml", "toml", ("mcp_servers",)),
        ),
        _by_scope(
            lambda w: _md(_root(w) / "AGENTS.md"), lambda w: _md(w.codex_home() / "AGENTS.md")
        ),
        _split,
        ("codex",),
        lambda w: (w.codex_home(),),
        # developers.openai.com/codex/hooks: ``<repo>/.codex/hooks.json`` (a trusted
        # project) or ``$CODEX_HOME/hooks.json``, Claude Code's shape.
        hooks=_by_scope(
            lambda w: _json(_root(w) / ".codex" / "hooks.json", "hooks"),
            lambda w: _json(w.codex_home() / "hooks.json", "hooks"),
        ),
        hook_dialect="codex",
    ),
    Agent(
        "gemini",
        "Gemini CLI",
        ("gemini-cli",),
        SCOPES,
        _by_scope(
            lambda w: _json(_root(w) / ".gemini" / "settings.json", "mcpServers"),
            lambda w: _json(w.home / ".gemini" / "settings.json", "mcpServers"),
        ),
        _by_scope(
            lambda w: _md(_root(w) / "GEMINI.md"), lambda w: _md(w.home / ".gemini" / "GEMINI.md")
        ),
        _split,
        ("gemini",),
        lambda w: (w.home / ".gemini",),
        # geminicli.com/docs/hooks/reference: the ``hooks`` object of the same settings.json
        # (project hooks run only in a trusted folder).
        hooks=_by_scope(
            lambda w: _json(_root(w) / ".gemini" / "settings.json", "hooks"),
            lambda w: _json(w.home / ".gemini" / "settings.json", "hooks"),
        ),
        hook_dialect="gemini",
    ),
    Agent(
        "vscode",
        "VS Code (Copilot agent mode)",
        ("code", "copilot", "vs-code"),
        SCOPES,
        _by_scope(
            lambda w: _json(_root(w) / ".vscode" / "mcp.json", "servers"),
            lambda w: _json(w.app_config() / "Code" / "User" / "mcp.json", "servers"),
        ),
        _by_scope(lambda w: _md(_root(w) / ".github" / "copilot-instructions.md"), None),
        lambda argv: {"type": "stdio", **_split(argv)},
        ("code",),
        lambda w: (w.app_config() / "Code",),
        workspace_var="${workspaceFolder}",
    ),
    Agent(
        "windsurf",
        "Windsurf",
        (),
        ("user",),
        _by_scope(None, lambda w: _json(_windsurf(w) / "mcp_config.json", "mcpServers")),
        _by_scope(None, lambda w: _md(_windsurf(w) / "memories" / "global_rules.md")),
        _split,
        ("windsurf",),
        lambda w: (_windsurf(w),),
    ),
    Agent(
        "opencode",
        "opencode",
        (),
        SCOPES,
        _by_scope(lambda w: _opencode(_root(w)), lambda w: _opencode(w.config_home() / "opencode")),
        _by_scope(
            lambda w: _md(_root(w) / "AGENTS.md"),
            lambda w: _md(w.config_home() / "opencode" / "AGENTS.md"),
        ),
        lambda argv: {"type": "local", "command": argv, "enabled": True},
        ("opencode",),
        lambda w: (w.config_home() / "opencode",),
    ),
    Agent(
        "zed",
        "Zed",
        (),
        SCOPES,
        _by_scope(
            lambda w: _json(_root(w) / ".zed" / "settings.json", "context_servers"),
            lambda w: _json(_zed_home(w) / "settings.json", "context_servers"),
        ),
        _by_scope(_zed_rules, None),
        lambda argv: {"source": "custom", **_split(argv), "env": {}},
        ("zed", "zeditor"),
        lambda w: (_zed_home(w),),
    ),
)


def _windsurf(w: Where) -> Path:
    return w.home / ".codeium" / "windsurf"


def _zed_home(w: Where) -> Path:
    if w.platform.startswith("win"):
        return w.app_config() / "Zed"
    return w.config_home() / "zed"


def names() -> list[str]:
    """Every agent's name, as ``scry install`` takes it."""
    return [a.name for a in AGENTS]


def get(name: str) -> Agent:
    """The agent called ``name`` (or one of its aliases); a ScryError naming the known ones."""
    key = name.strip().lower()
    for a in AGENTS:
        if key == a.name or key in a.aliases:
            return a
    raise ScryError(f"unknown agent {name!r} (one of {', '.join(names())})")


def found(agent: Agent, where: Where) -> str | None:
    """How this machine shows the agent is installed (its command on PATH, its settings
    folder), or None."""
    for b in agent.binaries:
        if shutil.which(b, path=where.env.get("PATH", os.defpath)):
            return f"`{b}` on PATH"
    for d in agent.homes(where):
        if d.is_dir():
            return where.show(d)
    return None


def scry_command() -> list[str]:
    """How an agent starts this scry: the absolute path of the ``scry`` script beside the
    running interpreter (a virtual environment need not be on PATH), else the interpreter
    with ``-m scrydb.cli``."""
    exe = os.path.abspath(sys.executable)  # not resolved: a venv's python is a symlink
    folder = Path(exe).parent
    for name in ("scry", "scry.exe"):
        p = folder / name
        if p.is_file() and os.access(p, os.X_OK):
            return [str(p)]
    return [exe, "-m", "scrydb.cli"]


def server_argv(agent: Agent, where: Where, command: list[str] | None = None) -> list[str]:
    """The argv the agent runs: ``scry serve`` with the repository named when the agent can
    name the open project (a workspace variable) or the install is a project's; a user
    install leaves it to the directory the agent starts the server in."""
    argv = [*(command or scry_command()), "serve"]
    if agent.workspace_var:
        argv += ["--root", agent.workspace_var]
    elif where.scope == "project" and where.root is not None:
        argv += ["--root", str(where.root)]
    return argv
