"""Walk a repository: the files worth indexing, and a count of what was skipped and why.

Rules, in order (``walk`` decides by name and stat; ``classify_content`` decides by bytes):

* noise directories (``.git``, ``node_modules``, virtualenvs, build and cache output,
  vendored code) are never entered;
* ``.gitignore`` files (nested, with negations), ``.git/info/exclude``, the user's global
  git excludes, ``.scryignore`` files (same syntax, and they win over ``.gitignore``) and
  the config's ``exclude`` / ``include`` patterns;
* a directory with its own ``.git`` (a submodule, a nested worktree or clone) is a
  repository of its own and is not entered unless ``[index] nested_repos``;
* symbolic links are never followed (a link inside the root points at a file that is
  walked anyway; a link out of the root must not be read);
* lock files, minified bundles, binaries, files over ``max_file_bytes``, generated files
  (``@generated`` / ``DO NOT EDIT`` near the top) and secrets (``.env``, private keys) are
  skipped and counted.
"""

from __future__ import annotations

import fnmatch
import os
import re
import stat
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import pathspec

from scrydb.config import IndexConfig
from scrydb.paths import storable

#: Directories never entered, whatever the ignore files say.
NOISE_DIRS = frozenset(
    {
        ".git",
        ".hg",
        ".svn",
        ".bzr",
        "node_modules",
        "bower_components",
        "jspm_packages",
        "__pycache__",
        ".venv",
        "venv",
        ".tox",
        ".nox",
        ".mypy_cache",
        ".pytest_cache",
        ".ruff_cache",
        ".hypothesis",
        ".ipynb_checkpoints",
        ".eggs",
        "site-packages",
        ".next",
        ".nuxt",
        ".svelte-kit",
        ".parcel-cache",
        ".turbo",
        ".cache",
        ".gradle",
        ".idea",
        ".vscode",
        ".terraform",
        "Pods",
        "DerivedData",
        "coverage",
        "htmlcov",
        ".coverage",
        "vendor",
        "third_party",
        "thirdparty",
        "dist",
        "build",
        "target",
        ".scry",
    }
)

#: Lock files: machine-written, huge, never the answer.
LOCK_FILES = frozenset(
    {
        "package-lock.json",
        "yarn.lock",
        "pnpm-lock.yaml",
        "bun.lockb",
        "Cargo.lock",
        "poetry.lock",
        "Pipfile.lock",
        "composer.lock",
        "Gemfile.lock",
        "go.sum",
        "uv.lock",
        "pdm.lock",
        "flake.lock",
        "mix.lock",
        "npm-shrinkwrap.json",
        "packages.lock.json",
    }
)

#: VCS and tool metadata: ignore lists and attributes are never the answer.
META_FILES = frozenset(
    {
        ".git",  # a worktree's or submodule's pointer to its git directory
        ".gitignore",
        ".gitattributes",
        ".gitmodules",
        ".gitkeep",
        ".scryignore",
        ".dockerignore",
        ".npmignore",
        ".prettierignore",
        ".eslintignore",
        ".keep",
        ".DS_Store",
    }
)

#: Extensions of files that are binary or data, skipped without reading.
BINARY_EXTENSIONS = frozenset(
    """
    png jpg jpeg gif bmp ico icns webp tiff tif psd svgz heic avif
    mp3 mp4 m4a wav ogg flac avi mov mkv webm
    zip gz tgz bz2 xz zst 7z rar tar jar war ear whl egg apk dmg iso
    exe dll so dylib a o obj lib pyc pyo pyd class wasm bin dat
    pdf doc docx xls xlsx ppt pptx odt ods
    ttf otf woff woff2 eot
    db sqlite sqlite3 parquet feather arrow npy npz pkl pickle pt pth onnx safetensors h5 ckpt
    lockb pack idx
    """.split()
)

#: Text formats that are data rather than code: never useful hits.
DATA_EXTENSIONS = frozenset({"csv", "tsv", "svg", "ipynb", "log", "map", "min", "snap"})

