"""``scry install`` and ``scry uninstall``: scry's MCP server, usage instructions and (Claude
Code, Codex CLI, Gemini CLI) hooks in a coding agent's own files (the work is
:mod:`scrydb.install`)."""

from __future__ import annotations

import os
from pathlib import Path

import click

from scrydb.errors import ScryError
from scrydb.install import agents, plan
from scrydb.install.agents import Agent, Where
from scrydb.paths import repo_root

_AGENT_HELP = "claude-code, cursor, codex, gemini, vscode, windsurf, opencode or zed"


def _scope_options(f: click.decorators.FC) -> click.decorators.FC:
    f = click.option(
        "--user", "scope", flag_value="user", help="The agent's per-user configuration."
    )(f)
    return click.option(
        "--project",
        "scope",
        flag_value="project",
        help="The repository you are in (the default where the agent has a project file).",
    )(f)


@click.command("install")
@click.argument("agent", required=False)
@_scope_options
@click.option("--dry-run", is_flag=True, help="Show what would change (a diff); write nothing.")
@click.option(
    "--hooks",
    type=click.Choice(["augment", "redirect", "off"]),
    default=None,
    help="Claude Code, Codex CLI and Gemini CLI: scry's ranked hits beside the agent's "
    "own grep/find results (augment, the default: nothing is taken away), instead of them "
    "once (redirect: the search is denied with the hits; repeating it runs it), or no "
    "hooks (off). Without it, an install keeps the mode already installed.",
)
@click.option(
    "--list",
    "list_",
    is_flag=True,
    help="Which agents are on this machine, the files each install writes, and what of "
    "scry is in them now.",
)
def install_cmd(
    agent: str | None, scope: str | None, dry_run: bool, hooks: str | None, list_: bool
) -> None:
    """Install scry into a coding agent: MCP server, usage instructions, hooks.

    AGENT is one of claude-code, cursor, codex, gemini, vscode, windsurf, opencode, zed.
    The MCP server entry is merged into the agent's own configuration file (other servers
    and settings are kept as they are; the file is backed up first; a malformed file is
    refused and left untouched). The usage instructions (when to use scry, when grep is
    still right) go between markers into the agent's instruction file (CLAUDE.md,
    AGENTS.md, a Cursor rule, ...). For Claude Code, Codex CLI and Gemini CLI it also adds
    hooks that answer the agent's own grep/find calls with scry's ranked hits (--hooks).
    Running it twice changes nothing; `scry uninstall AGENT` removes exactly what it
    added. The server is started by this scry's absolute path, so a virtual environment
    need not be on PATH.

    \b
    Example:
      scry install --list                  # agents found here, what each would get
      scry install claude-code             # .mcp.json, CLAUDE.md, hooks (augment)
      scry install cursor --dry-run        # show the diff, write nothing
      scry install codex --user            # ~/.codex/config.toml, AGENTS.md, hooks.json
      scry install claude-code --hooks off
    """
    if list_:
        if agent is not None:
            raise click.UsageError("--list takes no AGENT")
        _print_list(scope)
        return
    if agent is None:
        raise click.UsageError(f"name an AGENT ({_AGENT_HELP}), or use --list")
    a = agents.get(agent)
    where = _where(a, scope)
    changes = plan.plan_install(a, where, hooks=hooks)
    _report(changes, where, dry_run)
    if not dry_run and any(c.changed for c in changes):
        server = " ".join(agents.server_argv(a, where))
        click.echo(f"{a.label} will start `{server}`: restart it to pick this up", err=True)


@click.command("uninstall")
@click.argument("agent")
@_scope_options
@click.option("--dry-run", is_flag=True, help="Show what would change (a diff); write nothing.")
def uninstall_cmd(agent: str, scope: str | None, dry_run: bool) -> None:
    """Remove what `scry install` added to a coding agent.

    The scry server entry, the marked instruction block and scry's hooks are removed;
    everything else in those files is left as it was (a file that held nothing else is
    deleted). Each changed file is backed up first.

    \b
    Example:
      scry uninstall claude-code
      scry uninstall codex --user --dry-run
    """
    a = agents.get(agent)
    where = _where(a, scope)
    _report(plan.plan_uninstall(a, where), where, dry_run)


def _where(agent: Agent, scope: str | None) -> Where:
    """The :class:`~scrydb.install.agents.Where` of an install: the scope asked for (or the
    agent's default) and, for a project, the repository containing the current directory."""
    scope = scope or agent.scopes[0]
    if scope not in agent.scopes:
        only = agent.config(Where(agent.scopes[0], None, Path.home(), dict(os.environ)))
        raise ScryError(
            f"{agent.label} reads MCP servers only from {only.path} (its {agent.scopes[0]} "
            f"configuration): use --{agent.scopes[0]}"
        )
    root = None
    if scope == "project":
        root = repo_root(None)
        if root is None:
            raise ScryError(
                f"no repository here: {Path.cwd()} has no .git or .scry.toml above it; run "
                "this inside the repository, or use --user"
            )
    return Where(scope, root, Path.home(), dict(os.environ))


def _report(changes: list[plan.Change], where: Where, dry_run: bool) -> None:
    if dry_run:
        for c in changes:
            if c.changed:
                click.echo(plan.diff(c, where), nl=False)
            else:
                click.echo(f"unchanged {where.show(c.path)} ({c.what})")
        click.echo("(dry run: nothing was written)", err=True)
        return
    lines, backups = plan.apply(changes, where)
    for line in lines:
        click.echo(line)
    if backups is not None:
        click.echo(f"backups of the files changed: {backups}", err=True)
    if not changes:
        click.echo("nothing of scry is there: nothing to do", err=True)


def _print_list(scope: str | None) -> None:
    root = repo_root(None)
    rows = [("agent", "found", "scope", "MCP config", "server", "instructions", "hooks")]
    for a in agents.AGENTS:
        seen = agents.found(a, Where("user", None, Path.home(), dict(os.environ)))
        for sc in a.scopes:
            if scope is not None and sc != scope:
                continue
            if sc == "project" and root is None:
                rows.append((a.name, seen or "-", sc, "(not in a repository)", "-", "-", "-"))
                continue
            where = Where(sc, root if sc == "project" else None, Path.home(), dict(os.environ))
            st = plan.installed(a, where)
            server = {True: "installed", False: "-"}.get(st["server"], str(st["server"]))
            hooks = "-"
            if a.hooks is not None:  # the file, and the mode installed there (or none)
                hooks = f"{where.show(a.hooks(where).path)} ({st.get('hooks') or 'none'})"
            rows.append(
                (a.name, seen or "-", sc, st["config"], server, st["instructions"] or "-", hooks)
            )
    widths = [max(len(str(r[i])) for r in rows) for i in range(len(rows[0]))]
    for r in rows:
        click.echo("  ".join(str(v).ljust(w) for v, w in zip(r, widths, strict=True)).rstrip())
