"""store/ is the only package that speaks SQL: fail on a raw ``execute(``, ``executemany(``,
``rows(`` or ``scalar(`` call outside ``scrydb/store/`` (issue 31), and on SQL text there:
a string that holds a statement, or a fragment a store operation would splice into one (a
``?`` placeholder or an ``alias.column`` beside an SQL keyword or function, such as
``"f.lang IN ("`` or ``"instr(c.content, ?) > 0"``; issue 43). Docstrings and other
bare string statements are prose, not SQL.

    python .ci/check_sql.py [ROOT]     # exit 1 and one line per call or text found

Other modules call the store's named operations (``store.readiness()``, ...). A module
that still holds SQL is named in PENDING with its reason; the check fails when a module
not named there gains a call or a text, and when a named module no longer needs its entry
(so the list only shrinks).
"""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

#: The calls that run SQL on an apsw connection or through Store's helpers.
SQL_CALLS = frozenset({"execute", "executemany", "rows", "scalar"})

#: A string that is a statement.
SQL_STATEMENT = re.compile(
    r"\b(SELECT|INSERT( OR \w+)? INTO|DELETE FROM|UPDATE \w+ SET"
    r"|CREATE (TABLE|INDEX|VIRTUAL TABLE|TRIGGER)|DROP (TABLE|INDEX)|PRAGMA)\b"
)
#: A fragment needs both an operand (a placeholder or ``alias.column``)...
SQL_OPERAND = re.compile(r"\?|\b[a-z]{1,2}\.[a-z_]{2,}\b")
#: ...and an SQL keyword (upper case, as the store writes them) or function.
SQL_KEYWORD = re.compile(
    r"\b(WHERE|AND|OR|IN|NOT|JOIN|GLOB|LIKE|MATCH|ORDER BY|GROUP BY|LIMIT|IS NULL)\b"
    r"|\b(instr|substr|lower|upper|length|coalesce|scry_lower|bm25)\("
)

#: Modules outside store/ that still run SQL, each with its reason. Only shrinks.
PENDING: dict[str, str] = {}


def _calls(tree: ast.AST) -> list[ast.Call]:
    return [
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in SQL_CALLS
    ]


def sql_calls(path: Path) -> list[int]:
    """Line numbers of SQL calls in one Python file."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    return sorted(node.lineno for node in _calls(tree))


def is_sql_text(text: str) -> bool:
    """Whether a string is SQL: a statement, or a fragment of one."""
    if SQL_STATEMENT.search(text):
        return True
    return bool(SQL_OPERAND.search(text) and SQL_KEYWORD.search(text))


def sql_texts(path: Path) -> list[int]:
    """Line numbers of SQL text in one Python file: string constants, the literal parts of
    f-strings included, except docstrings and other bare string statements, and the
    arguments of an SQL call (:func:`sql_calls` reports the call)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    skip = {id(node.value) for node in ast.walk(tree) if isinstance(node, ast.Expr)}
    skip |= {id(node) for call in _calls(tree) for node in ast.walk(call)}
    return sorted(
        node.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and id(node) not in skip
        and is_sql_text(node.value)
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
        texts = sql_texts(path)
        if (lines or texts) and rel in pending:
            seen.add(rel)
            continue
        problems += [f"{rel}:{n}: SQL outside scrydb/store/ (add a store operation)" for n in lines]
        problems += [
            f"{rel}:{n}: SQL text outside scrydb/store/ (build it in a store operation)"
            for n in texts
        ]
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
