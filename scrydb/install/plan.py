"""An install or uninstall as file changes, and writing them.

:func:`plan_install` and :func:`plan_uninstall` read every file first and compute every
new text; a malformed file (or one this module cannot merge into safely) stops the whole
plan with one line before anything is written. :func:`apply` then backs up each existing
file it changes (``<cache>/install-backups/<time>/``) and replaces it atomically; a file
that held nothing but scry's part is deleted on uninstall, with the folders that leaves
empty. Nothing is written when nothing changes: installing twice is a no-op.
"""

from __future__ import annotations

import difflib
import os
import shutil
import tempfile
import time
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from scrydb.errors import ScryError
from scrydb.install import agents, hookconfig, jsonc, markers, tomlfile
from scrydb.install.agents import SERVER_NAME, Agent, Target, Where
from scrydb.install.instructions import USAGE

_FORMAT_NAMES = {"json": "JSON", "toml": "TOML", "markdown": "Markdown"}


@dataclass
class Change:
    """One file: its text before (None: absent) and after (None: deleted)."""

    path: Path
    what: str
    before: str | None
    after: str | None
    note: str = ""

    @property
    def changed(self) -> bool:
        return self.before != self.after


class _Files:
    """The files a plan reads, each once; later edits of one file see the earlier ones."""

    def __init__(self, where: Where) -> None:
        self.where = where
        self.changes: dict[Path, Change] = {}

    def read(self, path: Path) -> str | None:
        if path in self.changes:
            return self.changes[path].after
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            return None
        except OSError as e:
            raise ScryError(f"cannot read {self.where.show(path)}: {e.strerror}") from None
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError:
            raise ScryError(
                f"{self.where.show(path)} is not UTF-8 text: nothing was written"
            ) from None

    def write(self, path: Path, text: str | None, what: str, note: str = "") -> None:
        if path in self.changes:
            c = self.changes[path]
            c.after, c.what = text, f"{c.what}, {what}"
            c.note = c.note or note
        else:
            self.changes[path] = Change(path, what, self.read(path), text, note)

    def result(self) -> list[Change]:
        return list(self.changes.values())


def plan_install(
    agent: Agent,
    where: Where,
    *,
    hooks: str | None = None,
    command: list[str] | None = None,
) -> list[Change]:
    """The changes that install scry into ``agent`` at ``where``: the MCP server entry, the
    usage instructions and, for an agent with hooks, ``hooks`` (augment, redirect or off;
    None keeps what is installed, else the default)."""
    files = _Files(where)
    target = agent.config(where)
    entry = agent.entry(agents.server_argv(agent, where, command))
    text = files.read(target.path) or ""
    new = _edit(where, target, text, lambda t, c: _set_server(target, t, c, entry))
    files.write(target.path, new, f"MCP server `{SERVER_NAME}`")
    doc = agent.instructions(where)
    if doc is not None:
        before = files.read(doc.path)
        if before is not None and markers.malformed(before):
            raise ScryError(
                f"{where.show(doc.path)} has a `BEGIN scry` marker without its `END scry`: "
                "fix the block by hand; nothing was written"
            )
        heading = USAGE.splitlines()[0]
        if before is not None and markers.span(before) is None and heading in before:
            # The text pasted by hand (docs/agents.md once said to): not ours to replace.
            note = f"it already has `{heading}` without scry's markers: left as it is"
            files.write(doc.path, before, "usage instructions", note)
        else:
            prefix = doc.prefix if before is None else ""
            new = markers.set_block(before or "", USAGE, prefix)
            files.write(doc.path, new, "usage instructions")
    if agent.hooks is not None:
        spot = agent.hooks(where)
        dialect = hookconfig.DIALECTS[agent.hook_dialect]
        current = files.read(spot.path) or ""
        mode = hooks or _edit(
            where, spot, current, lambda t, c: hookconfig.installed_mode(t, dialect)
        )
        mode = mode or hookconfig.DEFAULT_MODE
        new = _edit(where, spot, current, lambda t, c: hookconfig.set_hooks(t, mode, dialect))
        files.write(spot.path, new, f"hooks ({mode})")
    elif hooks not in (None, "off"):
        with_hooks = ", ".join(a.label for a in agents.AGENTS if a.hooks is not None)
        raise ScryError(f"{agent.label} has no hooks scry can install (only {with_hooks})")
    return files.result()


