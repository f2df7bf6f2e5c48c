"""Build the (query, code) training corpus for the code-tuned embedder (issue 14, part 1).

    python -m training corpus --out DATA [--limit-packages N] [--jobs 2]   # or $SCRY_TRAIN_DATA

One command: reads training/manifest.json, downloads each pinned package with its
registry's own client (cached in OUT/cache; a sha256 mismatch is fatal), unpacks it into
OUT/src, walks its source files, chunks them with scrydb's own chunker and mines pairs:

* ``doc``: a definition's docstring or leading comment (its first sentence) -> the
  definition with that docstring/comment removed;
* ``name``: the definition's name split into words -> the definition (a capped share);
* ``readme``: a README sentence that names a definition in backticks -> the definition.

Every pair carries 1-3 hard negatives: other definitions of the same package, from the same
file first, then those sharing the most name words. Pairs are deduplicated, filtered
(generated code, licence/boilerplate/trivial docstrings), capped per package, and split
BY PACKAGE into train and held-out. Writes OUT/train.jsonl, OUT/heldout.jsonl and
OUT/stats.json (pairs per language/package/source, drops per reason).

Evaluation hygiene: packages used by an evaluation (every evals/*.toml ``[meta] repo``,
every corpus in evals/fetch.sh and evals/NEW_CORPORA.txt, plus the hard-coded list
below) are refused, and so are vendored directories named after them inside any package.
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
import zipfile
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from training import add_data_option

HERE = Path(__file__).resolve().parent
REPO = HERE.parent

# ---------------------------------------------------------------------------------------
# Exclusions (evaluation hygiene)
# ---------------------------------------------------------------------------------------

#: Packages other evaluations use, or reserved for new golden sets. Matched against every
#: key of a candidate (see :func:`package_keys`), after :func:`norm`.
HARD_EXCLUDED = [
    # evaluation corpora named in issue 14
    "rich",
    "trpc",
    "@trpc/server",
    "trpc-server",
    "rustworkx",
    "requests",
    "express",
    "zod",
    "gin",
    "gin-gonic/gin",
    "axum",
    "gson",
    "fmt",
    "fmtlib",
    "libfmt",
    "libuv",
    "uv",
    "dspy-go",
    "soothfast",
    "finance-query",
    "code-search-mcp",
    "hashicorp/raft",
    "raft",
    "httpx",
    "minijinja",
    "scrydb",
    # reserved for new golden sets
    "cobra",
    "spf13/cobra",
    "gorilla/mux",
    "mux",
    "urfave/cli",
    "commander",
    "koa",
    "yargs",
    "ws",
    "chalk",
    "cmarkgfm",
    "cmark",
    "cmark-gfm",
    "pysimdjson",
    "simdjson",
    "pybind11",
    "jpype1",
    "jpype",
    "py4j",
]

#: Directory names that mark a vendored copy of an excluded project inside another
#: package (e.g. a bundled libuv): such directories are never walked.
EXCLUDED_DIRS = {
    "fmt",
    "fmtlib",
    "libuv",
    "pybind11",
    "simdjson",
    "cmark",
    "cmark-gfm",
    "trpc",
    "zod",
    "rustworkx",
    "httpx",
    "minijinja",
    "cobra",
    "gson",
    "axum",
    "gin",
    "raft",
    "requests",
    "express",
    "koa",
    "yargs",
    "chalk",
    "commander",
    "jpype",
    "py4j",
    "scrydb",
    "rich",
}


def norm(name: str) -> str:
    """Lower case, ``_``/``.`` as ``-`` (PyPI's normalisation), surrounding space dropped."""
    return re.sub(r"[-_.]+", "-", name.strip().lower())


def package_keys(registry: str, name: str) -> set[str]:
    """Every name a package may go by: the registry name, its unscoped npm name, and for
    Debian packages the upstream project (``golang-github-OWNER-REPO-dev`` -> REPO and
    OWNER/REPO, ``librust-NAME-dev`` -> NAME, ``ruby-NAME``, ``php-NAME``, ``libNAME-dev``)."""
    n = norm(name)
    keys = {n}
    if n.startswith("@") and "/" in n:
        scope, bare = n[1:].split("/", 1)
        keys |= {bare, scope, f"{scope}-{bare}"}
    if registry == "deb":
        m = re.match(r"golang-(?:github|gitlab|gopkg|golang|go)-(.+?)-dev$", n)
        if m:
            parts = m.group(1).split("-")
            keys |= {parts[-1], "-".join(parts[1:]) if len(parts) > 1 else parts[0]}
            if len(parts) >= 2:
                keys.add(f"{parts[0]}/{'-'.join(parts[1:])}")
                keys.add(f"{parts[-2]}/{parts[-1]}")
        for pre, suf in (("librust-", "-dev"), ("ruby-", ""), ("php-", ""), ("lib", "-dev")):
            if n.startswith(pre) and n.endswith(suf):
                keys.add(n[len(pre) : len(n) - len(suf)] if suf else n[len(pre) :])
    return keys


def spec_names(token: str) -> set[str]:
    """Package names in one spec token: ``pypi:httpx==0.28.1``, ``npm:@trpc/server@10``,
    ``github.com/spf13/cobra``, ``golang-github-spf13-cobra-dev``, ``name==ver``..."""
    t = token.strip().strip("\"'`,;()[]")
    t = re.sub(r"^(?:pypi|npm|deb|debian|crates?|go|git|github|maven|gem)[:/]", "", t, flags=re.I)
    t = re.sub(r"^(?:https?://)?(?:www\.)?(?:github\.com|gitlab\.com|golang\.org/x)/", "", t)
    out: set[str] = set()
    if not t:
        return out
    t = t.split()[0] if t.split() else t  # "pypi:jpype1==1.7.1 (native/...)"
    t = re.split(r"==|>=|<=|~=|=", t)[0]  # pip pins, and Debian's NAME=VERSION
    if t.startswith("@"):
        m = re.match(r"(@[^/@]+/[^@]+)", t)
        if m:
            t = m.group(1)
    else:
        t = t.split("@")[0]
    t = re.sub(r"\.(?:tar\.gz|tgz|zip|deb)$", "", t)
    t = re.sub(r"-\d[\w.+~-]*$", "", t)  # archive names: name-1.2.3
    if not re.search(r"[a-zA-Z]", t):
        return out
    out.add(norm(t))
    if "/" in t and not t.startswith("@"):
        out.add(norm(t.rstrip("/").split("/")[-1]))
        segs = [s for s in t.split("/") if s]
        if len(segs) >= 2:
            out.add(norm("/".join(segs[-2:])))
    for reg in ("deb", "pypi"):
        out |= package_keys(reg, t) if reg == "deb" and t.endswith("-dev") else set()
    return out


@dataclass
class Exclusions:
    names: set[str] = field(default_factory=set)
    sources: dict[str, str] = field(default_factory=dict)

    @classmethod
    def load(cls, repo: Path) -> Exclusions:
        """The hard-coded list plus everything the evaluation files name, read now."""
        ex = cls()
        for n in HARD_EXCLUDED:
            ex.add(n, "hard-coded list")
        evals = repo / "evals"
        for toml_path in sorted(evals.glob("*.toml")):
            text = toml_path.read_text(errors="replace")
            for m in re.finditer(r'^\s*repo\s*=\s*"([^"]+)"', text, re.M):
                spec = m.group(1)
                for n in spec_names(spec):
                    ex.add(n, f"{toml_path.name} [meta] repo")
                    if re.match(r"(?i)deb(?:ian)?:", spec):
                        for k in package_keys("deb", n):
                            ex.add(k, f"{toml_path.name} [meta] repo")
            for m in re.finditer(r'^\s*corpus\s*=\s*"([^"]+)"', text, re.M):
                ex.add(m.group(1).rstrip("/").rsplit("/", 1)[-1], f"{toml_path.name} [meta] corpus")
        fetch = evals / "fetch.sh"
        if fetch.exists():
            for m in re.finditer(
                r'^\s*"([^"|]+)\|([^|]+)\|([^|]+)\|([^|]+)\|', fetch.read_text(), re.M
            ):
                for tok in (m.group(1), m.group(3), m.group(4)):
                    for n in spec_names(tok):
                        ex.add(n, "evals/fetch.sh")
        new = evals / "NEW_CORPORA.txt"
        if new.exists():
            for line in new.read_text(errors="replace").splitlines():
                line = line.split("#", 1)[0].strip()
                if not line:
                    continue
                cols = [c.strip() for c in line.split("|")]
                if len(cols) >= 3:  # "name | registry | package | version"
                    for t in (cols[0], cols[2]):
                        for n in spec_names(t):
                            ex.add(n, "evals/NEW_CORPORA.txt")
                        if cols[1].lower() in ("deb", "debian"):
                            for n in package_keys("deb", cols[2]):
                                ex.add(n, "evals/NEW_CORPORA.txt")
                toks = re.split(r"[\s|,]+", line)
                # the first token of a line, and any token that looks like a package spec
                picks = [toks[0]] + [
                    t for t in toks[1:] if re.search(r"[:/@]|==|-dev$|\.(?:tar\.gz|tgz|zip)$", t)
                ]
                for t in picks:
                    for n in spec_names(t):
                        if len(n) >= 2:
                            ex.add(n, "evals/NEW_CORPORA.txt")
        return ex

    def add(self, name: str, source: str) -> None:
        n = norm(name)
        if n and n not in self.names:
            self.names.add(n)
            self.sources[n] = source

    def why(self, registry: str, name: str) -> str | None:
        """Why this package may not be used for training, or None."""
        for k in sorted(package_keys(registry, name)):
            if k in self.names:
                return f"'{k}' is excluded ({self.sources[k]})"
        return None


# ---------------------------------------------------------------------------------------
# Download, verify, unpack
# ---------------------------------------------------------------------------------------


def sha256_of(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _run(cmd: list[str], cwd: Path) -> None:
    r = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=900)
    if r.returncode != 0:
        tail = (r.stderr or r.stdout).strip().splitlines()[-3:]
        raise RuntimeError(f"{' '.join(cmd[:4])}... failed: {' / '.join(tail)}")


def _fetch(registry: str, name: str, version: str | None, tmp: Path) -> Path:
    """Download one package into the empty folder ``tmp`` with its registry's client."""
    if registry == "pypi":
        spec = f"{name}=={version}" if version else name
        _run(
            [
                sys.executable,
                "-m",
                "pip",
                "download",
                "--quiet",
                "--disable-pip-version-check",
                "--no-deps",
                "--no-binary",
                name,
                spec,
                "-d",
                str(tmp),
            ],
            tmp,
        )
    elif registry == "npm":
        _run(["npm", "pack", "--silent", f"{name}@{version}" if version else name], tmp)
    elif registry == "deb":
        _run(["apt-get", "download", f"{name}={version}" if version else name], tmp)
    else:
        raise ValueError(f"unknown registry {registry}")
    files = [p for p in tmp.iterdir() if p.is_file()]
    if len(files) != 1:
        raise RuntimeError(f"expected one archive, got {[p.name for p in files]}")
    return files[0]


def _version_of(registry: str, name: str, archive: str) -> str:
    if registry == "deb":
        return archive.split("_")[1].replace("%3a", ":")
    base = re.sub(r"\.(?:tar\.gz|tgz|zip|tar\.bz2)$", "", archive)
    if registry == "npm":
        return base.rsplit("-", 1)[1] if "-" in base else base
    stem = norm(name).replace("-", "[-_.]")
    m = re.match(rf"(?i){stem}-(.+)$", base)
    if not m:
        raise RuntimeError(f"cannot read the version of {name} from {archive}")
    return m.group(1)


def download_latest(registry: str, name: str, cache: Path) -> tuple[str, str]:
    """(archive file name, version) of the newest version, saved in ``cache``."""
    with tempfile.TemporaryDirectory(dir=cache, prefix=".dl.") as t:
        got = _fetch(registry, name, None, Path(t))
        if registry == "npm":  # npm pack names it SCOPE-NAME-VER.tgz
            version = json.loads(
                subprocess.run(
                    ["tar", "-xzOf", str(got), "package/package.json"],
                    capture_output=True,
                    check=True,
                ).stdout
            )["version"]
        else:
            version = _version_of(registry, name, got.name)
        shutil.move(str(got), cache / got.name)
        return got.name, version


def ensure_archive(pkg: dict, cache: Path) -> Path:
    """The verified archive of a manifest entry (downloaded once; a mismatch is fatal)."""
    path = cache / pkg["archive"]
    if not path.exists():
        with tempfile.TemporaryDirectory(dir=cache, prefix=".dl.") as t:
            got = _fetch(pkg["registry"], pkg["name"], pkg["version"], Path(t))
            if got.name != pkg["archive"]:
                raise SystemExit(
                    f"corpus.py: {pkg['name']}: got {got.name}, manifest says {pkg['archive']}"
                )
            shutil.move(str(got), path)
    digest = sha256_of(path)
    if digest != pkg["sha256"]:
        raise SystemExit(
            f"corpus.py: sha256 mismatch for {pkg['archive']}: {digest} != {pkg['sha256']} (fatal)"
        )
    return path


def unpack(pkg: dict, src_root: Path) -> Path:
    """Unpack the cached archive into ``src_root/REGISTRY/NAME`` (once; a stamp remembers)."""
    cache = src_root.parent / "cache"
    archive = cache / pkg["archive"]
    dest = src_root / pkg["registry"] / norm(pkg["name"]).replace("/", "__")
    stamp = dest / ".unpacked"
    if stamp.exists() and stamp.read_text() == pkg["sha256"] + "\n":
        return dest
    if dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    name = archive.name
    if name.endswith(".deb"):
        subprocess.run(["dpkg-deb", "-x", str(archive), str(dest)], check=True)
    elif name.endswith(".zip"):
        with zipfile.ZipFile(archive) as z:
            for info in z.infolist():
                target = (dest / info.filename).resolve()
                if str(target).startswith(str(dest.resolve())) and not info.is_dir():
                    target.parent.mkdir(parents=True, exist_ok=True)
                    with z.open(info) as r, open(target, "wb") as w:
                        shutil.copyfileobj(r, w)
    else:
        with tarfile.open(archive) as tf:
            tf.extractall(dest, filter="data")
    stamp.write_text(pkg["sha256"] + "\n")
    return dest


# ---------------------------------------------------------------------------------------
# Walking source files
# ---------------------------------------------------------------------------------------

CODE_LANGS = {
    "python",
    "javascript",
    "typescript",
    "tsx",
    "go",
    "rust",
    "c",
    "cpp",
    "ruby",
    "php",
    "java",
    "csharp",
    "kotlin",
    "swift",
    "scala",
    "lua",
}
#: Languages named in the data card (tsx is reported as typescript).
LANG_LABEL = {"tsx": "typescript"}

SKIP_DIRS = {
    ".git",
    "node_modules",
    "test",
    "tests",
    "testing",
    "__tests__",
    "spec",
    "specs",
    "testdata",
    "test_data",
    "fixtures",
    "__fixtures__",
    "example",
    "examples",
    "samples",
    "docs",
    "doc",
    "benchmark",
    "benchmarks",
    "bench",
    "dist",
    "umd",
    "bundles",
    "min",
    "coverage",
    "build",
    "site-packages",
    "__pycache__",
    ".github",
    "man",
    "locale",
}
GENERATED_RE = re.compile(
    rb"@generated|DO NOT EDIT|Code generated .* DO NOT EDIT|autogenerated by|auto-generated|"
    rb"Generated by|This file was automatically generated|THIS FILE IS GENERATED",
    re.I,
)
MAX_FILE_BYTES = 400_000


#: File names never mined: generated, bundled or declaration-only files, and Go tests.
GENERATED_SUFFIXES = (
    ".min.js",
    ".d.ts",
    ".d.mts",
    ".d.cts",
    "_pb2.py",
    ".pb.go",
    "_test.go",
    ".bundle.js",
    "-min.js",
)
#: Test files by name (besides ``test_*``).
TEST_SUFFIXES = ("_test.py", ".test.js", ".test.ts", ".spec.js", ".spec.ts")


def source_files(pkg: dict, root: Path, drops: Counter):
    """(relative path, language) of the source files worth mining in an unpacked package."""
    base = root
    if pkg["registry"] == "npm" and (root / "package").is_dir():
        base = root / "package"
        if (base / "src").is_dir():  # the hand-written sources, not the compiled copies
            base = base / "src"
    elif pkg["registry"] == "deb":
        skip_top = (
            "usr/share/doc",
            "usr/share/man",
            "usr/share/lintian",
            "usr/lib/x86_64-linux-gnu",
        )
    from scrydb.langs import detect

    for dirpath, dirnames, filenames in os.walk(base):
        rel_dir = Path(dirpath).relative_to(root).as_posix()
        keep = []
        for d in dirnames:
            low = d.lower()
            if low in SKIP_DIRS or low.startswith(".") or low.endswith(".egg-info"):
                continue
            if low in EXCLUDED_DIRS:
                drops["excluded-vendored-dir"] += 1
                continue
            sub = f"{rel_dir}/{d}" if rel_dir != "." else d
            if pkg["registry"] == "deb" and any(sub.startswith(s) for s in skip_top):
                continue
            keep.append(d)
        dirnames[:] = sorted(keep)
        for fn in sorted(filenames):
            low = fn.lower()
            if (
                low.endswith(GENERATED_SUFFIXES)
                or low.startswith("test_")
                or low.endswith(TEST_SUFFIXES)
            ):
                continue
            path = Path(dirpath) / fn
            lang = detect(path.relative_to(root).as_posix())
            if lang not in CODE_LANGS:
                continue
            try:
                size = path.stat().st_size
            except OSError:
                continue
            if size > MAX_FILE_BYTES or size == 0 or path.is_symlink():
                drops["file-too-large" if size else "file-empty"] += 1
                continue
            yield path.relative_to(root).as_posix(), lang


def label_of(lang: str, text: str) -> str:
    """The language a file is reported under: a ``.h`` holding C++ counts as C++, as the
    chunker treats it; tsx counts as TypeScript."""
    if lang == "c":
        from scrydb.chunk import looks_like_cpp

        if looks_like_cpp(text):
            return "cpp"
    return LANG_LABEL.get(lang, lang)


def count_languages(pkg: dict, root: Path) -> dict[str, int]:
    """Source files per language label (what the manifest records)."""
    c: Counter = Counter()
    for rel, lang in source_files(pkg, root, Counter()):
        if lang == "c":
            lang = label_of(lang, (root / rel).read_text(errors="replace"))
        c[LANG_LABEL.get(lang, lang)] += 1
    return dict(c.most_common())


# ---------------------------------------------------------------------------------------
# Mining
# ---------------------------------------------------------------------------------------

DEF_KINDS = {
    "function",
    "method",
    "class",
    "struct",
    "interface",
    "enum",
    "trait",
    "type",
    "macro",
    "object",
    "union",
    "property",
    "impl",
    "module",
}
#: Where Debian puts the sources; stripped so paths look like a repository's.
DEB_ROOTS = (
    "usr/share/gocode/src/",
    "usr/share/cargo/registry/",
    "usr/lib/ruby/vendor_ruby/",
    "usr/share/php/",
    "usr/include/",
    "usr/share/",
    "usr/lib/",
)
MAX_CODE_CHARS = 2000  # scrydb's [index] embed_max_chars
#: Share of a package's pairs that may come from name-as-words queries.
NAME_SHARE = 0.25
README_CAP = 25
#: Mining a package stops after this many definitions / documented definitions (the cap
#: keeps at most --cap pairs anyway; files are visited in a fixed random order).
MAX_ITEMS = 2500
MAX_DOC_ITEMS = 1000

TAG_LINE = re.compile(
    r"^\s*(?:@\w+|:(?:param|type|return|returns|rtype|raises|arg|ivar|cvar)\b|"
    r"(?:Args|Arguments|Parameters|Params|Returns?|Yields?|Raises|Throws|Examples?|Usage|Notes?|"
    r"See Also|Attributes|Example usage|Warning|Safety|Panics|Errors)\s*:?\s*$|#\s+(?:Examples?|"
    r"Arguments|Panics|Errors|Safety|Returns)\b|```|>>>|\.\. \w+::|-{3,}|={3,}|\\(?:param|brief|return))",
    re.I,
)
LICENCE = re.compile(
    r"copyright|licen[cs]e[ds]?\b|spdx|all rights reserved|warrant(?:y|ies)|"
    r"redistribut|gnu general public",
    re.I,
)
TODO = re.compile(r"\b(?:TODO|FIXME|XXX|HACK)\b")
BOILERPLATE = re.compile(
    r"^(?:(?:default |copy |move )?constructor\b|destructor\b|(?:creates?|constructs?|returns?|"
    r"initiali[sz]es?) (?:a )?new (?:instance|object)(?: of (?:the |this )?(?:class|\w+))?\.?$|"
    r"getter\b|setter\b|@?inheritdoc|\{@inheritdoc\}|see\b|deprecated\b|(?:for )?internal use|"
    r"private\b|internal\b|no-?op\b|nolint|eslint|istanbul|prettier|tslint|jshint|jscs|"
    r"type: ?ignore|noqa|pragma|go:|\+build|#?region|#?endregion|overrides?\b|override of\b|"
    r"implements?\b|implementation of\b|generated\b|auto-?generated|todo\b|ditto\b|"
    r"(?:the )?(?:main|entry) (?:function|point)\.?$|test\b|tests\b|helper\b|"
    r"(?:python|rust|c|c\+\+|go|js|javascript|typescript)\b.*\bbinding|"
    r"-\*-|vim?:|coding[:=]|@(?:flow|format|license|jsx)|use strict)",
    re.I,
)
CODEISH = re.compile(
    r"(?:;\s*$|\{\s*$|^\s*\}|=>|\(\);|\w+\s*=\s*[\w\"'(\[]|^\s*(?:return|if|for|"
    r"while|import|from|def|var|let|const|func|fn|pub|#include|#define)\b)"
)
SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z(`\"'])")


def split_words(name: str) -> list[str]:
    """``parse_http_date`` / ``parseHTTPDate`` / ``ParseHttpDate`` -> [parse, http, date]."""
    name = re.sub(r"[^A-Za-z0-9]+", " ", name)
    name = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", name)
    name = re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1 \2", name)
    return [w.lower() for w in name.split() if w]


def strip_markers(line: str) -> str:
    s = line.strip()
    s = re.sub(r"\*+/\s*$", "", s)
    s = re.sub(r"^(?:/\*+!?|\*+(?!/)|///?!?<?|//+!?|#+!?|--+)\s?", "", s)
    return s.strip()


def clean_text(s: str) -> str:
    s = re.sub(r"\{@(?:link|code|linkplain)\s+([^}]+)\}", r"\1", s)
    s = re.sub(r"<[^>]{1,40}>", " ", s)  # html tags
    s = re.sub(r"\[`?([^\]`]+)`?\]\([^)]*\)", r"\1", s)  # markdown links
    s = re.sub(r"\[`([^\]`]+)`\]", r"\1", s)  # rustdoc intra links
    s = s.replace("``", "").replace("`", "").replace("**", "")
    s = re.sub(r":(?:func|meth|class|attr|data|obj|mod|exc|py:\w+|c:\w+|ref|term):`?", "", s)
    return re.sub(r"\s+", " ", s).strip()


def summarize(lines: list[str]) -> tuple[str | None, str]:
    """(first sentence or summary, drop reason) of a docstring/comment's lines."""
    text: list[str] = []
    for raw in lines:
        s = strip_markers(raw)
        if TAG_LINE.match(s) or TAG_LINE.match(raw.strip()):
            break
        if not s:
            if text:
                break
            continue
        text.append(s)
    if not text:
        return None, "doc-params-only"
    return lead_sentences(" ".join(text), short=30, cap=300), ""


def lead_sentences(text: str, short: int, cap: int) -> str:
    """The cleaned first sentence of `text`, plus the second when the first is under
    `short` characters, cut at a word boundary to at most `cap` characters."""
    parts = SENTENCE_END.split(clean_text(text))
    out = parts[0]
    if len(out) < short and len(parts) > 1:
        out = out + " " + parts[1]
    out = out.strip()
    if len(out) > cap:
        out = out[:cap].rsplit(" ", 1)[0]
    return out


def reject_query(q: str, name: str) -> str | None:
    """Why a summary is no good as a query, or None."""
    words = re.findall(r"[A-Za-z]+", q)
    if LICENCE.search(q):
        return "doc-licence"
    if TODO.search(q):
        return "doc-todo"
    if BOILERPLATE.match(q):
        return "doc-boilerplate"
    if len(words) < 3 or len(q) < 15:
        return "doc-too-short"
    letters = sum(ch.isalpha() or ch.isspace() for ch in q)
    if letters < 0.7 * len(q):
        return "doc-not-prose"
    if CODEISH.search(q):
        return "doc-commented-code"
    if " ".join(split_words(q)) == " ".join(split_words(name)):
        return "doc-is-name"
    return None


def python_docstrings(text: str) -> dict[int, tuple[int, int, str]]:
    """def/class line -> (first doc line, last doc line, docstring) for a Python file."""
    out: dict[int, tuple[int, int, str]] = {}
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError):
        return out
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.body:
            first = node.body[0]
            if (
                isinstance(first, ast.Expr)
                and isinstance(first.value, ast.Constant)
                and isinstance(first.value.value, str)
                and first.end_lineno
            ):
                out[node.lineno] = (first.lineno, first.end_lineno, first.value.value)
    return out