#: Names of secret-bearing files (skipped unless ``skip_secrets = false``): the one list,
#: covering project secrets (.env, keys, tokens) and system credential files (password
#: and group shadows, SSH host and user keys, password stores), so that a tree indexed by
#: mistake (a home directory, /etc) never puts them in an index.
SECRET_NAMES = (
    ".env",
    ".env.*",
    "*.env",
    "!.env.example",
    "!.env.sample",
    "!.env.template",
    "!.env.dist",
    "*.pem",
    "*.key",
    "*.p12",
    "*.pfx",
    "*.ppk",
    "*.jks",
    "*.keystore",
    "id_rsa*",
    "id_dsa*",
    "id_ecdsa*",
    "id_ed25519*",
    "!*.pub",
    ".netrc",
    ".git-credentials",
    ".pgpass",
    ".npmrc",
    ".pypirc",
    "credentials",
    "credentials.json",
    "credentials.yml",
    "credentials.yaml",
    "credentials.csv",
    "credentials.xml",
    "credentials.yml.enc",
    "*.kdbx",
    "*.kdb",
    ".htpasswd",
    "shadow",
    "shadow-",
    "gshadow",
    "gshadow-",
    "master.passwd",
    "ssh_host_*_key",
    "*.keytab",
    "secring.*",
    "*.gpg",
    ".docker/config.json",
    ".vault-token",
    "*.ovpn",
)
SECRET_PATTERNS = pathspec.GitIgnoreSpec.from_lines(SECRET_NAMES)
#: A file name no positive pattern could match is not a secret: one regex over the base
#: name spares the pathspec match for nearly every file (the walk's hot path).
_SECRET_MAYBE = re.compile(
    "|".join(fnmatch.translate(p.rsplit("/", 1)[-1]) for p in SECRET_NAMES if not p.startswith("!"))
)

_MINIFIED_NAME = re.compile(r"[.-]min\.(js|css|mjs)$|\.bundle\.js$|\.chunk\.js$", re.I)
_GENERATED = re.compile(
    rb"@generated|DO NOT EDIT|Code generated .* DO NOT EDIT|autogenerated by", re.I
)
#: A private key's armour near the top of a file: PEM (RSA, EC, OPENSSH, ENCRYPTED, ...),
#: a PGP secret key block or a PuTTY key.
_PRIVATE_KEY = re.compile(
    rb"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----|^PuTTY-User-Key-File-\d+:", re.M
)
#: ... and anywhere in a file when a key body follows it (a real key pasted into a test
#: fixture is still a key; a parser that merely names the armour is not).
_PRIVATE_KEY_BODY = re.compile(
    rb"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----[ \t]*\r?\n"
    rb"(?:[!-~]+:[^\n]*\n)*\r?\n?[A-Za-z0-9+/=]{40}"
)

SNIFF_BYTES = 8192
#: Byte order marks of UTF-16 text (little and big endian): its NUL bytes are not binary.
UTF16_BOMS = (b"\xff\xfe", b"\xfe\xff")


@dataclass(slots=True)
class WalkedFile:
    """A candidate file: relative POSIX path and the stat that decides re-reading."""

    path: str
    size: int
    mtime_ns: int


@dataclass
class WalkResult:
    """Files to index (sorted by path) and the count of skipped paths per reason."""

    files: list[WalkedFile] = field(default_factory=list)
    skipped: Counter[str] = field(default_factory=Counter)
    #: Directories (relative; "" is the root) that exist but could not be listed: what
    #: the index holds under them is kept, not taken for deleted.
    unlisted: list[str] = field(default_factory=list)
    #: The skipped paths per reason (directories end in "/"), the first SKIP_PATHS_KEPT
    #: of each: ``scry status --skipped`` lists them.
    skipped_paths: dict[str, list[str]] = field(default_factory=dict)

    def skip(self, reason: str, rel: str) -> None:
        """Count one skipped path (and remember it)."""
        self.skipped[reason] += 1
        kept = self.skipped_paths.setdefault(reason, [])
        if len(kept) < SKIP_PATHS_KEPT:
            kept.append(rel)


#: Skipped paths remembered per reason (the counts are exact beyond it).
SKIP_PATHS_KEPT = 10_000