def plan_uninstall(agent: Agent, where: Where) -> list[Change]:
    """The changes that remove everything :func:`plan_install` adds to ``agent`` at
    ``where`` (an instruction file another installed agent still uses keeps its block)."""
    files = _Files(where)
    target = agent.config(where)
    text = files.read(target.path)
    if text is not None:
        new = _edit(where, target, text, lambda t, c: _remove_server(target, t, c))
        files.write(target.path, _or_delete(new, target), f"MCP server `{SERVER_NAME}`")
    doc = agent.instructions(where)
    if doc is not None:
        text = files.read(doc.path)
        if text is not None and markers.span(text) is not None:
            users = [a.label for a in _sharing(agent, where, doc.path)]
            if users:
                files.write(
                    doc.path, text, "usage instructions", f"kept: {', '.join(users)} uses it"
                )
            else:
                rest = markers.remove_block(text)
                gone = rest == "" or (doc.prefix and rest.strip() == doc.prefix.strip())
                files.write(doc.path, None if gone else rest, "usage instructions")
    if agent.hooks is not None:
        spot = agent.hooks(where)
        text = files.read(spot.path)
        if text is not None:
            dialect = hookconfig.DIALECTS[agent.hook_dialect]
            new = _edit(where, spot, text, lambda t, c: hookconfig.remove_hooks(t, dialect))
            files.write(spot.path, _or_delete(new, spot), "hooks")
    return files.result()


def installed(agent: Agent, where: Where) -> dict[str, Any]:
    """What of scry is in ``agent``'s files at ``where`` (for ``scry install --list``):
    the server entry, the instruction block, the hook mode; unreadable files say so."""
    target = agent.config(where)
    out: dict[str, Any] = {"config": where.show(target.path), "server": False}
    try:
        text = _Files(where).read(target.path)
        if text is not None:
            out["server"] = _server_value(target, text) is not None
    except (ScryError, ValueError, tomllib.TOMLDecodeError):
        out["server"] = "unreadable"
    doc = agent.instructions(where)
    out["instructions"] = where.show(doc.path) if doc is not None else None
    if agent.hooks is not None:
        spot = agent.hooks(where)
        try:
            text = _Files(where).read(spot.path)
            dialect = hookconfig.DIALECTS[agent.hook_dialect]
            out["hooks"] = hookconfig.installed_mode(text, dialect) if text else None
        except (ScryError, ValueError):
            out["hooks"] = "unreadable"
    return out


def apply(changes: list[Change], where: Where) -> tuple[list[str], Path | None]:
    """Write the changes (backups first); returns a line per file and the backup folder
    (None when no existing file was changed)."""
    from scrydb.paths import cache_dir

    backups: Path | None = None
    lines: list[str] = []
    for c in changes:
        shown = where.show(c.path)
        if not c.changed:
            lines.append(f"unchanged {shown} ({c.what}{': ' + c.note if c.note else ''})")
            continue
        if c.before is not None:
            if backups is None:
                stamp = time.strftime("%Y%m%d-%H%M%S")
                backups = cache_dir() / "install-backups" / f"{stamp}-{os.getpid()}"
                backups.mkdir(parents=True, exist_ok=True)
            shutil.copy2(c.path, backups / c.path.as_posix().strip("/").replace("/", "__"))
        if c.after is None:
            c.path.unlink()
            _remove_empty_parents(c.path.parent, where.base)
            lines.append(f"removed {shown} ({c.what}; nothing else was in it)")
        else:
            _write(c.path, c.after)
            verb = "created" if c.before is None else "updated"
            lines.append(f"{verb} {shown} ({c.what})")
    return lines, backups