ATTR_LINE = re.compile(r"^\s*(?:#\[|@[A-Za-z_]|\[\[|\[[A-Z]\w*(?:\(|\]))")
COMMENT_START = {
    "python": ("#",),
    "ruby": ("#",),
    "php": ("//", "/*", "*", "#"),
}


def leading_comment(lines: list[str], lo: int, def_idx: int, lang: str) -> tuple[int, int] | None:
    """(first, last) 0-based indexes of the comment block right above ``def_idx`` (attribute
    or decorator lines in between are allowed), within ``lines[lo:]``; None if none."""
    starts = COMMENT_START.get(lang, ("//", "/*", "*"))
    i = def_idx - 1
    while i >= lo and ATTR_LINE.match(lines[i]) and not lines[i].lstrip().startswith(("#!", "# ")):
        i -= 1
    last = i
    while i >= lo:
        s = lines[i].strip()
        if not s:
            break
        if s.endswith("*/") and not s.startswith(("/*", "*")):  # the end of a block comment
            j = i
            while j >= lo and "/*" not in lines[j]:
                j -= 1
            if j < lo:
                break
            i = j - 1
            continue
        if s.startswith(starts) or (s.startswith("*") and lang not in ("python", "ruby")):
            if lang in ("c", "cpp", "rust") and s.startswith("#"):
                break
            i -= 1
            continue
        break
    first = i + 1
    if first > last:
        return None
    return first, last


