"""Entry-point shapes, judged at index time: a chunk that starts a program (``main``,
``if __name__ == "__main__"``, a console-script declaration) is marked in the index,
and "where does X start" questions prefer it."""

from __future__ import annotations

import re

#: Entry-point shapes: ``if __name__ == "__main__"``, ``func main(``, ``fn main(``,
#: ``public static void main``, console-script / bin declarations.
ENTRY_SHAPES = re.compile(
    r"if\s+__name__\s*==\s*['\"]__main__['\"]|^\s*func\s+main\s*\(|^\s*(pub\s+)?(async\s+)?fn\s+main\s*\("
    r"|static\s+void\s+main\s*\(|^\s*int\s+main\s*\(|\[project\.scripts\]|\[tool\.poetry\.scripts\]"
    r"|console_scripts|\"bin\"\s*:|\[\[bin\]\]|^\s*def\s+main\s*\(|^\s*(export\s+)?(async\s+)?function\s+main\s*\("
    r"|require\.main\s*===?\s*module|\bapp\.listen\s*\(|\bcli\s*\(\s*\)\s*$",
    re.M,
)
