"""store/ is the only package that speaks SQL: fail on a raw ``execute(``, ``executemany(``,
``rows(`` or ``scalar(`` call outside ``scrydb/store/`` (issue 31).

    python .ci/check_sql.py [ROOT]     # exit 1 and one line per call found

Other modules call the store's named operations (``store.readiness()``, ...). A module
that still holds SQL is named in PENDING with its reason; the check fails when a module
not named there gains a call, and when a named module no longer needs its entry (so the
list only shrinks).
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

#: The calls that run SQL on an apsw connection or through Store's helpers.
SQL_CALLS = frozenset({"execute", "executemany", "rows", "scalar"})

#: Modules outside store/ that still run SQL, each with its reason. Only shrinks.
PENDING: dict[str, str] = {}


def sql_calls(path: Path) -> list[int]:
    """Line numbers of SQL calls in one Python file."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    return sorted(
        node.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in SQL_CALLS
    )


def check(root: Path, pending: dict[str, str] | None = None) -> list[str]:
    """Problems found under ``root`` (a checkout): one line each."""
    pending = PENDING if pending is None else pending
    pkg = root / "scrydb"
    problems = []
    seen: set[str] = set()
    for path in sorted(pkg.rglob("*.py")):
        rel = path.relative_to(root).as_posix()
        if rel.startswith("scrydb/store/"):
            continue
        lines = sql_calls(path)
        if lines and rel in pending:
            seen.add(rel)
            continue
        problems += [f"{rel}:{n}: SQL outside scrydb/store/ (add a store operation)" for n in lines]
    problems += [
        f"{rel}: in PENDING but runs no SQL now: remove it" for rel in sorted(set(pending) - seen)
    ]
    return problems


def main(argv: list[str]) -> int:
    root = Path(argv[1]) if len(argv) > 1 else Path(__file__).resolve().parent.parent
    problems = check(root)
    for p in problems:
        print(p)
    if problems:
        print(f"check_sql: {len(problems)} problem(s)", file=sys.stderr)
        return 1
    print(
        "check_sql: no SQL outside scrydb/store/"
        + (f" (pending: {len(PENDING)} modules)" if PENDING else "")
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