@dataclass
class Item:
    """One definition chunk of a package, its docstring/comment removed."""

    path: str
    lang: str
    symbol: str
    name: str
    kind: str
    code: str  #: what is embedded: header line + code without the doc, cut
    doc: str | None = None  #: summary (query), when it passed the filters
    words: frozenset = frozenset()


def repo_label(pkg: dict) -> str:
    n = norm(pkg["name"])
    if pkg["registry"] == "npm":
        return n.split("/")[-1]
    if pkg["registry"] == "deb":
        ks = package_keys("deb", n) - {n}
        short = [k for k in ks if "/" not in k]
        if short:
            return (
                min(short, key=len)
                if n.startswith(("ruby-", "php-", "librust-", "lib"))
                else sorted(short, key=len)[0]
            )
    return n


def display_path(pkg: dict, rel: str) -> str:
    if pkg["registry"] == "npm":
        rel = rel.removeprefix("package/")
    elif pkg["registry"] == "pypi":
        rel = rel.split("/", 1)[1] if "/" in rel else rel
    else:
        for r in DEB_ROOTS:
            if rel.startswith(r):
                rel = rel[len(r) :]
                break
    return rel


def mine_package(pkg: dict, root: Path, seed: int = 14) -> tuple[list[dict], Counter]:
    """All pairs of one package (before the global dedupe, cap and split) and its drops."""
    from scrydb.chunk import chunk_file

    drops: Counter = Counter()
    items: list[Item] = []
    label = repo_label(pkg)
    seen_code: set[str] = set()
    files = list(source_files(pkg, root, drops))
    # a big package is sampled: files in a fixed random order until enough definitions
    random.Random(f"{seed}:files:{pkg['name']}").shuffle(files)
    n_doc = 0
    for rel, lang in files:
        if len(items) >= MAX_ITEMS or n_doc >= MAX_DOC_ITEMS:
            drops["file-not-needed"] += 1
            continue
        try:
            data = (root / rel).read_bytes()
        except OSError:
            continue
        if GENERATED_RE.search(data[:4000]):
            drops["file-generated"] += 1
            continue
        text = data.decode("utf-8", errors="replace")
        if len(text) > 2000 and sum(len(x) > 500 for x in text.split("\n")[:50]) > 3:
            drops["file-minified"] += 1
            continue
        try:
            chunks = chunk_file(rel, text, lang)
        except Exception:
            drops["file-chunk-error"] += 1
            continue
        file_lines = text.split("\n")
        pydocs = python_docstrings(text) if lang == "python" else {}
        shown = display_path(pkg, rel)
        file_label = label_of(lang, text)
        for ch in chunks:
            if ch.kind not in DEF_KINDS or not ch.symbol:
                continue
            defs = [d for d in ch.defs if d.kind not in ("constant", "variable")]
            if not defs:
                continue
            main = next((d for d in defs if d.qualname == ch.symbol), defs[0])
            # the chunk's first piece only: a function cut in pieces keeps its symbol
            if not (ch.start_line <= main.line <= ch.end_line):
                continue
            lo, hi = ch.start_line - 1, ch.end_line - 1
            # find the doc of the main definition, else of the first member that has one
            doc_span = None
            doc_raw: list[str] = []
            for d in [main] + [d for d in defs if d is not main]:
                di = d.line - 1
                if lang == "python" and d.line in pydocs:
                    a, b, _ = pydocs[d.line]
                    if a - 1 >= lo and b - 1 <= hi and a > d.line:
                        doc_span = (a - 1, b - 1)
                else:  # a leading comment (Python too: comments above a def)
                    span = leading_comment(file_lines, lo, di, lang)
                    if span and not (lang == "python" and d.line in pydocs):
                        doc_span = span
                if doc_span:
                    doc_raw = file_lines[doc_span[0] : doc_span[1] + 1]
                    if lang == "python" and d.line in pydocs:
                        doc_raw = pydocs[d.line][2].split("\n")
                    doc_def = d
                    break
            keep = [
                file_lines[i]
                for i in range(lo, hi + 1)
                if not (doc_span and doc_span[0] <= i <= doc_span[1])
            ]
            body = "\n".join(keep).strip("\n")
            if len(body.strip()) < 40 or sum(1 for x in keep if x.strip()) < 2:
                drops["code-trivial"] += 1
                continue
            if body in seen_code:
                drops["code-duplicate"] += 1
                continue
            seen_code.add(body)
            header = f"{label} > {shown} > {ch.symbol}\n"
            code = (header + body)[:MAX_CODE_CHARS]
            it = Item(
                shown,
                file_label,
                ch.symbol,
                main.name,
                ch.kind,
                code,
                words=frozenset(split_words(ch.symbol)),
            )
            if doc_span:
                q, why0 = summarize(doc_raw)
                why = why0 or reject_query(q or "", doc_def.name)
                if why:
                    drops[why] += 1
                else:
                    probe = re.sub(
                        r"\s+",
                        " ",
                        strip_markers(
                            next((x for x in doc_raw if len(strip_markers(x)) >= 20), "")
                        ),
                    )[:40]
                    if probe and probe in re.sub(r"\s+", " ", body):
                        drops["doc-not-removed"] += 1
                    else:
                        it.doc = q
                        n_doc += 1
            items.append(it)
    pairs = _pairs_for(pkg, root, items, label, drops, random.Random(f"{seed}:{pkg['name']}"))
    return pairs, drops


