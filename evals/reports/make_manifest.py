#!/usr/bin/env python3
"""Build ``manifest.json``, the bug-report golden set, from its pinned public sources.

    python evals/reports/make_manifest.py            # rewrite evals/reports/manifest.json
    python evals/reports/make_manifest.py --check    # rebuild in memory, fail on any difference

Sources (git directories, read with ``git``; never written):

* the SWE-bench **dev** split (225 instances over six repositories) as files, one folder
  per instance, in the public repository ``yogendrahexo/swe-bench-dataset`` at commit
  ``DATASET_COMMIT``: ``projects/<owner>__<repo>/PR<n>/`` holds ``bug_description.txt``
  (the issue text, then ``Hints:``, ``Created at:`` and ``Version:`` lines),
  ``changes.patch`` (the gold fix, tests excluded), ``test_changes.patch`` and
  ``buggy/`` (the changed files as they were at the base commit, by base name). The
  dataset's CSV with the ``base_commit`` column is not in that snapshot, so:
* each upstream repository's full history (with its ``refs/pull/N/head`` refs): the base
  commit is recovered as the merge base of the pull request's head and the default branch
  (SWE-bench takes GitHub's ``base.sha``), and it is accepted only when every changed
  file's blob there equals the dataset's ``buggy/`` copy; otherwise the newest commit of
  the default branch at which they all match is taken (``base_how`` says which).

Labels (``labels.py``): ``files`` = the code files the fix changed (tests out; docs and
changelogs go to ``other_files``; files the fix creates go to ``new_files``, they do
not exist at the base); ``functions`` = the innermost function or class around each
changed line of a changed ``.py`` file, read with ``ast`` at the base commit. A case whose
fix changed no existing code file is left out (``skipped`` says why).

The manifest holds no issue text and no patch: ``run.py`` reads the text from the
dataset's git directory when it runs and checks it against ``text_sha256``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path, PurePosixPath

sys.path.insert(0, str(Path(__file__).resolve().parent))

import labels as L

HERE = Path(__file__).resolve().parent
MANIFEST = HERE / "manifest.json"
DATASET_REPO = "yogendrahexo/swe-bench-dataset"
DATASET_COMMIT = "6a4c4fa5ab34be6e1bd638bf790ccad0ba59bbea"
#: dataset folder name -> upstream repository
REPOS = {
    "sqlfluff__sqlfluff": "sqlfluff/sqlfluff",
    "pvlib__pvlib-python": "pvlib/pvlib-python",
    "pydicom__pydicom": "pydicom/pydicom",
    "pylint-dev__astroid": "pylint-dev/astroid",
    "marshmallow-code__marshmallow": "marshmallow-code/marshmallow",
    # pyvista/pyvista (16 instances): its snapshot is over the fetch size limit here.
}
#: dev/test halves, by repository (never split within one)
SPLIT = {
    "sqlfluff/sqlfluff": "dev",
    "pydicom/pydicom": "dev",
    "marshmallow-code/marshmallow": "dev",
    "pvlib/pvlib-python": "test",
    "pylint-dev/astroid": "test",
}
HINTS = "\n\nHints:\n"


def mirror_dir(repo: str) -> Path:
    """The git directory of a fetched repository: ``$SCRY_REPORTS_MIRRORS`` (default
    ``/work/.mirror``) / ``owner+name`` / ``repo`` (or that folder itself when it is a
    git directory, e.g. ``git clone --mirror`` into ``owner+name``)."""
    base = Path(os.environ.get("SCRY_REPORTS_MIRRORS", "/work/.mirror"))
    d = base / repo.replace("/", "+")
    return d / "repo" if (d / "repo").is_dir() else d


def git(gd: Path, *args: str, input: str | None = None) -> str:
    return subprocess.run(
        ["git", "--git-dir", str(gd), *args],
        check=True,
        capture_output=True,
        text=True,
        input=input,
        errors="surrogateescape",
    ).stdout


def git_bytes(gd: Path, *args: str) -> bytes:
    return subprocess.run(
        ["git", "--git-dir", str(gd), *args], check=True, capture_output=True
    ).stdout


def split_description(text: str) -> tuple[str, str]:
    """(issue text as written, created_at) from a ``bug_description.txt``."""
    pos = text.index(HINTS)
    created = ""
    for line in text[pos:].splitlines():
        if line.startswith("Created at: "):
            created = line[len("Created at: ") :].strip()
    return text[:pos], created


def text_sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogateescape")).hexdigest()


def blob_ids(gd: Path, commit: str, paths: list[str]) -> dict[str, str | None]:
    """Blob id of each path at commit (None when absent)."""
    lines = "".join(f"{commit}:{p}\n" for p in paths)
    out = git(gd, "cat-file", "--batch-check=%(objectname) %(objecttype)", input=lines)
    res: dict[str, str | None] = {}
    for p, row in zip(paths, out.splitlines(), strict=True):
        parts = row.split()
        res[p] = parts[0] if len(parts) == 2 and parts[1] == "blob" else None
    return res


def default_branch(gd: Path) -> str:
    return git(gd, "symbolic-ref", "HEAD").strip()


def recover_base(gd: Path, pr: int, want: dict[str, str], created: str) -> tuple[str | None, str]:
    """(base commit, how) where every path in ``want`` has its wanted blob."""
    head = default_branch(gd)
    paths = list(want)

    def first_ok(commits: list[str]) -> str | None:
        # one cat-file process for every (commit, path) pair, commits in order
        if not commits or not paths:
            return commits[0] if commits else None
        lines = "".join(f"{c}:{p}\n" for c in commits for p in paths)
        out = git(gd, "cat-file", "--batch-check=%(objectname)", input=lines).splitlines()
        for i, c in enumerate(commits):
            got = out[i * len(paths) : (i + 1) * len(paths)]
            if all(g.split()[0] == want[p] for g, p in zip(got, paths, strict=True)):
                return c
        return None

    def merge_base(ref: str) -> str | None:
        try:
            return git(gd, "merge-base", f"refs/pull/{pr}/head", ref).strip() or None
        except subprocess.CalledProcessError:
            return None

    mb = merge_base(head)
    if mb and first_ok([mb]):
        return mb, "merge-base"
    # A pull request into another branch (a maintenance line): its merge base with that.
    branches = git(gd, "for-each-ref", "--format=%(refname)", "refs/heads").split()
    for ref in branches:
        mb = merge_base(ref)
        if mb and first_ok([mb]):
            return mb, f"merge-base {ref[len('refs/heads/') :]}"
    # Last: the newest branch commit, from a year before the pull request was opened to
    # 60 days after, at which the changed files are as the dataset has them.
    day = created[:10]
    revs = git(
        gd,
        "rev-list",
        "--date-order",
        "--branches",
        f"--before={day} +60 days",
        f"--since={day} -365 days",
    ).split()
    c = first_ok(revs)
    return (c, "blob-match") if c else (None, "not found")


def build(dataset: Path) -> dict:
    cases = []
    skipped = []
    tree = git(dataset, "ls-tree", "-r", DATASET_COMMIT, "projects").splitlines()
    by_case: dict[tuple[str, str], dict[str, str]] = {}
    for row in tree:
        meta, path = row.split("\t", 1)
        blob = meta.split()[2]
        parts = path.split("/")
        by_case.setdefault((parts[1], parts[2]), {})["/".join(parts[3:])] = blob
    for (proj, pr_dir), files in sorted(by_case.items()):
        repo = REPOS.get(proj)
        if repo is None:
            continue
        pr = int(pr_dir[2:])
        iid = f"{proj}-{pr}"
        gd = mirror_dir(repo)
        desc = git_bytes(dataset, "cat-file", "blob", files["bug_description.txt"]).decode(
            "utf-8", "surrogateescape"
        )
        text, created = split_description(desc)
        patch = git(dataset, "cat-file", "blob", files["changes.patch"])
        changes = L.parse_patch(patch)
        buggy: dict[str, list[str]] = {}
        for name, blob in files.items():
            if name.startswith("buggy/"):
                buggy.setdefault(name[len("buggy/") :], []).append(blob)
        names = [PurePosixPath(c.old_path).name for c in changes if c.old_path]
        want = {
            c.old_path: buggy[PurePosixPath(c.old_path).name][0]
            for c in changes
            if c.old_path
            and names.count(PurePosixPath(c.old_path).name) == 1
            and PurePosixPath(c.old_path).name in buggy
        }
        base, how = recover_base(gd, pr, want, created)
        if base is None:
            skipped.append({"id": iid, "why": "base commit not recovered"})
            continue
        code, other, new = [], [], []
        functions: list[str] = []
        for c in changes:
            kind = L.classify(c.path)
            if kind == "test":
                continue
            if c.old_path is None:
                (new if kind == "code" else other).append(c.path)
                continue
            if kind == "doc":
                other.append(c.old_path)
                continue
            code.append(c.old_path)
            if c.old_path.endswith(".py"):
                src = git_bytes(gd, "show", f"{base}:{c.old_path}").decode("utf-8", "replace")
                defs = L.definitions(src)
                functions += [L.function_id(c.old_path, n) for n in L.changed_definitions(c, defs)]
        if not code:
            skipped.append({"id": iid, "why": "the fix changed no existing code file"})
            continue
        date = git(gd, "show", "-s", "--format=%cI", base).strip()
        cases.append(
            {
                "id": iid,
                "repo": repo,
                "split": SPLIT[repo],
                "base_commit": base,
                "base_date": date,
                "base_how": how,
                "created_at": created,
                "text_chars": len(text),
                "text_sha256": text_sha(text),
                "files": code,
                "functions": functions,
                "other_files": other,
                "new_files": new,
            }
        )
    cases.sort(key=lambda c: (c["repo"], c["base_date"], c["id"]))
    return {
        "source": {
            "dataset": DATASET_REPO,
            "commit": DATASET_COMMIT,
            "what": "SWE-bench dev split (princeton-nlp/SWE-bench, split dev) as files",
            "upstream_heads": {
                repo: git(mirror_dir(repo), "rev-parse", default_branch(mirror_dir(repo))).strip()
                for repo in sorted(REPOS.values())
            },
        },
        "cases": cases,
        "skipped": skipped,
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--check", action="store_true", help="compare with the committed file")
    args = ap.parse_args()
    data = build(mirror_dir(DATASET_REPO))
    text = json.dumps(data, indent=1, ensure_ascii=False) + "\n"
    n = len(data["cases"])
    counts: dict[str, int] = {}
    for c in data["cases"]:
        counts[c["repo"]] = counts.get(c["repo"], 0) + 1
    print(f"{n} cases {counts}; skipped {len(data['skipped'])}", file=sys.stderr)
    if args.check:
        old = json.loads(MANIFEST.read_text(encoding="utf-8"))
        old["source"].pop("upstream_heads", None)
        data["source"].pop("upstream_heads", None)
        if old != data:
            print("manifest.json differs from a rebuild", file=sys.stderr)
            return 1
        return 0
    MANIFEST.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