class IgnoreRules:
    """Ignore specs stacked by directory: the deepest decisive match wins."""

    def __init__(self, root: Path, cfg: IndexConfig) -> None:
        self.root = root
        self.cfg = cfg
        base: list[str] = []
        for extra in (_global_excludes(), root / ".git" / "info" / "exclude"):
            if extra and os.path.isfile(extra):
                base += _read_lines(extra)
        self.base = ignore_spec(base) if base else None
        self.exclude = ignore_spec(cfg.exclude) if cfg.exclude else None
        self.include = ignore_spec(cfg.include) if cfg.include else None
        self.by_dir: dict[str, list[pathspec.GitIgnoreSpec]] = {}

    def load_dir(self, rel_dir: str, abs_dir: Path) -> None:
        specs = []
        for name in (".gitignore", ".scryignore"):
            f = abs_dir / name
            if _is_plain_file(f):
                lines = _read_lines(f)
                if lines:
                    specs.append(ignore_spec(lines))
        if specs:
            self.by_dir[rel_dir] = specs

    def ignored(self, rel: str, is_dir: bool) -> bool:
        """True when ``rel`` (POSIX, relative to root) is ignored."""
        key = rel + "/" if is_dir else rel
        if self.include is not None and self.include.match_file(key):
            return False
        if self.exclude is not None and self.exclude.match_file(key):
            return True
        # Deepest directory first; within a directory .scryignore beats .gitignore.
        parts = rel.split("/")
        for depth in range(len(parts) - 1, -1, -1):
            d = "/".join(parts[:depth])
            specs = self.by_dir.get(d)
            if not specs:
                continue
            sub = key[len(d) + 1 :] if d else key
            for spec in reversed(specs):
                res = spec.check_file(sub)
                if res.include is not None:
                    return bool(res.include)
        if self.base is not None:
            res = self.base.check_file(key)
            if res.include is not None:
                return bool(res.include)
        return False


class Selector:
    """The one rule for what gets indexed, by name and stat: the walk asks it about each
    entry it meets, and ``scry status`` (which files git tracks that the index lacks, and
    why) and the watcher (which events matter) ask it about any path. The ignore files
    it needs are loaded on demand, directory by directory.
    """

    def __init__(self, root: Path, cfg: IndexConfig) -> None:
        self.root = root
        self.cfg = cfg
        self.rules = IgnoreRules(root, cfg)
        self._loaded: set[str] = set()
        self._dirs: dict[str, str | None] = {}

    def load(self, rel_dir: str, abs_dir: Path | None = None) -> None:
        """Read a directory's .gitignore / .scryignore (once)."""
        if rel_dir not in self._loaded:
            self._loaded.add(rel_dir)
            self.rules.load_dir(rel_dir, abs_dir or (self.root / rel_dir if rel_dir else self.root))

    def dir_reason(self, rel: str, name: str) -> str | None:
        """Why the directory ``rel`` is not entered (None: it is). Its parent's ignore
        files must be loaded."""
        include = self.rules.include
        if name in NOISE_DIRS or name.endswith(".egg-info") or name.startswith("bazel-"):
            if not (include is not None and include.match_file(rel + "/")):
                return "noise-dir"
        if os.path.exists(os.path.join(self.root, rel, "pyvenv.cfg")):
            return "noise-dir"  # a virtualenv, whatever its name
        if not self.cfg.nested_repos and os.path.lexists(os.path.join(self.root, rel, ".git")):
            if not (include is not None and include.match_file(rel + "/")):
                return "nested-repo"  # a submodule, worktree or clone: a repository of its own
        if self.rules.ignored(rel, True):
            return "ignored"
        return None

    def file_reason(self, rel: str, name: str, size: int) -> str | None:
        """Why the regular file ``rel`` is skipped by name or size (None: it is kept).
        Its directory's ignore files must be loaded."""
        reason = name_reason(rel, name, size, self.cfg)
        if reason is None and self.rules.ignored(rel, False):
            reason = "ignored"
        return reason

    def reason(self, rel: str, size: int | None = None, is_dir: bool = False) -> str | None:
        """Why any path ``rel`` (relative POSIX) is not indexed, judged from its
        directories down (None: the walk would list it, or enter it when ``is_dir``).
        ``size`` None: the size is not judged."""
        parts = rel.split("/")
        self.load("")
        for i in range(1, len(parts) + is_dir):
            d = "/".join(parts[:i])
            if d not in self._dirs:
                self._dirs[d] = self.dir_reason(d, parts[i - 1])
            if self._dirs[d] is not None:
                return self._dirs[d]
            self.load(d)
        if is_dir:
            return None
        return self.file_reason(rel, parts[-1], 0 if size is None else size)