def _readme_sentences(root: Path, pkg: dict) -> list[str]:
    tops = (
        [root / "package"]
        if pkg["registry"] == "npm"
        else [p for p in root.iterdir() if p.is_dir()]
        if pkg["registry"] == "pypi"
        else []
    )
    out: list[str] = []
    for top in tops:
        for fn in ("README.md", "README.rst", "README.markdown", "README.txt", "README"):
            p = top / fn
            if p.is_file():
                text = p.read_text(errors="replace")[:200_000]
                text = re.sub(r"```.*?```", " ", text, flags=re.S)  # code blocks
                for para in re.split(r"\n\s*\n", text):
                    para = " ".join(x.strip() for x in para.splitlines())
                    if para.startswith(("|", "<", "[!", "![", ">>>", "$", "..")):
                        continue
                    out.extend(SENTENCE_END.split(para))
                break
    return out


def _pairs_for(
    pkg: dict, root: Path, items: list[Item], label: str, drops: Counter, rng: random.Random
) -> list[dict]:
    if not items:
        return []
    by_file: dict[str, list[int]] = defaultdict(list)
    by_word: dict[str, list[int]] = defaultdict(list)
    for i, it in enumerate(items):
        by_file[it.path].append(i)
        for w in it.words:
            if len(w) > 2:
                by_word[w].append(i)

    def negatives(i: int) -> list[str]:
        it = items[i]
        same = [j for j in by_file[it.path] if j != i and items[j].symbol != it.symbol]
        rng.shuffle(same)
        picks = same[:2]
        score: Counter = Counter()
        for w in it.words:
            if len(w) > 2 and len(by_word[w]) < 400:
                for j in by_word[w]:
                    if j != i and j not in picks and items[j].symbol != it.symbol:
                        score[j] += 1
        ranked = [j for j, _ in score.most_common(8)]
        rng.shuffle(ranked)
        picks += ranked[: 3 - len(picks)]
        if len(picks) < 1 and len(items) > 1:
            j = rng.randrange(len(items))
            if j != i:
                picks.append(j)
        return [items[j].code for j in picks[:3]]

    def pair(i: int, query: str, source: str) -> dict:
        it = items[i]
        return {
            "query": query,
            "code": it.code,
            "negatives": negatives(i),
            "package": pkg["name"],
            "registry": pkg["registry"],
            "lang": it.lang,
            "path": it.path,
            "symbol": it.symbol,
            "kind": it.kind,
            "source": source,
        }

    pairs = [pair(i, it.doc, "doc") for i, it in enumerate(items) if it.doc]
    # README sentences that name a definition
    names: dict[str, list[int]] = defaultdict(list)
    for i, it in enumerate(items):
        if len(it.name) >= 4:
            names[it.name].append(i)
    n_readme = 0
    for sent in _readme_sentences(root, pkg):
        if n_readme >= README_CAP:
            break
        for m in re.finditer(r"`([A-Za-z_][\w.]*?)(?:\(\))?`", sent):
            bare = m.group(1).rsplit(".", 1)[-1]
            if bare in names and len(names[bare]) == 1:
                q = clean_text(sent)
                nw = len(q.split())
                if 5 <= nw <= 45 and not LICENCE.search(q) and not q.startswith("#"):
                    pairs.append(pair(names[bare][0], q.lstrip("*-# ").strip(), "readme"))
                    n_readme += 1
                break
    # the name split into words, for a capped share (definitions without a doc first)
    cands = []
    for i, it in enumerate(items):
        if it.name.startswith("_") or it.name.endswith("_"):  # dunders and private helpers
            continue
        w = split_words(it.name)
        if len(w) < 2:
            parent = split_words(it.symbol.rsplit(".", 1)[0]) if "." in it.symbol else []
            w = parent[-1:] + w if parent else w
        if len(w) >= 2:
            cands.append((0 if it.doc is None else 1, rng.random(), i, " ".join(w)))
    cands.sort()
    room = int(NAME_SHARE * max(len(pairs), 1) / (1 - NAME_SHARE)) + 2
    for _, _, i, q in cands[:room]:
        pairs.append(pair(i, q, "name"))
    drops["name-over-share"] += max(0, len(cands) - room)
    return pairs


