"""``scry install`` / ``scry uninstall``: each agent's files in a temporary home and project,
from nothing, from a realistic existing file (other servers, comments where the format has
them) and from a malformed one; the real ``scry`` as a subprocess for each agent's default
scope, the library for the user scope and the splicing rules."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest

from scrydb.errors import ScryError
from scrydb.install import agents, hookconfig, jsonc, markers, plan, tomlfile
from scrydb.install.agents import AGENTS, Where
from scrydb.install.instructions import USAGE

# -- realistic existing files, per agent and scope (paths relative to the project or home) --

EXISTING: dict[tuple[str, str], dict[str, str]] = {
    ("claude-code", "project"): {
        ".mcp.json": (
            '{\n  "mcpServers": {\n    "github": {\n      "type": "stdio",\n'
            '      "command": "npx",\n      "args": ["-y", "@modelcontextprotocol/server-github"],\n'
            '      "env": {"GITHUB_TOKEN": "${GITHUB_TOKEN}"}\n    }\n  }\n}\n'
        ),
        "CLAUDE.md": "# Shop\n\nRun `make test` before committing.\n",
        ".claude/settings.local.json": (
            '{\n  "permissions": {\n    "allow": ["Bash(make test)"]\n  },\n  "hooks": {\n'
            '    "PreToolUse": [\n      {\n        "matcher": "Bash",\n'
            '        "hooks": [{"type": "command", "command": "echo checked"}]\n      }\n'
            "    ]\n  }\n}\n"
        ),
    },
    ("claude-code", "user"): {
        ".claude.json": (
            '{\n  "numStartups": 42,\n  "theme": "dark",\n  "projects": {\n'
            '    "/home/me/src/shop": {\n      "allowedTools": [],\n      "mcpServers": {}\n'
            '    }\n  },\n  "mcpServers": {\n    "context7": {\n      "type": "stdio",\n'
            '      "command": "npx",\n      "args": ["-y", "@upstash/context7-mcp"]\n    }\n'
            "  }\n}\n"
        ),
        ".claude/CLAUDE.md": "# My habits\n\n- Prefer small commits.",
        ".claude/settings.json": '{\n  "model": "opus"\n}\n',
    },
    ("cursor", "project"): {
        ".cursor/mcp.json": (
            '{\n  "mcpServers": {\n    "postgres": {\n      "command": "npx",\n'
            '      "args": ["-y", "@modelcontextprotocol/server-postgres", '
            '"postgresql://localhost/shop"]\n    }\n  }\n}\n'
        ),
        ".cursor/rules/style.mdc": "---\nalwaysApply: true\n---\n\nUse black.\n",
    },
    ("cursor", "user"): {
        ".cursor/mcp.json": '{"mcpServers": {"fetch": {"command": "uvx", "args": ["mcp-server-fetch"]}}}',
    },
    ("codex", "project"): {
        ".codex/config.toml": (
            '# project settings\nmodel = "o3"  # the default\n\n[mcp_servers.github]\n'
            'command = "npx"\nargs = ["-y", "@modelcontextprotocol/server-github"]  # read-only\n'
            '\n[profiles.fast]\nmodel = "o4-mini"\n'
        ),
        "AGENTS.md": "# Agents\n\nUse `make test`.",
        ".codex/hooks.json": (
            '{\n  "hooks": {\n    "Stop": [\n      {\n        "hooks": [\n'
            '          {"type": "command", "command": "python3 .codex/hooks/stop.py", "timeout": 30}\n'
            "        ]\n      }\n    ]\n  }\n}\n"
        ),
    },
    ("codex", "user"): {
        ".codex/config.toml": (
            'model = "o3"\napproval_policy = "on-request"\n\n# servers\n[mcp_servers.docs]\n'
            'command = "docs-mcp"\nstartup_timeout_sec = 20\n'
        ),
        ".codex/AGENTS.md": "Answer briefly.\n",
        ".codex/hooks.json": (
            '{"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": '
            '[{"type": "command", "command": "~/bin/guard"}]}]}}\n'
        ),
    },
    ("gemini", "project"): {
        ".gemini/settings.json": (
            '{\n  "theme": "GitHub",\n  "mcpServers": {\n    "filesystem": {\n'
            '      "command": "npx",\n'
            '      "args": ["-y", "@modelcontextprotocol/server-filesystem", "."],\n'
            '      "trust": false\n    }\n  },\n  "hooks": {\n    "BeforeTool": [\n      {\n'
            '        "matcher": "write_file|replace",\n        "hooks": [\n'
            '          {"type": "command", "command": "./scripts/check-paths.sh", "timeout": 5000}\n'
            "        ]\n      }\n    ]\n  }\n}\n"
        ),
        "GEMINI.md": "# Project context\n\nPython 3.11.\n",
    },
    ("gemini", "user"): {
        ".gemini/settings.json": '{\n  "selectedAuthType": "gemini-api-key"\n}\n',
    },
    ("vscode", "project"): {
        ".vscode/mcp.json": (
            '{\n  // Servers for Copilot agent mode\n  "inputs": [\n    {\n'
            '      "type": "promptString",\n      "id": "gh-token",\n'
            '      "description": "GitHub token",\n      "password": true\n    }\n  ],\n'
            '  "servers": {\n    "github": {\n      "type": "stdio",\n      "command": "npx",\n'
            '      "args": ["-y", "@modelcontextprotocol/server-github"], // pinned\n'
            '      "env": {"GITHUB_TOKEN": "${input:gh-token}"}\n    },\n  }\n}\n'
        ),
        ".github/copilot-instructions.md": "Use type hints.\n",
    },
    ("vscode", "user"): {
        ".config/Code/User/mcp.json": '{\n\t"servers": {\n\t\t"time": {\n\t\t\t"command": "uvx",\n\t\t\t"args": ["mcp-server-time"]\n\t\t}\n\t}\n}\n',
    },
    ("windsurf", "user"): {
        ".codeium/windsurf/mcp_config.json": (
            '{\n  "mcpServers": {\n    "sequential-thinking": {\n      "command": "npx",\n'
            '      "args": ["-y", "@modelcontextprotocol/server-sequential-thinking"],\n'
            '      "disabled": false\n    }\n  }\n}\n'
        ),
        ".codeium/windsurf/memories/global_rules.md": "Always answer in English.\n",
    },
    ("opencode", "project"): {
        "opencode.jsonc": (
            '{\n  "$schema": "https://opencode.ai/config.json",\n  // the model for this repo\n'
            '  "model": "anthropic/claude-sonnet-4-5",\n  "mcp": {\n    "sentry": {\n'
            '      "type": "remote",\n      "url": "https://mcp.sentry.dev/mcp",\n'
            '      "enabled": true,\n    },\n  },\n}\n'
        ),
        "AGENTS.md": "# Rules\n\n- Small diffs.\n",
    },
    ("opencode", "user"): {
        ".config/opencode/opencode.json": '{\n  "$schema": "https://opencode.ai/config.json",\n  "theme": "tokyonight"\n}\n',
    },
    ("zed", "project"): {
        ".zed/settings.json": (
            '// Zed project settings\n{\n  "tab_size": 4,\n  "context_servers": {\n'
            '    "postgres": {\n      "source": "custom",\n      "command": "postgres-mcp",\n'
            '      "args": [],\n      "env": {}\n    } // local db\n  }\n}\n'
        ),
        ".rules": "Prefer composition.\n",
    },
    ("zed", "user"): {
        ".config/zed/settings.json": (
            "// Zed settings\n//\n// For information on how to configure Zed, see the Zed\n"
            '// documentation: https://zed.dev/docs/configuring-zed\n{\n  "ui_font_size": 16,\n'
            '  "buffer_font_size": 15,\n  "theme": {\n    "mode": "system",\n'
            '    "light": "One Light",\n    "dark": "One Dark"\n  }\n}\n'
        ),
    },
}

MALFORMED_JSON = '{\n  "mcpServers": {\n    "github": {"command": "npx",,}\n  }\n'
MALFORMED_TOML = '[mcp_servers.github\ncommand = "npx"\n'

DEFAULTS = [(a.name, a.scopes[0]) for a in AGENTS]
USER_SCOPES = [(a.name, "user") for a in AGENTS if "user" in a.scopes]


# -- helpers ------------------------------------------------------------------------------------


@pytest.fixture
def places(tmp_path: Path) -> tuple[Path, Path]:
    """(home, project): an empty home and a git repository with one file."""
    home, project = tmp_path / "home", tmp_path / "project"
    home.mkdir()
    project.mkdir()
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    (project / "main.py").write_text("def main():\n    return 0\n")
    return home, project


def env_for(home: Path, tmp: Path) -> dict[str, str]:
    env = {
        k: v for k, v in os.environ.items() if k not in ("XDG_CONFIG_HOME", "CODEX_HOME", "APPDATA")
    }
    env.update(HOME=str(home), SCRY_CACHE_DIR=str(tmp / "cache"))
    env["SCRY_HOOK_HELPER"] = "0"  # hooks run here search in-process (no helper left behind)
    return env


def scry(*args: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "scrydb.cli", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def snapshot(base: Path) -> dict[str, bytes]:
    """Every file under ``base`` (but .git) with its bytes."""
    out = {}
    for p in sorted(base.rglob("*")):
        if p.is_file() and ".git" not in p.relative_to(base).parts:
            out[p.relative_to(base).as_posix()] = p.read_bytes()
    return out


def where_for(scope: str, home: Path, project: Path) -> Where:
    return Where(scope, project if scope == "project" else None, home, {})


def write_files(base: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        p = base / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(text.encode())


def config_value(agent: agents.Agent, where: Where) -> dict[str, Any]:
    """The whole configuration file, parsed (independently of the splicer where the format
    allows: json for strict JSON, tomllib for TOML)."""
    target = agent.config(where)
    text = target.path.read_text()
    if target.fmt == "toml":
        return tomllib.loads(text)
    try:
        return json.loads(text)
    except ValueError:  # JSONC (comments, trailing commas)
        return jsonc.to_python(jsonc.parse(text))


def server_entry(agent: agents.Agent, where: Where) -> dict[str, Any]:
    value = config_value(agent, where)
    for key in agent.config(where).container:
        value = value[key]
    return value["scry"]


def check_entry(agent: agents.Agent, where: Where) -> None:
    """The entry starts this scry by absolute path and serves the right repository."""
    entry = server_entry(agent, where)
    argv = entry["command"] if isinstance(entry["command"], list) else [entry["command"]]
    argv = argv + entry.get("args", [])
    assert Path(argv[0]).is_absolute() and Path(argv[0]).exists(), argv
    assert "serve" in argv
    if agent.workspace_var:
        assert argv[-2:] == ["--root", agent.workspace_var]
    elif where.scope == "project":
        assert argv[-2:] == ["--root", str(where.root)]
    else:
        assert "--root" not in argv


def check_instructions(agent: agents.Agent, where: Where) -> None:
    doc = agent.instructions(where)
    if doc is None:
        return
    text = doc.path.read_text()
    assert markers.BEGIN in text and markers.END in text
    assert USAGE.strip() in text


# -- the CLI, each agent's default scope: nothing, a realistic file, a malformed file ----------


@pytest.mark.slow
@pytest.mark.parametrize(("name", "scope"), DEFAULTS)
def test_install_from_nothing_twice_then_uninstall(
    name: str, scope: str, places: tuple[Path, Path], tmp_path: Path
) -> None:
    home, project = places
    env = env_for(home, tmp_path)
    before = (snapshot(home), snapshot(project))
    r = scry("install", name, cwd=project, env=env)
    assert r.returncode == 0, r.stderr
    assert "created" in r.stdout and "backups" not in r.stderr  # nothing existed to back up
    agent, where = agents.get(name), where_for(scope, home, project)
    check_entry(agent, where)
    check_instructions(agent, where)
    installed = (snapshot(home), snapshot(project))
    r = scry("install", name, cwd=project, env=env)  # twice: a no-op
    assert r.returncode == 0, r.stderr
    assert all(line.startswith("unchanged ") for line in r.stdout.splitlines()), r.stdout
    assert (snapshot(home), snapshot(project)) == installed
    r = scry("uninstall", name, cwd=project, env=env)
    assert r.returncode == 0, r.stderr
    assert (snapshot(home), snapshot(project)) == before


@pytest.mark.slow
@pytest.mark.parametrize(("name", "scope"), DEFAULTS)
def test_install_merges_into_a_realistic_file_and_uninstall_restores_it(
    name: str, scope: str, places: tuple[Path, Path], tmp_path: Path
) -> None:
    home, project = places
    env = env_for(home, tmp_path)
    base = project if scope == "project" else home
    write_files(base, EXISTING[(name, scope)])
    agent, where = agents.get(name), where_for(scope, home, project)
    original_value = config_value(agent, where)
    before = (snapshot(home), snapshot(project))
    r = scry("install", name, cwd=project, env=env)
    assert r.returncode == 0, r.stderr
    # The other servers and settings are all still there; scry is one more server.
    merged = config_value(agent, where)
    expected = json.loads(json.dumps(original_value))
    node = expected
    for key in agent.config(where).container:
        node = node.setdefault(key, {})
    node["scry"] = server_entry(agent, where)
    if agent.hooks is not None and agent.hooks(where).path == agent.config(where).path:
        # Gemini CLI: the hooks share the file; every hook group it had comes first, as it was.
        hooks = merged["hooks"]
        for event, had in expected.get("hooks", {}).items():
            assert hooks[event][: len(had)] == had
        assert all(
            hookconfig.is_ours(g)
            for ev in hooks
            for g in hooks[ev][len(expected.get("hooks", {}).get(ev, [])) :]
        )
        expected["hooks"] = hooks
    assert merged == expected
    check_entry(agent, where)
    check_instructions(agent, where)
    # Every existing file that changed was backed up first, byte for byte.
    backups = Path(r.stderr.split("backups of the files changed: ")[1].split()[0])
    saved = {p.name: p.read_bytes() for p in backups.iterdir()}
    for rel, text in EXISTING[(name, scope)].items():
        path = base / rel
        if path.read_bytes() != text.encode():
            assert saved[path.as_posix().strip("/").replace("/", "__")] == text.encode()
    installed = (snapshot(home), snapshot(project))
    r = scry("install", name, cwd=project, env=env)
    assert r.returncode == 0 and "updated" not in r.stdout and "created" not in r.stdout
    assert (snapshot(home), snapshot(project)) == installed
    r = scry("uninstall", name, cwd=project, env=env)
    assert r.returncode == 0, r.stderr
    assert (snapshot(home), snapshot(project)) == before


@pytest.mark.slow
@pytest.mark.parametrize(("name", "scope"), DEFAULTS)
def test_a_malformed_file_is_refused_with_one_line_and_left_untouched(
    name: str, scope: str, places: tuple[Path, Path], tmp_path: Path
) -> None:
    home, project = places
    env = env_for(home, tmp_path)
    agent, where = agents.get(name), where_for(scope, home, project)
    target = agent.config(where)
    bad = MALFORMED_TOML if target.fmt == "toml" else MALFORMED_JSON
    target.path.parent.mkdir(parents=True, exist_ok=True)
    target.path.write_text(bad)
    before = (snapshot(home), snapshot(project))
    r = scry("install", name, cwd=project, env=env)
    assert r.returncode == 2
    assert r.stderr.count("\n") == 1 and r.stderr.startswith("scry: error: "), r.stderr
    assert f"is not valid {'TOML' if target.fmt == 'toml' else 'JSON'}" in r.stderr
    assert "nothing was written" in r.stderr and "Traceback" not in r.stderr
    assert (snapshot(home), snapshot(project)) == before  # no instructions either
    r = scry("uninstall", name, cwd=project, env=env)
    assert r.returncode == 2 and (snapshot(home), snapshot(project)) == before


# -- the user scope, through the library ---------------------------------------------------------


@pytest.mark.parametrize(("name", "scope"), USER_SCOPES)
def test_user_scope_from_nothing_and_from_a_realistic_file(
    name: str, scope: str, places: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    home, project = places
    agent, where = agents.get(name), where_for(scope, home, project)
    for files in ({}, EXISTING.get((name, scope), {})):
        write_files(home, files)
        before = snapshot(home)
        plan.apply(plan.plan_install(agent, where), where)
        check_entry(agent, where)
        check_instructions(agent, where)
        installed = snapshot(home)
        changes = plan.plan_install(agent, where)
        assert not any(c.changed for c in changes)
        plan.apply(plan.plan_uninstall(agent, where), where)
        assert snapshot(home) == before, name
        assert installed != before


@pytest.mark.parametrize(("name", "scope"), USER_SCOPES)
def test_user_scope_malformed_file_is_refused(
    name: str, scope: str, places: tuple[Path, Path]
) -> None:
    home, project = places
    agent, where = agents.get(name), where_for(scope, home, project)
    target = agent.config(where)
    target.path.parent.mkdir(parents=True, exist_ok=True)
    target.path.write_text(MALFORMED_TOML if target.fmt == "toml" else MALFORMED_JSON)
    before = snapshot(home)
    with pytest.raises(ScryError, match="nothing was written"):
        plan.plan_install(agent, where)
    assert snapshot(home) == before


# -- the CLI's other paths ------------------------------------------------------------------------


@pytest.mark.slow
def test_list_dry_run_and_clean_errors(places: tuple[Path, Path], tmp_path: Path) -> None:
    home, project = places
    env = env_for(home, tmp_path)
    (home / ".cursor").mkdir()
    r = scry("install", "--list", cwd=project, env=env)
    assert r.returncode == 0, r.stderr
    rows = {tuple(line.split()[:3]) for line in r.stdout.splitlines()[1:]}
    assert ("cursor", "~/.cursor", "project") in rows and ("windsurf", "-", "user") in rows
    r = scry("install", "cursor", "--dry-run", cwd=project, env=env)
    assert r.returncode == 0 and "+++ .cursor/mcp.json" in r.stdout and '"scry"' in r.stdout
    assert snapshot(project) == {"main.py": b"def main():\n    return 0\n"}
    r = scry("install", "claude-code", cwd=project, env=env)
    r = scry("install", "--list", cwd=project, env=env)
    line = next(x for x in r.stdout.splitlines() if x.startswith("claude-code") and "project" in x)
    assert "installed" in line and line.rstrip().endswith(".claude/settings.local.json (augment)")
    for args, message in [
        (("install", "nano"), "unknown agent 'nano'"),
        (("install",), "name an AGENT"),
        (("install", "windsurf", "--project"), "use --user"),
        (("install", "cursor", "--hooks", "redirect"), "no hooks scry can install"),
        (("uninstall", "emacs"), "unknown agent"),
    ]:
        r = scry(*args, cwd=project, env=env)
        assert r.returncode == 2 and message in r.stderr and r.stderr.count("\n") == 1, r.stderr
    r = scry("install", "zed", cwd=tmp_path, env=env)  # not in a repository
    assert r.returncode == 2 and "no repository here" in r.stderr


@pytest.mark.slow
def test_hooks_modes_switch_and_keep_other_hooks(places: tuple[Path, Path], tmp_path: Path) -> None:
    home, project = places
    env = env_for(home, tmp_path)
    write_files(project, EXISTING[("claude-code", "project")])
    settings = project / ".claude" / "settings.local.json"
    original = settings.read_text()
    assert (
        scry("install", "claude-code", "--hooks", "redirect", cwd=project, env=env).returncode == 0
    )
    assert hookconfig.installed_mode(settings.read_text()) == "redirect"
    assert scry("install", "claude-code", cwd=project, env=env).returncode == 0  # keeps the mode
    assert hookconfig.installed_mode(settings.read_text()) == "redirect"
    assert (
        scry("install", "claude-code", "--hooks", "augment", cwd=project, env=env).returncode == 0
    )
    data = json.loads(settings.read_text())
    groups = data["hooks"]["PreToolUse"]
    assert groups[0] == {
        "matcher": "Bash",
        "hooks": [{"type": "command", "command": "echo checked"}],
    }
    assert len(groups) == 2 and "--mode augment" in groups[1]["hooks"][0]["command"]
    assert data["hooks"]["SessionStart"][0]["matcher"] == "startup|resume"
    assert scry("install", "claude-code", "--hooks", "off", cwd=project, env=env).returncode == 0
    assert settings.read_text() == original
    assert json.loads((project / ".mcp.json").read_text())["mcpServers"]["scry"]  # still there


# -- shared instruction files, links, modes --------------------------------------------------------


def test_a_shared_instruction_file_keeps_its_block_while_another_agent_uses_it(
    places: tuple[Path, Path],
) -> None:
    home, project = places
    where = where_for("project", home, project)
    codex, opencode = agents.get("codex"), agents.get("opencode")
    plan.apply(plan.plan_install(codex, where), where)
    plan.apply(plan.plan_install(opencode, where), where)
    agents_md = project / "AGENTS.md"
    assert agents_md.read_text().count(markers.BEGIN) == 1
    changes = plan.plan_uninstall(codex, where)
    assert any("opencode uses it" in c.note for c in changes)
    plan.apply(changes, where)
    assert markers.BEGIN in agents_md.read_text()
    plan.apply(plan.plan_uninstall(opencode, where), where)
    assert not agents_md.exists()


def test_a_symlinked_config_stays_a_link_and_its_mode_is_kept(places: tuple[Path, Path]) -> None:
    home, project = places
    dotfiles = home / "dotfiles" / "zed.json"
    dotfiles.parent.mkdir()
    dotfiles.write_text('{\n  "theme": "One Dark"\n}\n')
    dotfiles.chmod(0o600)
    link = home / ".config" / "zed" / "settings.json"
    link.parent.mkdir(parents=True)
    link.symlink_to(dotfiles)
    where = where_for("user", home, project)
    plan.apply(plan.plan_install(agents.get("zed"), where), where)
    assert link.is_symlink() and "context_servers" in dotfiles.read_text()
    assert dotfiles.stat().st_mode & 0o777 == 0o600


def test_unknown_agent_and_aliases() -> None:
    assert agents.get("Claude").name == "claude-code"
    assert agents.get("copilot").name == "vscode"
    with pytest.raises(ScryError, match="one of claude-code, cursor"):
        agents.get("emacs")


def test_zed_writes_the_rule_file_zed_reads(places: tuple[Path, Path]) -> None:
    home, project = places
    where = where_for("project", home, project)
    zed = agents.get("zed")
    assert zed.instructions(where).path == project / "AGENTS.md"  # type: ignore[union-attr]
    (project / "CLAUDE.md").write_text("x\n")
    assert zed.instructions(where).path == project / "CLAUDE.md"  # type: ignore[union-attr]
    (project / ".rules").write_text("y\n")
    assert zed.instructions(where).path == project / ".rules"  # type: ignore[union-attr]


def test_opencode_keeps_the_nested_servers_map_a_file_already_uses(
    places: tuple[Path, Path],
) -> None:
    home, project = places
    (project / "opencode.json").write_text(
        '{\n  "mcp": {\n    "servers": {\n      "a": {"type": "local", "command": ["a"]}\n    }\n  }\n}\n'
    )
    where = where_for("project", home, project)
    plan.apply(plan.plan_install(agents.get("opencode"), where), where)
    data = json.loads((project / "opencode.json").read_text())
    assert set(data["mcp"]) == {"servers"} and set(data["mcp"]["servers"]) == {"a", "scry"}


# -- the splicers ------------------------------------------------------------------------------------

SERVER = {"command": "/v/bin/scry", "args": ["serve"]}
JSON_CASES = [
    "",
    "{}\n",
    '{"a": 1}',
    '{\r\n  "a": 1\r\n}\r\n',
    '{\n\t"a": 1,\n\t"mcpServers": {\n\t\t"x": {\n\t\t\t"command": "y"\n\t\t}\n\t}\n}\n',
    '{\n  "mcpServers": {\n    "gh": {"command": "npx"}, // gh\n  },\n  "theme": "dark"\n}\n',
    '{\n  "mcpServers": {\n    "gh": {"command": "npx"} /* gh */\n  }\n}\n',
    '{\n  "mcpServers": {\n    // none yet\n  }\n}\n',
    '{\n  "a": 1, // one\n  /* two */ "b": 2\n}\n',
    '\ufeff{\n  "a": "caf\u00e9"\n}\n',
]


@pytest.mark.parametrize("text", JSON_CASES)
def test_json_set_then_remove_gives_back_the_bytes(text: str) -> None:
    added = jsonc.set_entry(text, ["mcpServers"], "scry", SERVER)
    assert jsonc.get(added, ["mcpServers", "scry"]) == SERVER
    assert jsonc.set_entry(added, ["mcpServers"], "scry", SERVER) == added
    removed = jsonc.remove_entry(added, ["mcpServers"], "scry")
    assert removed == (text if text else "{}\n")
    if "\r\n" in text:
        assert "\n" not in added.replace("\r\n", "")


def test_json_replaces_a_stale_entry_in_place() -> None:
    text = '{\n  "mcpServers": {\n    "scry": {"command": "/old/scry", "args": ["serve"]},\n    "b": {}\n  }\n}\n'
    new = jsonc.set_entry(text, ["mcpServers"], "scry", SERVER)
    assert list(jsonc.get(new, ["mcpServers"])) == ["scry", "b"]
    assert jsonc.get(new, ["mcpServers", "scry"]) == SERVER


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"a": 1,,}', "line 1, column 9"),
        ('{"a": 1', "unexpected end"),
        ("[1]", "not an object"),
        ('{"a": /* open', "unterminated comment"),
        ('{"mcpServers": []}', None),
    ],
)
def test_json_errors(text: str, message: str | None) -> None:
    if message is None:
        with pytest.raises(jsonc.EditError, match="not an object"):
            jsonc.set_entry(text, ["mcpServers"], "scry", SERVER)
    else:
        with pytest.raises(jsonc.JsoncError, match=message):
            jsonc.parse(text)


TOML_CASES = [
    "",
    'model = "o3"\n',
    'model = "o3"',
    '[mcp_servers.a]\ncommand = "x"\n',
    '# c\nmodel = "o3"  # m\n\n[mcp_servers.gh]\ncommand = "npx"\n\n[profiles.fast]\nmodel = "o4"\n',
    'mcp_servers = { a = { command = "x" } }\n',
    'mcp_servers.a.command = "x"\n',
]


@pytest.mark.parametrize("text", TOML_CASES)
def test_toml_set_then_remove_gives_back_the_bytes(text: str) -> None:
    added = tomlfile.set_table(text, ("mcp_servers", "scry"), SERVER)
    assert tomllib.loads(added)["mcp_servers"]["scry"] == SERVER
    assert tomlfile.set_table(added, ("mcp_servers", "scry"), SERVER) == added
    assert tomlfile.remove_table(added, ("mcp_servers", "scry")) == text
    stale = tomlfile.set_table(added, ("mcp_servers", "scry"), {**SERVER, "command": "/new"})
    assert tomllib.loads(stale)["mcp_servers"]["scry"]["command"] == "/new"


@pytest.mark.parametrize("text", ["", "# Notes\n", "# Notes", "# Notes\n\n", "a\r\nb\r\n"])
def test_marked_block_set_then_remove_gives_back_the_bytes(text: str) -> None:
    added = markers.set_block(text, USAGE)
    assert markers.set_block(added, USAGE) == added
    assert markers.remove_block(added) == text
    newer = markers.set_block(added, "new text\n")
    assert "new text" in newer and USAGE.strip() not in newer
    assert markers.remove_block(newer) == text
    assert markers.malformed(text + markers.BEGIN + "\n")


@pytest.mark.slow
def test_the_hook_command_scry_install_writes_runs(
    places: tuple[Path, Path], tmp_path: Path
) -> None:
    """The PreToolUse command in Claude Code's settings, run by a shell as the harness runs
    it, answers a recorded Grep payload over a (lexical) index of the project."""
    from scrydb.install import hook

    home, project = places
    (project / "retry.py").write_text("def compute_backoff(attempt):\n    return 2 ** attempt\n")
    env = env_for(home, tmp_path)
    assert scry("index", "--no-embed", "-q", cwd=project, env=env).returncode == 0
    r = scry("install", "claude-code", "--hooks", "redirect", cwd=project, env=env)
    assert r.returncode == 0, r.stderr
    settings = json.loads((project / ".claude" / "settings.local.json").read_text())
    group = settings["hooks"]["PreToolUse"][0]
    assert group["matcher"] == hookconfig.PRE_TOOL_MATCHER
    assert group["hooks"][0]["timeout"] > hook.LIMIT_S
    command = group["hooks"][0]["command"]
    assert shlex.split(command)[0] == os.path.abspath(sys.executable)
    data = {
        "session_id": "installed",
        "transcript_path": str(home / "t.jsonl"),
        "cwd": str(project),
        "permission_mode": "default",
        "hook_event_name": "PreToolUse",
        "tool_name": "Grep",
        "tool_input": {"pattern": "compute_backoff"},
        "tool_use_id": "toolu_01",
    }
    shell = subprocess.run(
        ["sh", "-c", command], input=json.dumps(data), env=env, cwd=project,
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert shell.returncode == 0 and shell.stderr == "", shell.stderr
    spec = json.loads(shell.stdout)["hookSpecificOutput"]
    assert spec["hookEventName"] == "PreToolUse" and spec["permissionDecision"] == "deny"
    assert "retry.py:1-2" in spec["permissionDecisionReason"]


@pytest.mark.parametrize(
    ("name", "settings", "event", "matcher"),
    [
        ("codex", ".codex/hooks.json", "PreToolUse", "Bash"),
        ("gemini", ".gemini/settings.json", "AfterTool", hookconfig.GEMINI_TOOLS),
    ],
)
def test_codex_and_gemini_hooks_switch_modes_and_keep_other_hooks(
    name: str, settings: str, event: str, matcher: str, places: tuple[Path, Path]
) -> None:
    home, project = places
    write_files(project, EXISTING[(name, "project")])
    path = project / settings
    original = path.read_text()
    agent, where = agents.get(name), where_for("project", home, project)
    plan.apply(plan.plan_install(agent, where), where)
    data = jsonc.to_python(jsonc.parse(path.read_text()))
    ours = [g for g in data["hooks"][event] if hookconfig.is_ours(g)]
    assert len(ours) == 1 and ours[0]["matcher"] == matcher
    assert f"--agent {name}" in ours[0]["hooks"][0]["command"]
    start = [g for g in data["hooks"]["SessionStart"] if hookconfig.is_ours(g)]
    assert len(start) == 1 and ("matcher" in start[0]) == (name == "codex")
    timeout = ours[0]["hooks"][0]["timeout"]  # Gemini CLI counts milliseconds
    assert timeout == hookconfig.HOOK_TIMEOUT_S * (1000 if name == "gemini" else 1)
    dialect = hookconfig.DIALECTS[name]
    assert hookconfig.installed_mode(path.read_text(), dialect) == "augment"
    plan.apply(plan.plan_install(agent, where, hooks="redirect"), where)
    text = path.read_text()
    assert hookconfig.installed_mode(text, dialect) == "redirect"
    data = jsonc.to_python(jsonc.parse(text))
    if name == "gemini":  # redirect denies before the tool: BeforeTool, and AfterTool is gone
        assert "AfterTool" not in data["hooks"]
        before = data["hooks"]["BeforeTool"]
        assert before[0]["matcher"] == "write_file|replace" and hookconfig.is_ours(before[1])
    assert not any(c.changed for c in plan.plan_install(agent, where))  # keeps the mode
    plan.apply(plan.plan_install(agent, where, hooks="off"), where)
    assert path.read_text() == original or name == "gemini"  # Gemini: its MCP entry stays
    plan.apply(plan.plan_uninstall(agent, where), where)
    assert path.read_text() == original


@pytest.mark.slow
def test_the_codex_and_gemini_hook_commands_run(places: tuple[Path, Path], tmp_path: Path) -> None:
    """The commands written into Codex CLI's hooks.json and Gemini CLI's settings.json, run
    by a shell as the harness runs them, answer a recorded payload of each one's shape."""
    home, project = places
    (project / "retry.py").write_text("def compute_backoff(attempt):\n    return 2 ** attempt\n")
    env = env_for(home, tmp_path)
    assert scry("index", "--no-embed", "-q", cwd=project, env=env).returncode == 0
    for name in ("codex", "gemini"):
        assert scry("install", name, cwd=project, env=env).returncode == 0
    base = {"session_id": "s1", "cwd": str(project)}
    cases = [
        (".codex/hooks.json", "PreToolUse", {
            **base, "turn_id": "t1", "transcript_path": None, "hook_event_name": "PreToolUse",
            "model": "gpt-5-codex", "permission_mode": "default", "tool_name": "Bash",
            "tool_input": {"command": "rg -n compute_backoff"}, "tool_use_id": "call_1",
        }),
        (".gemini/settings.json", "AfterTool", {
            **base, "transcript_path": "t.json", "hook_event_name": "AfterTool",
            "timestamp": "2026-12-07T21:00:00Z", "tool_name": "search_file_content",
            "tool_input": {"pattern": "compute_backoff"}, "tool_response": {"llmContent": "1"},
        }),
    ]  # fmt: skip
    for settings, event, data in cases:
        hooks = jsonc.to_python(jsonc.parse((project / settings).read_text()))["hooks"]
        command = next(g for g in hooks[event] if hookconfig.is_ours(g))["hooks"][0]["command"]
        shell = subprocess.run(
            ["sh", "-c", command], input=json.dumps(data), env=env, cwd=project,
            capture_output=True, text=True, timeout=120,
        )  # fmt: skip
        assert shell.returncode == 0 and shell.stderr == "", shell.stderr
        context = json.loads(shell.stdout)["hookSpecificOutput"]["additionalContext"]
        assert "retry.py:1-2" in context, settings