def diff(change: Change, where: Where) -> str:
    """A unified diff of one change, for ``--dry-run``."""
    shown = where.show(change.path)
    return "".join(
        difflib.unified_diff(
            (change.before or "").splitlines(keepends=True),
            (change.after or "").splitlines(keepends=True),
            fromfile=shown if change.before is not None else "/dev/null",
            tofile=shown if change.after is not None else "/dev/null",
        )
    )


# -- the MCP server entry ----------------------------------------------------------------


def _container(target: Target, text: str) -> tuple[str, ...]:
    """The server map's keys: the agent's documented one, or the alternative the file
    already uses (opencode's ``mcp.servers``)."""
    if target.alt_container is not None:
        alt = jsonc.get(text, target.alt_container) if text.strip() else None
        if isinstance(alt, dict) and not {"type", "command", "url"} & set(alt):
            return target.alt_container
    return target.container


def _set_server(target: Target, text: str, _c: Any, entry: dict[str, Any]) -> str:
    if target.fmt == "toml":
        return tomlfile.set_table(text, (*target.container, SERVER_NAME), entry)
    return jsonc.set_entry(text, _container(target, text), SERVER_NAME, entry)


def _remove_server(target: Target, text: str, _c: Any) -> str:
    if target.fmt == "toml":
        return tomlfile.remove_table(text, (*target.container, SERVER_NAME))
    for container in (target.container, target.alt_container):
        if container is not None:
            text = jsonc.remove_entry(text, container, SERVER_NAME)
    return text


def _server_value(target: Target, text: str) -> Any:
    if target.fmt == "toml":
        return tomlfile.get(text, (*target.container, SERVER_NAME))
    return jsonc.get(text, (*_container(target, text), SERVER_NAME)) if text.strip() else None


def _or_delete(text: str, target: Target) -> str | None:
    """None (delete the file) when nothing but an empty document is left."""
    empty = "{}" if target.fmt == "json" else ""
    return None if text.strip() == empty else text


def _edit(where: Where, target: Target, text: str, edit: Any) -> Any:
    """Run ``edit(text, target)``; a malformed file or an unsafe edit is one line."""
    shown = where.show(target.path)
    try:
        if target.fmt == "json":
            jsonc.parse(text)
        elif target.fmt == "toml":
            tomlfile.parse(text)
        return edit(text, target)
    except (jsonc.JsoncError, tomllib.TOMLDecodeError) as e:
        raise ScryError(
            f"{shown} is not valid {_FORMAT_NAMES[target.fmt]} ({e}): fix it or move it "
            "aside; nothing was written"
        ) from None
    except jsonc.EditError as e:
        raise ScryError(f"cannot merge into {shown}: {e}; nothing was written") from None


def _sharing(agent: Agent, where: Where, path: Path) -> list[Agent]:
    """Other agents whose instructions live in ``path`` and whose server is installed."""
    out = []
    for other in agents.AGENTS:
        if other is agent or where.scope not in other.scopes:
            continue
        doc = other.instructions(where)
        if doc is None or doc.path != path:
            continue
        if installed(other, where)["server"] is True:
            out.append(other)
    return out


# -- writing --------------------------------------------------------------------------------


def _write(path: Path, text: str) -> None:
    """Replace ``path`` atomically, keeping its mode; a symbolic link (a dotfiles
    manager's) keeps pointing where it did: the file it names is replaced."""
    if path.is_symlink():
        path = path.resolve()
    path.parent.mkdir(parents=True, exist_ok=True)
    mode = path.stat().st_mode & 0o7777 if path.exists() else _default_mode()
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".scry-tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(text.encode("utf-8"))
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def _default_mode() -> int:
    """The mode a new file gets from ``open()``: 0o666 less the umask."""
    mask = os.umask(0o022)
    os.umask(mask)
    return 0o666 & ~mask


def _remove_empty_parents(folder: Path, stop: Path) -> None:
    """Remove ``folder`` and its parents while empty, up to (not including) ``stop``."""
    try:
        folder.relative_to(stop)
    except ValueError:
        return
    while folder != stop:
        try:
            folder.rmdir()
        except OSError:
            return
        folder = folder.parent
