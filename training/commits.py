"""Mine (commit subject -> changed definition) pairs from git history.

    python -m training commits [--mirror-dir /work/.mirror] [--manifest M] [--out F] [--jobs 1]
    python -m training commits --pin owner/name ...   # (re)write the manifest from mirror HEADs

People describe code in their own words when they commit it: "Fix crash when the header
list is empty" is a query, and the function whose body that commit changed is its answer.
This complements training/corpus.py (docstrings/names/READMEs) with such pairs.

Method, per repository pinned in the manifest (a bare mirror, nothing is checked out; all
objects are read at the pinned commit):

1. ``git log --no-merges --first-parent -n MAX PINNED`` with ``--name-only``.
2. The subject is cleaned (conventional-commit ``type(scope):`` prefixes, leading
   ``[tag]`` markers, trailing ``(#123)`` / ``#123`` / ``fixes #123`` refs dropped); a commit
   is dropped when its subject is housekeeping (bump, release, version, merge, revert,
   typo, lint, formatting, docs, CI, dependencies, tests only, cleanup-only, WIP...), has
   fewer than 4 or more than 20 words, or its author is a bot.
3. The commit must change 1-3 source files that scrydb can chunk and corpus.py would walk
   (tests, vendored/excluded directories, docs, generated and huge files do not count;
   changes to such files are allowed alongside).
4. ``git diff-tree -p -U0`` gives the new-side changed lines; each changed file is read
   at that commit and chunked with scrydb's own chunker exactly as corpus.py does. Changed
   lines are mapped to definition chunks; blank/comment/import lines outside definitions
   are ignored, any other change outside a definition drops the commit. The commit is
   kept when the changes fall in 1 or 2 definitions; one pair per definition.
5. The code side is the definition at that commit, docstring/leading comment removed,
   formatted ``LABEL > path > Symbol\\n<code>`` and cut at 2000 characters (as corpus.py).
   Negatives: up to 3 other definitions of the same file at that commit, topped up with
   definitions of the same repository (other mined files) sharing the most name words.
6. Dedupe: a subject is used once per repository (the newest commit wins; the 1-2 pairs
   of one commit share it), at most 2 pairs per (repo, path, symbol), at most ``--cap``
   pairs per repository (the newest kept; mining a repository stops there).

Writes OUT (jsonl, corpus.py's train.jsonl format with ``source="commit"``,
``registry="github"``, ``package="owner/name"`` and a ``commit`` key) and
``commits-stats.json`` next to it (per-repo commits seen/kept/pairs, drops per reason).
Repositories used by evaluations (corpus.py's exclusions and its held-out packages) are
refused.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import subprocess
import sys
import time
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from training import corpus  # exclusions, filters, doc helpers

HERE = Path(__file__).resolve().parent
REPO = HERE.parent


DEFAULT_MANIFEST = HERE / "commits_manifest.json"
DEFAULT_OUT = Path("/work/train-data/commits.jsonl")
MAX_COMMITS = 3000
MAX_SOURCE_FILES = 3
MAX_DEFS = 2
PAIRS_PER_SYMBOL = 2
CAP = 700
MIN_WORDS, MAX_WORDS = 4, 20
#: Definition kinds that may be a target: corpus.py's, less whole modules.
TARGET_KINDS = corpus.DEF_KINDS - {"module"}

# ---------------------------------------------------------------------------------------
# Subjects
# ---------------------------------------------------------------------------------------

CC_PREFIX = re.compile(r"^([A-Za-z][\w./-]{0,24})(\([^)]{0,60}\))?!?:\s+")
TAG_PREFIX = re.compile(r"^(?:\[[^\]]{0,40}\]\s*)+")
TRAILING_REF = re.compile(
    r"(?:\s*[(\[]?(?:(?:fix(?:e[sd])?|close[sd]?|resolve[sd]?|refs?|see|pr|gh|issue)"
    r"[\s:-]*)?(?:#|GH-|gh-)\d+(?:\s*,\s*#\d+)*[)\]]?)+\s*$",
    re.I,
)
#: Conventional-commit types that are housekeeping.
HOUSE_TYPES = {
    "chore",
    "docs",
    "doc",
    "ci",
    "build",
    "style",
    "test",
    "tests",
    "release",
    "deps",
    "dep",
    "revert",
    "bump",
    "lint",
    "format",
    "typo",
    "wip",
    "changelog",
    "readme",
}
HOUSEKEEPING = re.compile(
    r"\b(?:bump(?:s|ed)?|release[ds]?|releasing|version(?:s|ing)?|merge (?:branch|pull|remote)|"
    r"revert(?:s|ed)?|"
    r"typos?|lint(?:s|er|ing)?|clippy|reformat(?:ted|ting)?|formatting|gofmt|rustfmt|"
    r"cargo fmt|clang-format|prettier|black|isort|flake8|mypy|pyupgrade|docs?|documentation|"
    r"readme|changelog|changes\.rst|docstrings?|comments?|ci|travis|appveyor|github actions|"
    r"workflows?|deps|dependenc(?:y|ies)|dependabot|renovate|pre-commit|precommit|wip|"
    r"copyright|licen[cs]e|coverage|codecov|fixup!?|squash!?|initial commit|"
    r"code style|coding style|whitespace|spelling|spell|notes?|examples?|godoc|javadoc|"
    r"rustdoc|jsdoc|doxygen|reverting|^document(?:s|ed)?\s+(?=[a-z`\"']))\b",
    re.I,
)
TESTS_ONLY = re.compile(
    r"^(?:(?:add|added|adds|update|updated|fix|fixed|improve|more|extend|expand|remove|"
    r"rewrite|refactor|move|enable|disable|skip)\s+)?(?:(?:a|some|more|the|unit|"
    r"regression|missing|failing|flaky)\s+)*(?:tests?|testing|test cases?|benchmarks?)\b",
    re.I,
)
CLEANUP_ONLY = re.compile(
    r"^(?:(?:minor|small|some|more|code|general|misc\.?|further)\s+)*(?:clean\s*-?\s*ups?|"
    r"tidy(?:\s+up)?|refactor(?:ing)?|renam(?:e|ing)|simplif(?:y|ication)|polish)"
    r"(?:\s+(?:of\s+)?(?:the\s+)?(?:code|things|stuff|imports|internals))?\.?$",
    re.I,
)
BOT = re.compile(
    r"\[bot\]|dependabot|renovate|github-actions|pre-commit-ci|greenkeeper|snyk-bot|"
    r"allcontributors|imgbot|mergify|copilot",
    re.I,
)


def clean_subject(subject: str) -> tuple[str, str | None]:
    """(cleaned subject, drop reason or None)."""
    s = subject.strip()
    if re.match(r"(?i)^(?:merge|revert|fixup!|squash!|amend!)\b", s):
        return s, "subject-housekeeping"
    s = TAG_PREFIX.sub("", s)
    m = CC_PREFIX.match(s)
    if m:
        kind = m.group(1).lower()
        if kind in HOUSE_TYPES:
            return s, "subject-housekeeping"
        s = s[m.end() :]
    s = TAG_PREFIX.sub("", s)
    s = TRAILING_REF.sub("", s).strip()
    s = re.sub(r"\s+", " ", s).strip()
    s = re.split(r"(?<=[a-z0-9)])\.\s+(?=[A-Z])", s)[0]  # "Fix x. This ..." -> "Fix x"
    s = s.rstrip(".;:,").strip()
    if s and s[0].islower() and not re.match(r"\S*[_.()/A-Z]", s.split(" ")[0]):
        s = s[0].upper() + s[1:]  # "fix parser" -> "Fix parser", not "iterKeys" -> "IterKeys"
    if HOUSEKEEPING.search(s):
        return s, "subject-housekeeping"
    if TESTS_ONLY.match(s):
        return s, "subject-tests-only"
    if CLEANUP_ONLY.match(s):
        return s, "subject-cleanup-only"
    n = len(s.split())
    if n < MIN_WORDS:
        return s, "subject-too-short"
    if n > MAX_WORDS:
        return s, "subject-too-long"
    if sum(ch.isalpha() or ch.isspace() for ch in s) < 0.6 * len(s):
        return s, "subject-not-prose"
    return s, None


# ---------------------------------------------------------------------------------------
# Files
# ---------------------------------------------------------------------------------------

SKIP_SUFFIXES = (
    *corpus.GENERATED_SUFFIXES,
    *corpus.TEST_SUFFIXES,
    ".test.tsx",
    ".spec.tsx",
    "_test.rs",
    "test.java",
    "tests.java",
    "_test.c",
    "_test.cc",
    "_test.cpp",
    "_unittest.cc",
)


#: Besides corpus.py's SKIP_DIRS (also matched without leading underscores: _examples).
EXTRA_SKIP_DIRS = {"testsuite", "test_suite", "unittests", "scripts", "tools", "ci", "pkg"}


def source_lang(path: str) -> str | None:
    """The chunker language of a repository path corpus.py would mine, else None."""
    from scrydb.langs import detect

    parts = path.split("/")
    for d in parts[:-1]:
        low = d.lower()
        if low in corpus.SKIP_DIRS or low.lstrip("_") in corpus.SKIP_DIRS | EXTRA_SKIP_DIRS:
            return None
        if low in EXTRA_SKIP_DIRS or low.startswith(".") or low.endswith(".egg-info"):
            return None
        if low in corpus.EXCLUDED_DIRS or low in ("vendor", "third_party", "thirdparty", "deps"):
            return None
    fn = parts[-1].lower()
    if fn.endswith(SKIP_SUFFIXES) or fn.startswith(("test_", "conftest")):
        return None
    if fn in ("test.py", "tests.py", "setup.py", "noxfile.py", "build.rs"):
        return None
    lang = detect(path)
    return lang if lang in corpus.CODE_LANGS else None


class Blobs:
    """A ``git cat-file --batch`` process: file contents at a commit, fast."""

    def __init__(self, git_dir: Path) -> None:
        self.proc = subprocess.Popen(
            ["git", "--git-dir", str(git_dir), "cat-file", "--batch"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
        )

    def get(self, rev: str, path: str) -> bytes | None:
        assert self.proc.stdin and self.proc.stdout
        self.proc.stdin.write(f"{rev}:{path}\n".encode())
        self.proc.stdin.flush()
        header = self.proc.stdout.readline().split()
        if len(header) < 3 or header[1] != b"blob":
            return None
        data = self.proc.stdout.read(int(header[2]))
        self.proc.stdout.read(1)
        return data

    def close(self) -> None:
        if self.proc.stdin:
            self.proc.stdin.close()
        self.proc.wait()


def git(git_dir: Path, *args: str) -> str:
    r = subprocess.run(
        ["git", "--git-dir", str(git_dir), *args],
        capture_output=True,
        text=True,
        errors="replace",
        timeout=600,
    )
    if r.returncode != 0:
        raise RuntimeError(f"git {args[0]} failed: {r.stderr.strip()[-300:]}")
    return r.stdout


@dataclass
class Commit:
    sha: str
    author: str
    subject: str
    files: list[str]


def log(git_dir: Path, head: str, limit: int) -> list[Commit]:
    out = git(
        git_dir,
        "log",
        "--no-merges",
        "--first-parent",
        "--no-renames",
        f"-n{limit}",
        "--format=%x00%H%x1f%an <%ae>%x1f%s",
        "--name-only",  # trees only: a snapshot may lack its largest blobs
        head,
    )
    commits = []
    for rec in out.split("\x00")[1:]:
        head_line, _, rest = rec.partition("\n")
        sha, author, subject = [*head_line.split("\x1f"), "", ""][:3]
        files = [ln for ln in rest.splitlines() if ln.strip()]
        commits.append(Commit(sha, author, subject, files))
    return commits


HUNK = re.compile(r"^@@ -\d+(?:,\d+)? \+(\d+)(?:,(\d+))? @@")


def changed_lines(diff: str) -> dict[str, list[tuple[int, int, list[str]]]]:
    """path -> [(first new line, count, deleted lines)] from a ``-U0`` patch; count 0 is a
    pure deletion after line ``first``."""
    out: dict[str, list[tuple[int, int, list[str]]]] = defaultdict(list)
    path = None
    for ln in diff.split("\n"):
        if ln.startswith("+++ "):
            path = ln[6:] if ln.startswith("+++ b/") else None
        elif ln.startswith("@@") and path:
            m = HUNK.match(ln)
            if m:
                out[path].append((int(m.group(1)), int(m.group(2) or 1), []))
        elif ln.startswith("-") and not ln.startswith("--- ") and path and out[path]:
            out[path][-1][2].append(ln[1:])
    return out


TRIVIAL_LINE = re.compile(
    r"^\s*(?:$|#(?!\[)|//|/\*|\*|\*/|--|import\b|from\s+\S+\s+import\b|use\s|extern crate\b|"
    r"#\s*include\b|package\s|require\(|const\s+\w+\s*=\s*require\(|mod\s+\w+;|\)\s*;?$|"
    r"[\w.]+,?\s*$|\"[\w./-]+\"\s*$|pub use\b|pub mod\s+\w+;|__all__|export\s+\*|"
    r"export\s*\{|\}\s*from\b)"
)


# ---------------------------------------------------------------------------------------
# Definitions of one file version
# ---------------------------------------------------------------------------------------


@dataclass
class Def:
    path: str
    lang: str
    symbol: str
    kind: str
    code: str
    words: frozenset


def file_defs(
    label: str, path: str, lang: str, text: str
) -> tuple[list[tuple[int, int, str | None]], dict[str, Def]]:
    """(chunk spans (start, end, symbol or None if not a target), symbol -> Def) of a file,
    chunked and formatted as corpus.py does (doc removed, header line, length cap)."""
    from scrydb.chunk import chunk_file

    chunks = chunk_file(path, text, lang)
    lines = text.split("\n")
    pydocs = corpus.python_docstrings(text) if lang == "python" else {}
    file_label = corpus.label_of(lang, text)
    spans: list[tuple[int, int, str | None]] = []
    defs: dict[str, Def] = {}
    for ch in chunks:
        target = ch.kind in TARGET_KINDS and bool(ch.symbol)
        if target and re.search(r"(?i)(?:^|[._ ])tests?(?:$|[._ ])|^test_", ch.symbol or ""):
            target = False
        spans.append((ch.start_line, ch.end_line, ch.symbol if target else None))
        if not target or ch.symbol in defs:
            continue
        members = [d for d in ch.defs if d.kind not in ("constant", "variable")]
        if not members:
            continue
        main = next((d for d in members if d.qualname == ch.symbol), members[0])
        if not (ch.start_line <= main.line <= ch.end_line):
            continue  # a later piece of a split definition: its first piece is the code
        lo, hi = ch.start_line - 1, ch.end_line - 1
        doc_span = None
        for d in [main] + [d for d in members if d is not main]:
            di = d.line - 1
            if lang == "python" and d.line in pydocs:
                a, b, _ = pydocs[d.line]
                if a - 1 >= lo and b - 1 <= hi and a > d.line:
                    doc_span = (a - 1, b - 1)
            else:
                span = corpus.leading_comment(lines, lo, di, lang)
                if span and not (lang == "python" and d.line in pydocs):
                    doc_span = span
            if doc_span:
                break
        keep = [
            lines[i]
            for i in range(lo, min(hi, len(lines) - 1) + 1)
            if not (doc_span and doc_span[0] <= i <= doc_span[1])
        ]
        body = "\n".join(keep).strip("\n")
        if len(body.strip()) < 40 or sum(1 for x in keep if x.strip()) < 2:
            continue
        sym = ch.symbol or ""
        code = (f"{label} > {path} > {sym}\n" + body)[: corpus.MAX_CODE_CHARS]
        defs[sym] = Def(path, file_label, sym, ch.kind, code, frozenset(corpus.split_words(sym)))
    return spans, defs


def symbol_at(spans: list[tuple[int, int, str | None]], line: int) -> tuple[bool, str | None]:
    """(inside any chunk, target symbol or None) for a 1-based line."""
    for a, b, sym in spans:
        if a <= line <= b:
            return True, sym
    return False, None


# ---------------------------------------------------------------------------------------
# One repository
# ---------------------------------------------------------------------------------------


def mine_repo(
    name: str, git_dir: Path, head: str, limit: int, cap: int, seed: int
) -> tuple[list[dict[str, Any]], dict[str, Any], Counter]:
    drops: Counter = Counter()
    label = corpus.norm(name.split("/")[-1])
    commits = log(git_dir, head, limit)
    blobs = Blobs(git_dir)
    pending: list[tuple[Commit, str, list[Def], dict[str, Def]]] = []
    pool: dict[tuple[str, str], Def] = {}  # (path, symbol) -> newest Def, for negatives
    seen_q: set[str] = set()
    per_symbol: Counter = Counter()
    n_pairs = 0
    kept_commits = 0
    try:
        for c in commits:
            if n_pairs >= cap:
                drops["repo-cap-reached"] += 1
                continue
            if BOT.search(c.author):
                drops["author-bot"] += 1
                continue
            q, why = clean_subject(c.subject)
            if why:
                drops[why] += 1
                continue
            if q.lower() in seen_q:
                drops["subject-duplicate-in-repo"] += 1
                continue
            src = [(f, lang) for f in c.files if (lang := source_lang(f))]
            if not src:
                drops["no-source-file"] += 1
                continue
            if len(src) > MAX_SOURCE_FILES:
                drops["too-many-source-files"] += 1
                continue
            try:
                diff = git(
                    git_dir,
                    "diff-tree",
                    "-p",
                    "-U0",
                    "--no-renames",
                    "--no-color",
                    "--no-ext-diff",
                    c.sha,
                    "--",
                    *[f for f, _ in src],
                )
            except RuntimeError:
                drops["diff-error"] += 1
                continue
            hunks = changed_lines(diff)
            touched: list[Def] = []
            file_all: dict[str, Def] = {}
            why = None
            for path, lang in src:
                if path not in hunks:
                    continue  # deleted file, or a mode change only
                data = blobs.get(c.sha, path)
                if data is None:
                    why = "file-missing"
                    break
                if len(data) > corpus.MAX_FILE_BYTES or corpus.GENERATED_RE.search(data[:4000]):
                    why = "file-generated-or-large"
                    break
                text = data.decode("utf-8", errors="replace")
                if len(text) > 2000 and sum(len(x) > 500 for x in text.split("\n")[:50]) > 3:
                    why = "file-minified"
                    break
                try:
                    spans, defs = file_defs(label, path, lang, text)
                except Exception:
                    why = "file-chunk-error"
                    break
                lines = text.split("\n")
                syms: set[str] = set()
                for first, count, deleted in hunks[path]:
                    if count:
                        probe = [(ln, True) for ln in range(first, first + count)]
                    else:  # pure deletion after line `first`: both neighbours must agree
                        a = symbol_at(spans, first)[1]
                        b = symbol_at(spans, first + 1)[1]
                        if a and a == b:
                            syms.add(a)
                            continue
                        if all(TRIVIAL_LINE.match(x) for x in deleted):
                            continue
                        why = "change-outside-definition"
                        break
                    for ln, _ in probe:
                        _, sym = symbol_at(spans, ln)
                        if sym:
                            syms.add(sym)
                        elif ln - 1 < len(lines) and TRIVIAL_LINE.match(lines[ln - 1]):
                            continue
                        else:
                            why = "change-outside-definition"
                            break
                    if why:
                        break
                if why:
                    break
                for s in sorted(syms):
                    if s not in defs:
                        why = "definition-trivial-or-split"
                        break
                    touched.append(defs[s])
                if why:
                    break
                for s, d in defs.items():
                    file_all[f"{path}\x00{s}"] = d
                    pool.setdefault((path, s), d)
            if why:
                drops[why] += 1
                continue
            if not touched:
                drops["no-definition-changed"] += 1
                continue
            if len(touched) > MAX_DEFS:
                drops["too-many-definitions"] += 1
                continue
            touched = [d for d in touched if per_symbol[(d.path, d.symbol)] < PAIRS_PER_SYMBOL]
            if not touched:
                drops["symbol-cap"] += 1
                continue
            for d in touched:
                per_symbol[(d.path, d.symbol)] += 1
            seen_q.add(q.lower())
            kept_commits += 1
            n_pairs += len(touched)
            pending.append((c, q, touched, file_all))
    finally:
        blobs.close()

    # negatives: same file at that commit first, then the repository's other definitions
    by_word: dict[str, list[Def]] = defaultdict(list)
    pool_list = list(pool.values())
    for d in pool_list:
        for w in d.words:
            if len(w) > 2:
                by_word[w].append(d)
    rows: list[dict[str, Any]] = []
    for c, q, touched, file_all in pending:
        rng = random.Random(f"{seed}:{c.sha}")
        for d in touched:
            bad = {d.code}
            same = [
                x
                for x in file_all.values()
                if x.path == d.path and x.symbol != d.symbol and x.code not in bad
            ]
            rng.shuffle(same)
            negs: list[str] = []
            for x in same:
                if len(negs) >= 3:
                    break
                if x.code not in bad:
                    negs.append(x.code)
                    bad.add(x.code)
            if len(negs) < 3:
                score: Counter = Counter()
                for w in d.words:
                    if len(w) > 2 and len(by_word[w]) < 400:
                        for x in by_word[w]:
                            if x.symbol != d.symbol and x.code not in bad:
                                score[(x.path, x.symbol)] += 1
                ranked = [k for k, _ in score.most_common(8)]
                rng.shuffle(ranked)
                others = [pool[k] for k in ranked]
                rest = [x for x in pool_list if x.symbol != d.symbol]
                rng.shuffle(rest)
                for x in others + rest[:20]:
                    if len(negs) >= 3:
                        break
                    if x.code not in bad and x.symbol != d.symbol:
                        negs.append(x.code)
                        bad.add(x.code)
            rows.append(
                {
                    "query": q,
                    "code": d.code,
                    "negatives": negs,
                    "package": name,
                    "registry": "github",
                    "lang": d.lang,
                    "path": d.path,
                    "symbol": d.symbol,
                    "kind": d.kind,
                    "source": "commit",
                    "commit": c.sha,
                }
            )
    rows = rows[:cap]
    stats = {
        "head": head,
        "commits_seen": len(commits),
        "commits_kept": kept_commits,
        "pairs": len(rows),
        "pairs_per_language": dict(Counter(r["lang"] for r in rows).most_common()),
    }
    return rows, stats, drops


def _job(args: tuple[str, str, str, int, int, int]) -> tuple[str, list, dict, Counter, float]:
    name, git_dir, head, limit, cap, seed = args
    t = time.time()
    rows, stats, drops = mine_repo(name, Path(git_dir), head, limit, cap, seed)
    stats["seconds"] = round(time.time() - t, 1)
    return name, rows, stats, drops, time.time() - t


# ---------------------------------------------------------------------------------------
# The command
# ---------------------------------------------------------------------------------------


def refusal(name: str, excl: corpus.Exclusions, heldout: set[str]) -> str | None:
    """Why a repository may not be used, or None."""
    bare = name.split("/")[-1]
    for reg, n in (("github", name), ("github", bare)):
        why = excl.why(reg, n)
        if why:
            return why
    keys = corpus.package_keys("github", name) | corpus.package_keys("github", bare)
    if keys & heldout:
        return f"held out by corpus.py ({sorted(keys & heldout)})"
    return None


def heldout_keys(stats_path: Path) -> set[str]:
    if not stats_path.exists():
        return set()
    out: set[str] = set()
    for n in json.loads(stats_path.read_text()).get("heldout_packages", []):
        for reg in ("pypi", "npm", "deb"):
            out |= corpus.package_keys(reg, n)
    return out


def git_dir_of(mirror: Path, name: str) -> Path:
    return mirror / name.replace("/", "+") / "repo"


def main() -> int:
    ap = argparse.ArgumentParser(description="Mine (commit subject -> definition) pairs.")
    ap.add_argument("--mirror-dir", default="/work/.mirror")
    ap.add_argument("--manifest", default=str(DEFAULT_MANIFEST))
    ap.add_argument("--out", default=str(DEFAULT_OUT))
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--pin", nargs="*", help="write the manifest: these repos at mirror HEAD")
    ap.add_argument("--only", nargs="*", help="mine only these repos of the manifest")
    args = ap.parse_args()

    mirror = Path(args.mirror_dir)
    manifest_path = Path(args.manifest)
    out = Path(args.out)
    excl = corpus.Exclusions.load(REPO)
    held = heldout_keys(out.parent / "stats.json")

    if args.pin is not None:
        repos = []
        for name in args.pin:
            why = refusal(name, excl, held)
            if why:
                print(f"commits.py: REFUSED {name}: {why}", file=sys.stderr)
                continue
            try:
                head = git(git_dir_of(mirror, name), "rev-parse", "HEAD").strip()
            except (RuntimeError, OSError) as e:
                print(f"commits.py: skipped {name}: {e}", file=sys.stderr)
                continue
            repos.append({"repo": name, "head": head})
        manifest = {
            "params": {
                "max_commits": MAX_COMMITS,
                "max_source_files": MAX_SOURCE_FILES,
                "max_definitions": MAX_DEFS,
                "pairs_per_symbol": PAIRS_PER_SYMBOL,
                "cap_per_repo": CAP,
                "subject_words": [MIN_WORDS, MAX_WORDS],
                "max_code_chars": corpus.MAX_CODE_CHARS,
                "seed": 14,
            },
            "repos": repos,
        }
        manifest_path.write_text(json.dumps(manifest, indent=1) + "\n")
        print(f"commits.py: pinned {len(repos)} repos in {manifest_path}", file=sys.stderr)
        return 0

    manifest = json.loads(manifest_path.read_text())
    prm = manifest["params"]
    jobs = []
    refused = []
    for r in manifest["repos"]:
        if args.only and r["repo"] not in args.only:
            continue
        why = refusal(r["repo"], excl, held)
        if why:
            refused.append(f"{r['repo']}: {why}")
            print(f"commits.py: REFUSED {r['repo']}: {why}", file=sys.stderr)
            continue
        jobs.append(
            (
                r["repo"],
                str(git_dir_of(mirror, r["repo"])),
                r["head"],
                prm["max_commits"],
                prm["cap_per_repo"],
                prm["seed"],
            )
        )
    t0 = time.time()
    results: dict[str, list] = {}
    per_repo: dict[str, dict] = {}
    drops: Counter = Counter()

    def record(name: str, rows: list, st: dict, d: Counter, secs: float, n: int) -> None:
        results[name] = rows
        per_repo[name] = st
        st["drops"] = dict(d.most_common())
        drops.update(d)
        print(
            f"[{n}/{len(jobs)}] {name}: seen {st['commits_seen']} kept {st['commits_kept']} "
            f"pairs {st['pairs']} ({secs:.0f}s)",
            file=sys.stderr,
        )

    if args.jobs > 1:
        from multiprocessing import Pool

        with Pool(args.jobs) as pool:
            for n, res in enumerate(pool.imap_unordered(_job, jobs), 1):
                record(*res, n)
    else:
        for n, job in enumerate(jobs, 1):
            try:
                record(*_job(job), n)
            except (RuntimeError, OSError) as e:
                print(f"commits.py: {job[0]} failed: {e}", file=sys.stderr)
                refused.append(f"{job[0]}: failed: {e}")

    rows = [r for name, *_ in jobs for r in results.get(name, [])]
    out.parent.mkdir(parents=True, exist_ok=True)
    with open(out, "w") as f:
        for r in rows:
            f.write(json.dumps(r, ensure_ascii=False) + "\n")
    stats = {
        "repos_used": len(results),
        "repos_refused_or_failed": refused,
        "pairs": len(rows),
        "pairs_per_language": dict(Counter(r["lang"] for r in rows).most_common()),
        "negatives_per_pair": dict(Counter(len(r["negatives"]) for r in rows)),
        "per_repo": per_repo,
        "drops": dict(drops.most_common()),
        "params": prm,
        "seconds": round(time.time() - t0),
    }
    stats_path = out.parent / "commits-stats.json"
    if args.only:
        stats_path = out.with_suffix(".stats.json")
    stats_path.write_text(json.dumps(stats, indent=1) + "\n")
    print(json.dumps({k: stats[k] for k in ("pairs", "pairs_per_language", "drops")}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
