"""A traceback frame's path matched to an indexed file, and whether a frame is library code.

A pasted frame names a file the way the machine that crashed saw it: under
``site-packages/``, a CI's checkout (``/home/runner/work/repo/repo/src/x.py``), a bundler's
URL (``webpack://app/./src/x.ts``), a Windows drive or a ``file:///`` URL. The indexed files
are relative to the repository root. :func:`map_frame_path` matches the two by their
longest common path suffix and refuses to guess: when several indexed files fit a frame
equally well, the answer is None.

Pure: no SQL, no file system; the indexed paths come in as a plain collection.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable

#: Path pieces (after ``\\`` -> ``/``) that put a frame in installed or runtime code,
#: not in a repository: Python's site-packages and standard library, node_modules and
#: Node's internals, GOROOT and the Go module cache, the Rust toolchain and cargo's
#: registry, Ruby gems, PHP's composer ``vendor/``, Maven/Gradle caches.
LIBRARY_MARKERS = (
    "site-packages/",
    "dist-packages/",
    "/lib/python2",
    "/lib/python3",
    "/lib/pypy",
    "/Lib/",  # Windows: C:\Python311\Lib\...
    "/usr/lib/",
    "/usr/local/lib/",
    "/usr/share/",
    "node_modules/",
    "/usr/local/go/",
    "/usr/lib/go",
    "Program Files/Go/",
    "/pkg/mod/",
    "/hostedtoolcache/",
    "/rustc/",
    "/.cargo/registry/",
    "/.cargo/git/",
    "/.rustup/",
    "/gems/",
    "/rubygems/",
    "/.rbenv/",
    "/.rvm/",
    "/vendor/",
    "/.m2/repository/",
    "/.gradle/caches/",
)
#: Prefixes of pseudo-paths and runtime paths: ``<frozen importlib._bootstrap>``,
#: ``<string>``, Node's ``node:internal/...`` and (older Node) ``internal/...``,
#: Ruby's ``[GEM]``/``[RUBY]`` placeholders, webpack's own runtime.
LIBRARY_PREFIXES = (
    "<",
    "node:",
    "internal/",
    "[GEM]",
    "[RUBY]",
    "[internal",
    "webpack/bootstrap",
    "(webpack)",
    "native",
)
#: Node's core modules as older versions print them, a bare file name (``fs.js:432``).
NODE_CORE_FILES = frozenset(
    "fs.js module.js events.js net.js timers.js vm.js util.js stream.js http.js https.js "
    "child_process.js _stream_readable.js _stream_writable.js domain.js tls.js zlib.js "
    "buffer.js assert.js dns.js readline.js".split()
)

#: ``webpack://``, ``file:///``, ``app:///``, ``webpack:/x`` (one slash, as some tools write).
_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]{0,30}):/+")
_DRIVE = re.compile(r"^/?[A-Za-z]:(?=/|$)")
#: ``[PROJECT_ROOT]/app/x.rb`` (error trackers), ``~/`` and ``./`` leads.
_PLACEHOLDER = re.compile(r"^\[[A-Za-z_ ]{1,40}\]/")


def is_library_path(raw: str) -> bool:
    """Whether a frame's path is installed or runtime code (site-packages, node_modules,
    ``/usr/lib``, GOROOT, the module cache, ``<frozen ...>``, ``internal/``, ...)."""
    s = raw.strip().replace("\\", "/")
    if not s:
        return False
    if s.startswith(LIBRARY_PREFIXES) or s in NODE_CORE_FILES:
        return True
    return any(marker in s for marker in LIBRARY_MARKERS)


def path_parts(raw: str) -> tuple[str, ...]:
    """A frame's path as its components, prefixes that never name a repository file
    removed: URL schemes and hosts, ``webpack``'s namespace before ``/./``, a drive letter,
    ``.``, ``..`` and ``~``. Pseudo-files (``<frozen ...>``, ``<string>``) give ()."""
    s = raw.strip().strip("\"'")
    if not s or s.startswith("<") or s.startswith("node:"):
        return ()
    s = s.replace("\\", "/")
    m = _SCHEME.match(s)
    if m and len(m.group(1)) > 1:  # one letter is a Windows drive, not a scheme
        scheme = m.group(1).lower()
        s = s[m.end() :]
        if scheme in ("http", "https"):
            s = s.split("/", 1)[1] if "/" in s else ""
        if "/./" in s:  # webpack://app/./src/x.ts: what follows the namespace
            s = s.split("/./", 1)[1]
    s = _PLACEHOLDER.sub("", s)
    s = _DRIVE.sub("", s)
    s = s.split("?", 1)[0]
    return tuple(p for p in s.split("/") if p and p not in (".", "..", "~"))


class PathMapper:
    """Indexed paths by file name, built once, for mapping many frames of one report."""

    def __init__(self, indexed_paths: Iterable[str]) -> None:
        self._exact: dict[str, list[tuple[str, tuple[str, ...]]]] = {}
        self._folded: dict[str, list[tuple[str, tuple[str, ...]]]] = {}
        for path in indexed_paths:
            parts = tuple(p for p in path.split("/") if p)
            if not parts:
                continue
            self._exact.setdefault(parts[-1], []).append((path, parts))
            self._folded.setdefault(parts[-1].casefold(), []).append(
                (path, tuple(p.casefold() for p in parts))
            )

    def map(self, raw: str) -> str | None:
        """The indexed file a frame's path names, or None (no file of that name, or
        several that fit equally well: never a guess).

        Candidates share the file name. Each is scored by its common suffix with the
        frame's path; the longest wins. A candidate *conflicts* when both paths go on past
        the common suffix with different directories (``site-packages/pkg/x.py`` against
        ``src/pkg/x.py``); one that is wholly a suffix of the frame's path (a CI checkout
        prefix) or has the frame's whole path as its suffix does not. At the top score a
        single non-conflicting candidate wins; several are a tie (None); conflicting ones
        win alone only when they share at least a directory and the file name."""
        parts = path_parts(raw)
        if not parts:
            return None
        # Installed code maps only on a directory as well as the file name: the repository
        # can be the installed package (site-packages/pkg/x.py is src/pkg/x.py), but a
        # root-level file of the same name is not django/core/handlers/base.py.
        least = 2 if is_library_path(raw) else 1
        candidates = self._exact.get(parts[-1])
        if candidates is None:  # Windows paths: the same file in another case
            candidates = self._folded.get(parts[-1].casefold())
            parts = tuple(p.casefold() for p in parts)
        if not candidates:
            return None
        scored: list[tuple[int, bool, str]] = []
        for path, cparts in candidates:
            common = _common_suffix(parts, cparts)
            conflict = common < len(parts) and common < len(cparts)
            scored.append((common, conflict, path))
        best = max(s[0] for s in scored)
        if best < least:
            return None
        top = [s for s in scored if s[0] == best]
        clean = [s for s in top if not s[1]]
        if clean:
            return clean[0][2] if len(clean) == 1 else None
        if len(top) == 1 and best >= 2:
            return top[0][2]
        return None


def _common_suffix(a: tuple[str, ...], b: tuple[str, ...]) -> int:
    n = 0
    for x, y in zip(reversed(a), reversed(b), strict=False):
        if x != y:
            break
        n += 1
    return n


def map_frame_path(raw: str, indexed_paths: Collection[str]) -> str | None:
    """The indexed file (a repository-relative path from ``indexed_paths``) that a frame's
    raw path names, or None when none does or several tie (see :meth:`PathMapper.map`).
    Builds the file-name index each call: for many frames, build one :class:`PathMapper`."""
    return PathMapper(indexed_paths).map(raw)