def walk(root: str | os.PathLike[str], cfg: IndexConfig | None = None) -> WalkResult:
    """List the indexable files under ``root`` by name and stat (no file is read)."""
    cfg = cfg or IndexConfig()
    root_path = Path(root)
    select = Selector(root_path, cfg)
    result = WalkResult()
    stack: list[str] = [""]
    while stack:
        rel_dir = stack.pop()
        abs_dir = root_path / rel_dir if rel_dir else root_path
        select.load(rel_dir, abs_dir)
        try:
            entries = list(os.scandir(abs_dir))
        except OSError as e:
            result.skip(failure_reason(e), rel_dir + "/")
            if not isinstance(e, FileNotFoundError):
                result.unlisted.append(rel_dir)
            continue
        for entry in entries:
            name = entry.name
            rel = f"{rel_dir}/{name}" if rel_dir else name
            if not storable(name):
                # Bytes that are not UTF-8 (``\xff``) cannot be stored, shown or asked for.
                result.skip("bad-name", rel)
                continue
            try:
                if entry.is_symlink():
                    result.skip("symlink", rel)
                    continue
                st = entry.stat(follow_symlinks=False)
            except OSError as e:
                result.skip(failure_reason(e), rel)
                continue
            if stat.S_ISDIR(st.st_mode):
                if name == ".git" and not rel_dir:
                    continue  # the repository's own database: not a skip worth counting
                why = select.dir_reason(rel, name)
                if why is not None:
                    result.skip(why, rel + "/")
                    continue
                stack.append(rel)
                continue
            if not stat.S_ISREG(st.st_mode):
                result.skip("special", rel)
                continue
            reason = select.file_reason(rel, name, st.st_size)
            if reason is not None:
                result.skip(reason, rel)
                continue
            result.files.append(WalkedFile(rel, st.st_size, st.st_mtime_ns))
    result.files.sort(key=lambda f: f.path)
    return result


def name_reason(rel: str, name: str, size: int, cfg: IndexConfig) -> str | None:
    """Why a file is skipped, judged by its name and size alone (None = keep)."""
    if name in LOCK_FILES:
        return "lock-file"
    if name in META_FILES:
        return "meta-file"
    ext = name.rsplit(".", 1)[-1].lower() if "." in name else ""
    if ext in BINARY_EXTENSIONS:
        return "binary"
    if ext in DATA_EXTENSIONS:
        return "data"
    if _MINIFIED_NAME.search(name):
        return "minified"
    if cfg.skip_secrets and _SECRET_MAYBE.match(name) and SECRET_PATTERNS.match_file(rel):
        return "secret"
    if size > cfg.max_file_bytes:
        return "too-large"
    return None


def classify_content(data: bytes, skip_secrets: bool = True) -> str | None:
    """Why a file is skipped, judged by its bytes (None = index it)."""
    if data.startswith(UTF16_BOMS) and not data.startswith(b"\xff\xfe\x00\x00"):
        data = data.decode("utf-16", errors="replace").encode("utf-8", errors="replace")
    head = data[:SNIFF_BYTES]
    if b"\x00" in head:
        # UTF-16 without a byte order mark is rare in source trees: any NUL is binary.
        return "binary"
    top = b"\n".join(head.split(b"\n", 8)[:8])
    if _GENERATED.search(top):
        return "generated"
    if skip_secrets and (_PRIVATE_KEY.search(head) or _PRIVATE_KEY_BODY.search(data)):
        return "secret"
    if len(data) > 2048:
        lines = data.count(b"\n") + 1
        if len(data) / lines > 500:
            return "minified"
    return None


