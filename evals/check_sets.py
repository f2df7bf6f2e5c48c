#!/usr/bin/env python3
"""Validate the golden sets in evals/*.toml against the fetched corpora.

    python3 evals/check_sets.py            # check every set (run evals/fetch.sh first)
    python3 evals/check_sets.py --show     # also print the first/last line of every target
    python3 evals/check_sets.py httpx.toml # check one set

Checks: the TOML parses; [meta] has repo, corpus and lang; every case has a non-empty query,
a non-empty list `expect` and a known `kind`; every expect path exists under the corpus root;
every line or range lies within its file (1 <= A <= B <= number of lines); no query repeats.
It reads files only; it runs no search.
"""

from __future__ import annotations

import collections
import re
import sys
import tomllib
from pathlib import Path

HERE = Path(__file__).resolve().parent
KINDS = ("nl", "paraphrase", "identifier", "location")
SPEC = re.compile(r"^(?P<path>[^:]+?)(?::(?P<a>\d+)(?:-(?P<b>\d+))?)?$")
CASE_KEYS = {"query", "expect", "kind", "path_prefix", "lang"}
SKIP_DIRS = {".git", "node_modules", "__pycache__"}


def corpus_stats(root: Path) -> tuple[int, int, int]:
    files = lines = size = 0
    for p in root.rglob("*"):
        if p.is_file() and not (SKIP_DIRS & set(p.relative_to(root).parts)):
            files += 1
            data = p.read_bytes()
            size += len(data)
            lines += data.count(b"\n")
    return files, lines, size


def check(toml_path: Path, show: bool) -> list[str]:
    errors: list[str] = []
    name = toml_path.name
    try:
        doc = tomllib.loads(toml_path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        return [f"{name}: TOML does not parse: {exc}"]

    meta = doc.get("meta", {})
    for key in ("repo", "corpus", "lang"):
        if not isinstance(meta.get(key), str) or not meta.get(key):
            errors.append(f"{name}: [meta] lacks {key}")
    root = (toml_path.parent / meta.get("corpus", "")).resolve()
    if not root.is_dir():
        return [*errors, f"{name}: corpus {root} not found (run evals/fetch.sh)"]

    cases = doc.get("case", [])
    if not isinstance(cases, list) or not cases:
        return [*errors, f"{name}: no [[case]] entries"]

    kinds: collections.Counter[str] = collections.Counter()
    seen: set[str] = set()
    line_cache: dict[Path, int] = {}
    targets = 0
    for i, case in enumerate(cases, 1):
        where = f"{name} case {i}"
        unknown = set(case) - CASE_KEYS
        if unknown:
            errors.append(f"{where}: unknown keys {sorted(unknown)}")
        query = case.get("query")
        if not isinstance(query, str) or not query.strip():
            errors.append(f"{where}: missing query")
            query = "?"
        where = f"{name} case {i} ({query!r})"
        if query in seen:
            errors.append(f"{where}: duplicate query")
        seen.add(query)
        kind = case.get("kind")
        if kind not in KINDS:
            errors.append(f"{where}: kind {kind!r} not one of {KINDS}")
        kinds[str(kind)] += 1
        expect = case.get("expect")
        if (
            not isinstance(expect, list)
            or not expect
            or not all(isinstance(e, str) for e in expect)
        ):
            errors.append(f"{where}: expect must be a non-empty list of strings")
            continue
        for spec in expect:
            targets += 1
            m = SPEC.match(spec)
            if not m:
                errors.append(f"{where}: malformed expect {spec!r}")
                continue
            path = root / m["path"]
            if not path.is_file():
                errors.append(f"{where}: {m['path']} does not exist in {meta.get('corpus')}")
                continue
            if m["a"] is None:
                continue
            if path not in line_cache:
                line_cache[path] = len(
                    path.read_text(encoding="utf-8", errors="replace").splitlines()
                )
            n = line_cache[path]
            a = int(m["a"])
            b = int(m["b"]) if m["b"] else a
            if not 1 <= a <= b <= n:
                errors.append(f"{where}: {spec} outside 1-{n} (or A > B)")
                continue
            if show:
                text = path.read_text(encoding="utf-8", errors="replace").splitlines()
                print(
                    f"  {kind:<10} {spec}\n      {a}: {text[a - 1].strip()[:90]}\n      {b}: {text[b - 1].strip()[:90]}"
                )

    files, lines, size = corpus_stats(root)
    summary = ", ".join(f"{k} {kinds[k]}" for k in KINDS)
    status = "OK" if not errors else f"{len(errors)} error(s)"
    print(
        f"{name}: {len(cases)} cases ({summary}), {targets} targets; "
        f"corpus {meta.get('corpus')}: {files} files, {lines} lines, {size / 1e6:.2f} MB -- {status}"
    )
    return errors


def main(argv: list[str]) -> int:
    show = "--show" in argv
    names = [a for a in argv if not a.startswith("--")]
    paths = [HERE / n for n in names] if names else sorted(HERE.glob("*.toml"))
    errors: list[str] = []
    for p in paths:
        errors += check(p, show)
    for e in errors:
        print("ERROR", e)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
