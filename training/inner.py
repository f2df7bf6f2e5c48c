"""(inner comment -> the code around it) pairs from the corpus's packages.

The docstring pairs of ``corpus.py`` teach what a definition does as a whole, in its
author's summary. Questions people ask about code are often about a step *inside* a
definition ("how does the parser decide whether a list is tight or loose": 60 lines into a
108-line function). Authors label such steps with full-line comments inside the body:
"// If the list is tight, drop the paragraph wrappers". This script mines them:

- the query: a block of consecutive full-line comments inside a definition chunk (not the
  leading doc), cleaned like a docstring summary (first sentence or two, markup removed),
  at least 5 words of prose; commented-out code, lint pragmas, TODOs and licence text are
  dropped by ``corpus.py``'s filters;
- the code: what scrydb embeds for that part of the chunk, **with the comment removed**:
  the chunk's header line and its text from the start, or, when the comment sits past the
  first ~600 characters (past what a 128-token training view sees), a window from a few
  lines above the comment, as scrydb's window vectors embed long chunks;
- 1-2 hard negatives: other definitions of the same file.

Same packages, exclusions and held-out split as ``corpus.py`` (held-out packages give no
pairs). Needs ``corpus.py`` to have unpacked the sources (``OUT/src``).

    python -m training inner --out /work/train-data     # -> OUT/inner.jsonl
    python -m training train ... --extra /work/train-data/inner.jsonl
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
import time
from collections import Counter
from pathlib import Path

from training import corpus

LINE_COMMENT = {
    "python": ("#",),
    "ruby": ("#",),
    "php": ("//", "#", "/*", "*"),
}
CAP_PER_PACKAGE = 200
PER_CHUNK = 2
WINDOW_AFTER = 600  # characters into the chunk past which a window is used
WINDOW_ABOVE = 3  # lines of code kept above the comment in a window
PRAGMA = re.compile(
    r"^(?:noqa|type:|pylint|eslint|ts-|@ts-|istanbul|prettier|nolint|fallthrough|fall through|"
    r"falls through|nosec|clippy|allow\(|rubocop|phpcs|phpstan|psalm|go:|\+build|#region|"
    r"#endregion|region\b|endregion\b|-\*-|vim?:|pragma)",
    re.I,
)


def comment_blocks(lines: list[str], lang: str) -> list[tuple[int, int]]:
    """(first, last) indexes of runs of full-line comments in ``lines``."""
    starts = LINE_COMMENT.get(lang, ("//", "/*", "*"))
    out: list[tuple[int, int]] = []
    i = 0
    while i < len(lines):
        s = lines[i].strip()
        is_c = s.startswith(starts) and not s.startswith(("#!", "#include", "#define", "#if"))
        if lang in ("c", "cpp", "rust", "go", "javascript", "typescript", "java") and s.startswith(
            "#"
        ):
            is_c = False
        if not is_c:
            i += 1
            continue
        j = i
        while j + 1 < len(lines):
            t = lines[j + 1].strip()
            if t.startswith(starts) and not (
                lang not in ("python", "ruby", "php") and t.startswith("#")
            ):
                j += 1
            else:
                break
        out.append((i, j))
        i = j + 1
    return out


def comment_query(raw: list[str], name: str) -> tuple[str | None, str]:
    text = [corpus.strip_markers(x) for x in raw]
    text = [t for t in text if t]
    if not text:
        return None, "inner-empty"
    if PRAGMA.match(text[0]):
        return None, "inner-pragma"
    if re.search(r"https?:|www\.|\S+\.(?:html?|md)\b", " ".join(text)):
        return None, "inner-link"
    out = corpus.lead_sentences(" ".join(text), short=40, cap=200)
    why = corpus.reject_query(out, name)
    if why:
        return None, why.replace("doc-", "inner-")
    if len(re.findall(r"[A-Za-z]{2,}", out)) < 5:
        return None, "inner-too-short"
    return out, ""


def mine(pkg: dict, root: Path, seed: int) -> tuple[list[dict], Counter]:
    from scrydb.chunk import chunk_file

    drops: Counter = Counter()
    rng = random.Random(f"{seed}:inner:{pkg['name']}")
    label = corpus.repo_label(pkg)
    files = list(corpus.source_files(pkg, root, drops))
    rng.shuffle(files)
    pairs: list[dict] = []
    for rel, lang in files:
        if len(pairs) >= CAP_PER_PACKAGE * 2:
            break
        try:
            data = (root / rel).read_bytes()
        except OSError:
            continue
        if corpus.GENERATED_RE.search(data[:4000]):
            continue
        text = data.decode("utf-8", errors="replace")
        if len(text) > 2000 and sum(len(x) > 500 for x in text.split("\n")[:50]) > 3:
            continue
        try:
            chunks = chunk_file(rel, text, lang)
        except Exception:
            continue
        file_lines = text.split("\n")
        shown = corpus.display_path(pkg, rel)
        file_label = corpus.label_of(lang, text)
        defs = []
        for ch in chunks:
            if ch.kind not in corpus.DEF_KINDS or not ch.symbol:
                continue
            defs.append(ch)
        texts = {
            id(ch): (
                f"{label} > {shown} > {ch.symbol}\n"
                + "\n".join(file_lines[ch.start_line - 1 : ch.end_line]).strip("\n")
            )[: corpus.MAX_CODE_CHARS]
            for ch in defs
        }
        for ch in defs:
            lo, hi = ch.start_line - 1, ch.end_line - 1
            body = file_lines[lo : hi + 1]
            main_line = min((d.line for d in ch.defs), default=ch.start_line) - 1 - lo
            blocks = [(a, b) for a, b in comment_blocks(body, lang) if a > max(main_line, 0)]
            # a comment must label code: something after it inside the chunk; a comment
            # right above a member definition is that member's doc, not an inner comment
            def_rows = {d.line - 1 - lo for d in ch.defs}
            blocks = [
                (a, b)
                for a, b in blocks
                if any(x.strip() for x in body[b + 1 : b + 4])
                and not def_rows & {b + 1, b + 2, b + 3}
            ]
            rng.shuffle(blocks)
            n = 0
            for a, b in blocks:
                if n >= PER_CHUNK:
                    break
                q, why = comment_query(body[a : b + 1], (ch.symbol or "").rsplit(".", 1)[-1])
                if not q:
                    drops[why] += 1
                    continue
                keep = body[:a] + body[b + 1 :]
                header = f"{label} > {shown} > {ch.symbol}\n"
                if len("\n".join(body[:a])) > WINDOW_AFTER:
                    start = max(0, a - WINDOW_ABOVE)
                    code_lines = keep[start:]
                    source = "inner-window"
                else:
                    code_lines = keep
                    source = "inner"
                code = (header + "\n".join(code_lines).strip("\n"))[: corpus.MAX_CODE_CHARS]
                if len(code) - len(header) < 60:
                    drops["inner-code-trivial"] += 1
                    continue
                sibs = [texts[id(o)] for o in defs if o is not ch and o.symbol != ch.symbol]
                rng.shuffle(sibs)
                pairs.append(
                    {
                        "query": q,
                        "code": code,
                        "negatives": sibs[:2],
                        "package": pkg["name"],
                        "registry": pkg["registry"],
                        "lang": file_label,
                        "path": shown,
                        "symbol": ch.symbol,
                        "kind": ch.kind,
                        "source": source,
                    }
                )
                n += 1
    # unique queries in a package, then the cap
    seen: set[str] = set()
    uniq = []
    for p in pairs:
        k = p["query"].lower()
        if k in seen:
            drops["inner-duplicate-query"] += 1
            continue
        seen.add(k)
        uniq.append(p)
    rng.shuffle(uniq)
    drops["inner-package-cap"] += max(0, len(uniq) - CAP_PER_PACKAGE)
    return uniq[:CAP_PER_PACKAGE], drops


def _job(args: tuple[dict, str, int]) -> tuple[str, list[dict], Counter]:
    pkg, src_root, seed = args
    root = corpus.unpack(pkg, Path(src_root))
    pairs, drops = mine(pkg, root, seed)
    return pkg["name"], pairs, drops


def main() -> int:
    ap = argparse.ArgumentParser(description="Mine (inner comment -> code) pairs.")
    ap.add_argument("--out", default="/work/train-data")
    ap.add_argument("--manifest", default=str(corpus.HERE / "manifest.json"))
    ap.add_argument("--heldout", type=float, default=0.08)
    ap.add_argument("--seed", type=int, default=14)
    ap.add_argument("--jobs", type=int, default=2)
    args = ap.parse_args()
    out = Path(args.out)
    pkgs = json.loads(Path(args.manifest).read_text())["packages"]
    excl = corpus.Exclusions.load(corpus.REPO)
    use = [
        p
        for p in pkgs
        if not excl.why(p["registry"], p["name"])
        and not corpus.is_heldout(p["name"], args.heldout, args.seed)
    ]
    t0 = time.time()
    from multiprocessing import Pool

    rows: list[dict] = []
    drops: Counter = Counter()
    jobs = [(p, str(out / "src"), args.seed) for p in use]
    with Pool(max(1, args.jobs)) as pool:
        for n, (name, pairs, d) in enumerate(pool.imap_unordered(_job, jobs), 1):
            rows.extend(pairs)
            drops.update(d)
            print(f"[{n}/{len(jobs)}] {name}: {len(pairs)} inner pairs", file=sys.stderr)
    rows.sort(key=lambda r: (r["package"], r["path"], r["symbol"], r["query"]))
    random.Random(args.seed).shuffle(rows)
    with open(out / "inner.jsonl", "w") as f:
        for r in rows:
            f.write(json.dumps(r, ensure_ascii=False) + "\n")
    stats = {
        "pairs": len(rows),
        "per_language": dict(Counter(r["lang"] for r in rows).most_common()),
        "per_source": dict(Counter(r["source"] for r in rows).most_common()),
        "drops": {k: v for k, v in drops.most_common() if k.startswith("inner")},
        "seconds": round(time.time() - t0),
    }
    (out / "inner_stats.json").write_text(json.dumps(stats, indent=1) + "\n")
    print(json.dumps(stats, indent=1), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