def failure_reason(err: OSError) -> str:
    """Skip reason of a path the walk listed but could not stat or open: ``vanished``
    (deleted meanwhile) or ``unreadable`` (permissions, I/O)."""
    return "vanished" if isinstance(err, FileNotFoundError) else "unreadable"


def _is_plain_file(path: Path) -> bool:
    """A regular file, not a symbolic link; False when it cannot be stat'ed (unlike
    ``Path.is_file`` on Python 3.11, which raises in an unreadable directory)."""
    return os.path.isfile(path) and not os.path.islink(path)


def ignore_spec(lines: list[str]) -> pathspec.GitIgnoreSpec:
    """The gitignore spec of ``lines`` (an ignore file, the config's patterns), leaving out
    the lines pathspec cannot compile (``!`` alone, a trailing backslash, a reversed range
    ``[z-a]``): git matches nothing with them either, and one of them made the whole walk
    fail (found by tests/fuzz/filters.py). Each line's wildcard runs are written in their
    shortest form first (:func:`_short_wildcards`)."""
    lines = [_short_wildcards(ln) for ln in lines]
    try:
        return pathspec.GitIgnoreSpec.from_lines(lines)
    except (ValueError, re.error):
        return pathspec.GitIgnoreSpec.from_lines([ln for ln in lines if _compiles(ln)])


def _short_wildcards(line: str) -> str:
    """``line`` with each run of ``*`` and ``?`` that holds a ``*`` (outside brackets and
    escapes; a ``**`` that is a whole path component kept, since git gives it a meaning of
    its own; elsewhere git reads it as two ordinary asterisks) written as its ``?`` then
    one ``*``: the same files to git (a run of ordinary asterisks and k
    question marks matches any k or more characters of one path segment), and no longer a
    regex that backtracks exponentially. pathspec wrote ``*`` * 43 as 43 ``[^/]*`` in a
    row, and one such line in a ``.gitignore`` hung the walk (tests/fuzz/filters.py,
    issue 46)."""
    if "*" not in line:
        return line
    out: list[str] = []
    i, n = 0, len(line)
    while i < n:
        ch = line[i]
        if ch == "\\":
            out.append(line[i : i + 2])
            i += 2
        elif ch == "[":
            j = i + 1
            if j < n and line[j] in "!^":
                j += 1
            if j < n and line[j] == "]":
                j += 1
            j = line.find("]", j)
            if j < 0:  # no closing bracket: a literal "[" to git
                out.append(ch)
                i += 1
            else:
                out.append(line[i : j + 1])
                i = j + 1
        elif ch in "*?":
            j = i
            while j < n and line[j] in "*?":
                j += 1
            run = line[i:j]
            whole = (i == 0 or line[i - 1] == "/") and (j == n or line[j] == "/")
            if (run == "**" and whole) or "*" not in run:
                out.append(run)
            else:
                out.append("?" * run.count("?") + "*")
            i = j
        else:
            out.append(ch)
            i += 1
    return "".join(out)


def _compiles(line: str) -> bool:
    try:
        pathspec.GitIgnoreSpec.from_lines([line])
    except (ValueError, re.error):
        return False
    return True


def _read_lines(path: Path) -> list[str]:
    try:
        return path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return []


def _global_excludes() -> Path | None:
    """The user's global git excludes file (core.excludesFile or the XDG default)."""
    home = Path.home()
    for cfg in (
        home / ".gitconfig",
        Path(os.environ.get("XDG_CONFIG_HOME", home / ".config")) / "git" / "config",
    ):
        try:
            text = cfg.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        m = re.search(r"^\s*excludesfile\s*=\s*(.+?)\s*$", text, re.I | re.M)
        if m:
            return Path(os.path.expanduser(m.group(1).strip('"')))
    xdg = Path(os.environ.get("XDG_CONFIG_HOME", home / ".config")) / "git" / "ignore"
    return xdg