# ---------------------------------------------------------------------------------------
# The command
# ---------------------------------------------------------------------------------------


def _mine_job(args: tuple[dict, str, int]) -> tuple[str, list[dict], Counter, float]:
    """Mine one package; the result is cached in OUT/mined, keyed by the archive's sha256,
    the seed and this file's own hash (any change to the miner re-mines)."""
    pkg, src_root, seed = args
    t = time.time()
    code_hash = hashlib.sha256(Path(__file__).read_bytes()).hexdigest()[:12]
    mined = Path(src_root).parent / "mined"
    mined.mkdir(exist_ok=True)
    cached = (
        mined
        / f"{norm(pkg['name']).replace('/', '__')}.{pkg['sha256'][:12]}.{seed}.{code_hash}.json"
    )
    if cached.exists():
        d = json.loads(cached.read_text())
        return pkg["name"], d["pairs"], Counter(d["drops"]), time.time() - t
    root = unpack(pkg, Path(src_root))
    pairs, drops = mine_package(pkg, root, seed)
    tmp = cached.with_suffix(".tmp")
    tmp.write_text(json.dumps({"pairs": pairs, "drops": drops}))
    tmp.rename(cached)
    return pkg["name"], pairs, drops, time.time() - t


def is_heldout(name: str, frac: float, seed: int) -> bool:
    h = int(hashlib.sha256(f"{seed}:{name}".encode()).hexdigest()[:8], 16)
    return h % 10_000 < frac * 10_000


