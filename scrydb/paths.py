"""Where things are: the repository root above a directory, the index file of a root,
the cache directory, and the one rule that turns a user's PATH into a scope inside the
repository.

Nothing here opens the index. A search never picks a new root from its PATH: a PATH is a
part of the repository the command runs in, and a new tree is indexed only through
``scry index PATH``.
"""

from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path

import platformdirs

from scrydb.errors import ScryError

#: Files that mark a repository root when looking upwards from a directory.
ROOT_MARKERS = (".git", ".scry.toml", ".hg", ".svn")


def storable(text: str) -> bool:
    """Valid Unicode without NULs: text SQLite can store and compare. A file name with
    bytes that are not UTF-8, an undecodable argument or a JSON ``\\ud800`` is not (the
    one check for names, paths, filters and queries)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return "\x00" not in text


def cache_dir() -> Path:
    """The per-user cache directory (``$SCRY_CACHE_DIR`` or the platform's)."""
    return Path(os.environ.get("SCRY_CACHE_DIR") or platformdirs.user_cache_dir("scrydb"))


def repo_name(root: Path) -> str:
    """The repository's name as it is embedded in each chunk's context line (``repo >
    path > symbol``): the same for every checkout of one repository, so that their
    texts, and so the shared vector cache's keys, agree.

    A git checkout with an ``origin`` remote is named by the remote's last component
    (two clones in folders of other names agree); a linked worktree without one by its
    main worktree's folder; anything else by its own folder name.
    """
    try:
        return _git_repo_name(root) or root.name
    except OSError:  # an unreadable root: its sync says so
        return root.name


def _git_repo_name(root: Path) -> str | None:
    common = _git_common_dir(root)
    if common is not None:
        url = _origin_url(common / "config")
        if url:
            tail = re.split(r"[/:\\]", url.rstrip("/"))[-1]
            tail = tail[:-4] if tail.endswith(".git") else tail
            if tail and tail not in (".", ".."):
                return tail
        if common.name == ".git" and (root / ".git").is_file():
            return common.parent.name or None
    return None


def _git_common_dir(root: Path) -> Path | None:
    """The git directory shared by all worktrees of ``root`` (``.git`` of the main
    worktree), or None when ``root`` is not the top of a git checkout."""
    dot = root / ".git"
    if dot.is_dir():
        return dot
    try:
        first = dot.read_text(encoding="utf-8", errors="replace").splitlines()[0]
    except (OSError, IndexError):
        return None
    if not first.startswith("gitdir:"):
        return None
    gitdir = Path(first[len("gitdir:") :].strip())
    gitdir = gitdir if gitdir.is_absolute() else (root / gitdir)
    try:
        common = (gitdir / "commondir").read_text(encoding="utf-8").strip()
    except OSError:
        return gitdir.resolve()  # a submodule: its own git directory
    c = Path(common)
    return (c if c.is_absolute() else gitdir / c).resolve()


_ORIGIN = re.compile(r'^\s*\[\s*remote\s+"origin"\s*\]\s*$', re.M)


def _origin_url(config: Path) -> str | None:
    """The ``url`` of ``[remote "origin"]`` in a git config file, if any."""
    try:
        text = config.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    m = _ORIGIN.search(text)
    if m is None:
        return None
    for line in text[m.end() :].splitlines():
        line = line.strip()
        if line.startswith("["):
            return None
        key, sep, value = line.partition("=")
        if sep and key.strip().lower() == "url":
            return value.strip().strip('"') or None
    return None


def default_db_path(root: Path, env: bool = True) -> Path:
    """Where the index of ``root`` lives by default: ``$SCRY_DB``, else the per-user cache
    directory keyed by the root's absolute path (two clones of one remote are two
    working trees, so they get two indexes)."""
    env_db = os.environ.get("SCRY_DB") if env else None
    if env_db:
        return expand_user(env_db).resolve()
    key = hashlib.blake2b(str(root.resolve()).encode(), digest_size=6).hexdigest()
    name = "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in root.name) or "root"
    return cache_dir() / f"{name}-{key}.db"


def _existing_dir(start: str | os.PathLike[str] | None) -> Path:
    p = expand_user(str(start or os.getcwd())).resolve()
    if not p.exists():
        raise ScryError(f"no such directory: {start}")
    if not p.is_dir():
        raise ScryError(f"not a directory: {start}")
    return p


def repo_root(start: str | os.PathLike[str] | None = None) -> Path | None:
    """The repository containing ``start`` (default: the current directory): the nearest
    directory upwards with a root marker (``.git``, ``.scry.toml``, ``.hg``, ``.svn``);
    failing that, the nearest one that already has an index; None when neither exists."""
    p = _existing_dir(start)
    chain = (p, *p.parents)
    for d in chain:
        if any((d / m).exists() for m in ROOT_MARKERS):
            return d
    for d in chain:
        if default_db_path(d, env=False).exists():
            return d
    return None


def no_repository(where: Path, remedy: str) -> ScryError:
    """The one refusal of a command that needs a repository (a search, ``scry serve``) run
    outside any: ``remedy`` says how to go on from that command."""
    return ScryError(
        f"no repository here: {where} has no .git or .scry.toml above it and no index; {remedy}"
    )


def find_root(start: str | os.PathLike[str] | None = None) -> Path:
    """The repository root containing ``start`` (see :func:`repo_root`); else ``start``."""
    return repo_root(start) or _existing_dir(start)


def is_broad_root(path: Path) -> bool:
    """Whether indexing ``path`` would sweep up a whole home directory or file system
    (``/``, ``$HOME`` or a directory above it): ``scry index`` asks first."""
    p = path.resolve()
    home = Path.home().resolve()
    return p == Path(p.anchor) or p == home or p in home.parents


#: Why a path outside the repository is refused, by what the path was for: a search's
#: PATH or ``--path`` narrows it; ``read``/``related`` serve only the repository's files.
OUTSIDE_REASONS = {
    "search": (
        "a PATH narrows a search to a part of this repository (to search another tree, "
        "cd there, or `scry index` it first)"
    ),
    "read": (
        "only files of this repository are served from its index (to read another "
        "tree's files, cd there, or `scry index` it first)"
    ),
}


def expand_user(path: str) -> Path:
    """``path`` with a leading ``~`` or ``~user`` expanded; as written when it names no
    user (``~0``, ``~nosuchuser/x``: a relative name, as a shell leaves it), where
    pathlib raises RuntimeError (found by tests/test_hostile_queries.py's generated
    path filters)."""
    try:
        return Path(path).expanduser()
    except RuntimeError:
        return Path(path)


def scope_in(root: Path, path: str, cwd: Path | None = None, purpose: str = "search") -> str:
    """A user's PATH (a directory, file or glob; relative to ``cwd``, or absolute) as a
    path inside ``root``, relative to it in POSIX form ("" for the root itself).

    One rule for a positional PATH, ``--path`` and a file to read: relative paths start
    at the current directory, as in every shell tool. A path outside the repository is
    refused, with the reason for ``purpose`` (a key of :data:`OUTSIDE_REASONS`).
    """
    if not path:
        raise ScryError("empty path")
    base = (cwd or Path.cwd()).resolve()
    p = expand_user(path)
    full = p if p.is_absolute() else base / p
    # Resolve what exists (symlinks, ..), keep a glob tail as written.
    parts = full.parts
    for i in range(len(parts), 0, -1):
        head = Path(*parts[:i])
        if head.exists():
            full = head.resolve().joinpath(*parts[i:])
            break
    full = Path(os.path.normpath(full))
    try:
        rel = full.relative_to(root.resolve())
    except ValueError:
        raise ScryError(
            f"{path} is outside the repository {root}: {OUTSIDE_REASONS[purpose]}"
        ) from None
    s = rel.as_posix()
    return "" if s == "." else s


def filter_path(root: Path, path: str | None) -> str | None:
    """A search's or locate's ``path`` filter as the API and MCP take it: relative to the
    repository root (``src/``, ``**/*.py``), or absolute inside the root (agents often pass
    absolute paths). A path that leaves the root (``..``, ``/etc``) is an error, never a
    silent empty result."""
    if path is None or not isinstance(path, str) or not path.strip():
        return path
    p = path.strip()
    outside = ScryError(
        f"path filter {path!r} is outside the repository {root}: give a path relative to "
        "the repository root ('src/', '**/*.py') or an absolute path inside it"
    )
    if expand_user(p).is_absolute():
        try:
            return scope_in(root, p, cwd=root)
        except ScryError:
            raise outside from None
    if any(part == ".." for part in re.split(r"[/\\]", p)):
        raise outside
    return path


_TARGET = re.compile(r"^(?P<path>.+?):(?P<a>\d+)(?:-(?P<b>\d+))?$")
_BAD_RANGE = re.compile(r"^.+:(\d*-\d*|-?\d+-)$")


def parse_target(target: str) -> tuple[str, int | None, int | None]:
    """``PATH``, ``PATH:LINE`` or ``PATH:A-B`` (as hit headers print them) as
    (path, first line, last line); the lines are None where not given."""
    m = _TARGET.match(target.strip())
    if m:
        return m["path"], int(m["a"]), int(m["b"]) if m["b"] else None
    if _BAD_RANGE.match(target.strip()):
        raise ScryError(f"bad line range in {target!r} (use PATH:A-B)")
    return target, None, None


def split_target(file: str, a: int | None, b: int | None) -> tuple[str, int | None, int | None]:
    """A tool's ``file`` argument with optional lines: ``path:A-B`` / ``path:N`` in the
    file argument count when no lines were given apart (agents copy hit headers)."""
    if isinstance(file, str) and a is None and b is None:
        return parse_target(file)
    return file, a, b
