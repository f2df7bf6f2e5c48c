"""The corpora the benchmark runs on.

* Real: the pinned third-party trees of ``evals/`` (``evals/fetch.sh``), and the golden
  sets' questions as queries.
* Scale (from real code): ``copies`` of the real trees, each copy's identifiers renamed
  (``snake_case`` and ``camelCase`` names get a per-copy suffix), so every chunk text is
  distinct (one vector each) while chunk sizes, languages and the words of the lexical
  index stay those of real code. 5 copies are ~16k chunks, 28 copies ~100k.
* Scale (generated): many small Python modules for the no-op sync of 10,000 files.
"""

from __future__ import annotations

import hashlib
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

from common import REPO

sys.path.insert(0, str(REPO / "tests"))
from synth_repo import varied_function_text

EVALS = REPO / "evals"
CORPORA = EVALS / "corpora"
#: Third-party corpora (in the order they are used), then scrydb's own pinned source.
REAL = ("trpc-server", "httpx", "minijinja", "self")
#: Identifiers that can be renamed without breaking the syntax: they have an underscore
#: or a lower-to-upper case step, which no keyword of the corpora's languages has.
_IDENT = re.compile(r"\b(?=[A-Za-z_]*(?:_|[a-z][A-Z]))[A-Za-z_][A-Za-z0-9_]{3,}\b")


def ensure_real(names: tuple[str, ...]) -> list[Path]:
    """The corpus directories, fetched with ``evals/fetch.sh`` when missing."""
    missing = [n for n in names if not (CORPORA / n).is_dir()]
    if missing:
        subprocess.run(["bash", str(EVALS / "fetch.sh"), *missing], check=True)
    return [CORPORA / n for n in names]


def queries(names: tuple[str, ...]) -> list[str]:
    """The golden sets' questions for these corpora (a realistic mix of shapes)."""
    out: list[str] = []
    for n in names:
        p = EVALS / f"{n}.toml"
        if p.is_file():
            out += [c["query"] for c in tomllib.loads(p.read_text()).get("case", [])]
    return out


def _rename(text: str, copy: int) -> str:
    tag = f"c{copy}"

    def sub(m: re.Match[str]) -> str:
        w = m.group(0)
        h = hashlib.blake2b(f"{w}{copy}".encode(), digest_size=1).digest()[0]
        return f"{w}_{tag}" if h < 160 else w  # ~60% of names: texts differ, words repeat

    return _IDENT.sub(sub, text)


def real_tree(dest: Path, names: tuple[str, ...]) -> Path:
    """One tree holding the named real corpora side by side (``dest/NAME/...``)."""
    if dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    for src in ensure_real(names):
        shutil.copytree(src, dest / src.name)
    (dest / ".git").mkdir()  # a repository root: scry's root finding stops here
    return dest


def copies_tree(dest: Path, names: tuple[str, ...], copies: int) -> Path:
    """``copies`` renamed copies of the real corpora (see the module docstring)."""
    if dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    sources = ensure_real(names)
    for k in range(copies):
        for src in sources:
            for p in src.rglob("*"):
                if not p.is_file() or p.is_symlink():
                    continue
                rel = p.relative_to(src)
                out = dest / f"c{k:03d}" / src.name / rel
                out.parent.mkdir(parents=True, exist_ok=True)
                data = p.read_bytes()
                try:
                    text = data.decode("utf-8")
                except UnicodeDecodeError:
                    out.write_bytes(data)
                    continue
                out.write_text(text if k == 0 else _rename(text, k), encoding="utf-8")
    (dest / ".git").mkdir()
    return dest


def module_path(i: int) -> str:
    """Path of generated module ``i``: 5 packages x 20 subpackages, ~100 files each."""
    return f"pkg{i % 5}/sub{i % 20:02d}/mod_{i}.py"


def module_text(i: int, funcs: int = 2) -> str:
    parts = [f'"""Generated module {i}."""\n'] + [
        varied_function_text(i * funcs + j) for j in range(funcs)
    ]
    return "\n\n".join(parts)


def many_files_tree(dest: Path, n_files: int, funcs: int = 2) -> Path:
    """``n_files`` small generated Python modules (plus a .gitignore and a .git marker)."""
    if dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    (dest / ".gitignore").write_text("*.log\nout/\n__pycache__/\n", encoding="utf-8")
    (dest / ".git").mkdir()
    for i in range(n_files):
        p = dest / module_path(i)
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(module_text(i, funcs), encoding="utf-8")
    return dest