def test_instructions_pasted_by_hand_are_not_added_twice(places: tuple[Path, Path]) -> None:
    home, project = places
    pasted = "# Agents\n\n" + USAGE
    (project / "AGENTS.md").write_text(pasted)
    where = where_for("project", home, project)
    changes = plan.plan_install(agents.get("codex"), where)
    doc = next(c for c in changes if c.path.name == "AGENTS.md")
    assert not doc.changed and "without scry's markers" in doc.note
    plan.apply(changes, where)
    plan.apply(plan.plan_uninstall(agents.get("codex"), where), where)
    assert (project / "AGENTS.md").read_text() == pasted  # not ours: left alone


def test_the_install_matrix_in_docs_matches_the_agents_table() -> None:
    """docs/agents.md's matrix names, per agent, the files the code writes (config,
    instructions and hooks, each scope) and says which agents get hooks."""
    doc = (Path(__file__).resolve().parents[1] / "docs" / "agents.md").read_text()
    rows: dict[str, list[str]] = {}
    for line in doc.splitlines():
        cells = [c.strip() for c in re.split(r"(?<!\\)\|", line.strip().strip("|"))]
        for a in AGENTS:
            if cells and cells[0].startswith(a.label.split(" (")[0]) and len(cells) >= 5:
                rows[a.name] = cells
    assert set(rows) == {a.name for a in AGENTS}
    home, root = Path("/home/u"), Path("/p")
    for a in AGENTS:
        row = " | ".join(rows[a.name])
        hooks_cell = rows[a.name][-1]
        assert (a.hooks is None) == hooks_cell.startswith("—"), a.name
        for scope in a.scopes:
            where = Where(scope, root if scope == "project" else None, home, {})
            assert a.config(where).path.name in row, (a.name, scope)
            doc_target = a.instructions(where)
            if doc_target is not None:
                assert doc_target.path.name in row, (a.name, scope)
            if a.hooks is not None:
                assert where.show(a.hooks(where).path).split("/")[-1] in hooks_cell, a.name


@pytest.mark.parametrize(
    ("name", "settings"),
    [("claude-code", ".claude/settings.local.json"), ("codex", ".codex/hooks.json")],
)
def test_a_malformed_hooks_file_is_refused_and_nothing_is_written(
    name: str, settings: str, places: tuple[Path, Path]
) -> None:
    home, project = places
    (project / settings).parent.mkdir(parents=True, exist_ok=True)
    (project / settings).write_text(MALFORMED_JSON)
    where = where_for("project", home, project)
    before = snapshot(project)
    with pytest.raises(ScryError, match="nothing was written") as err:
        plan.plan_install(agents.get(name), where)
    assert "\n" not in str(err.value) and settings in str(err.value)
    assert snapshot(project) == before  # not the MCP entry nor the instructions either