def main() -> int:
    ap = argparse.ArgumentParser(description="Build the (query, code) training corpus.")
    add_data_option(ap, "--out")
    ap.add_argument("--manifest", default=str(HERE / "manifest.json"))
    ap.add_argument("--limit-packages", type=int, default=0, help="first N packages (a quick try)")
    ap.add_argument("--cap", type=int, default=600, help="pairs per package at most")
    ap.add_argument("--heldout", type=float, default=0.08, help="share of packages held out")
    ap.add_argument("--seed", type=int, default=14)
    ap.add_argument("--jobs", type=int, default=2)
    args = ap.parse_args()

    out = Path(args.out)
    cache, src_root = out / "cache", out / "src"
    cache.mkdir(parents=True, exist_ok=True)
    src_root.mkdir(parents=True, exist_ok=True)
    manifest = json.loads(Path(args.manifest).read_text())
    pkgs = manifest["packages"]
    if args.limit_packages:
        pkgs = pkgs[: args.limit_packages]

    excl = Exclusions.load(REPO)  # read now: the evaluation files may have grown
    drops: Counter = Counter()
    use = []
    refused = []
    for p in pkgs:
        why = excl.why(p["registry"], p["name"])
        if why:
            refused.append(f"{p['registry']}:{p['name']}: {why}")
            print(f"corpus.py: REFUSED {p['registry']}:{p['name']}: {why}", file=sys.stderr)
            drops["package-excluded"] += 1
            continue
        use.append(p)
    t0 = time.time()
    unavailable = []
    for p in list(use):
        try:
            ensure_archive(p, cache)
        except RuntimeError as e:
            # a registry that no longer serves the pinned version (Debian replaces a package
            # with its security update): rebuilt without it, counted and named in stats.json
            print(f"corpus.py: UNAVAILABLE {p['registry']}:{p['name']}: {e}", file=sys.stderr)
            unavailable.append(f"{p['registry']}:{p['name']}={p['version']}")
            drops["package-unavailable"] += 1
            use.remove(p)
    print(f"corpus.py: {len(use)} archives verified ({time.time() - t0:.0f}s)", file=sys.stderr)

    results: dict[str, list[dict]] = {}
    from multiprocessing import Pool

    jobs = [(p, str(src_root), args.seed) for p in use]
    with Pool(max(1, args.jobs)) as pool:
        for n, (name, pairs, d, secs) in enumerate(pool.imap_unordered(_mine_job, jobs), 1):
            results[name] = pairs
            drops.update(d)
            print(
                f"[{n}/{len(jobs)}] {name}: {len(pairs)} raw pairs ({secs:.0f}s)", file=sys.stderr
            )

    # global dedupe, per-package duplicate queries, cap
    seen: set[str] = set()
    train: list[dict] = []
    held: list[dict] = []
    per_pkg: dict[str, Counter] = {}
    for p in use:
        rng = random.Random(f"{args.seed}:cap:{p['name']}")
        kept = []
        qseen: set[str] = set()
        for pr in results.get(p["name"], []):
            h = hashlib.sha256((pr["query"] + "\x00" + pr["code"]).encode()).hexdigest()
            if h in seen:
                drops["pair-duplicate"] += 1
                continue
            seen.add(h)
            qk = pr["query"].lower()
            if qk in qseen:
                drops["query-duplicate-in-package"] += 1
                continue
            qseen.add(qk)
            kept.append(pr)
        if len(kept) > args.cap:
            order = {"doc": 0, "readme": 1, "name": 2}
            rng.shuffle(kept)
            kept.sort(key=lambda r: order[r["source"]])
            # keep the same source mix as before the cap
            n_name = sum(r["source"] == "name" for r in kept)
            n_name_keep = round(args.cap * n_name / len(kept))
            non_name = [r for r in kept if r["source"] != "name"][: args.cap - n_name_keep]
            names = [r for r in kept if r["source"] == "name"][:n_name_keep]
            drops["package-cap"] += len(kept) - len(non_name) - len(names)
            kept = non_name + names
        rng.shuffle(kept)
        dest = held if is_heldout(p["name"], args.heldout, args.seed) else train
        dest.extend(kept)
        per_pkg[p["name"]] = Counter(r["source"] for r in kept)

    rng = random.Random(args.seed)
    rng.shuffle(train)
    for name, rows in (("train.jsonl", train), ("heldout.jsonl", held)):
        with open(out / name, "w") as f:
            for r in rows:
                f.write(json.dumps(r, ensure_ascii=False) + "\n")

    lang_of = {
        p["name"]: max(p["languages"], key=p["languages"].get) for p in use if p["languages"]
    }
    stats = {
        "packages_in_manifest": len(pkgs),
        "packages_used": len(use),
        "packages_refused": refused,
        "packages_unavailable": unavailable,
        "heldout_packages": sorted(
            p["name"] for p in use if is_heldout(p["name"], args.heldout, args.seed)
        ),
        "pairs": {"train": len(train), "heldout": len(held)},
        "pairs_per_language": dict(Counter(r["lang"] for r in train + held).most_common()),
        "pairs_per_source": dict(Counter(r["source"] for r in train + held).most_common()),
        "packages_per_main_language": dict(Counter(lang_of.values()).most_common()),
        "packages_with_pairs": sum(1 for c in per_pkg.values() if sum(c.values())),
        "pairs_per_package": {k: dict(v) for k, v in sorted(per_pkg.items())},
        "negatives_per_pair": dict(Counter(len(r["negatives"]) for r in train + held)),
        "drops": dict(drops.most_common()),
        "seconds": round(time.time() - t0),
    }
    (out / "stats.json").write_text(json.dumps(stats, indent=1) + "\n")
    print(
        json.dumps(
            {
                k: stats[k]
                for k in (
                    "pairs",
                    "pairs_per_language",
                    "pairs_per_source",
                    "packages_used",
                    "drops",
                )
            },
            indent=1,
        ),
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
