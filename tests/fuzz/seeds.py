"""Write the seed corpus of every harness (``corpus/<name>/seed-*``) from the repository's
own test material: the chunker's per-language cases (tests/test_chunk.py), the sample
repository (tests/sample_repo.py), the bug-report samples (tests/report_samples.py), the
README's configuration and test queries. Nothing comes from the evaluation corpora.

    python tests/fuzz/seeds.py        # rewrites the seed-* files; crash-* files stay

The files are checked in; rerun this after changing the material (or a harness's input
format) and commit what changed.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
if sys.path and Path(sys.path[0] or ".").resolve() == HERE:
    sys.path.pop(0)  # (as a script: this folder's mcp.py would shadow the mcp package)
sys.path.insert(0, str(HERE.parent))

import report_samples  # noqa: E402
import test_report_search  # noqa: E402
from sample_repo import FILES  # noqa: E402
from test_chunk import CASES  # noqa: E402

from fuzz import chunk  # noqa: E402
from scrydb.langs import detect  # noqa: E402

QUERIES = (
    "where is the retry backoff computed",
    "UserRepository",
    "getUserById",
    "get_user_by_id",
    "Client.send()",
    "auth::verify",
    "retry backoff",
    "how does the cache evict entries?",
    "where does the CLI start",
    "tests for compute_backoff",
    "`RetryPolicy.should_retry` returns True after MAX_ATTEMPTS",
    "über ÜBER K 用户 % _ * ' -- def",
)
CONFIGS = (
    '[search]\nlimit = 5\n[index]\nexclude = ["docs/"]\n[embed]\ntimeout = 5\n',
    '[embed]\nprovider = "openai"\nurl = "http://127.0.0.1:8080/v1"\nmodel = "nomic-embed-code"\n'
    'api_key_env = "EMBED_API_KEY"\n',
    '[rerank]\nprovider = "http"\nurl = "http://127.0.0.1:9/v1"\ntop_n = 20\n',
    '[chat]\nhyde = "on"\nurl = "http://127.0.0.1:9/v1"\n[search]\nfusion = "hand"\n',
    '[index]\nexclude = ["build/", "*.min.js"]\ninclude = ["build/keep.py"]\nnested_repos = true\n',
)
FILTERS = (
    "py\nsrc/*.py\nsrc/x.py\n*.log\nbuild/\n!build/keep.py\n---\nsub/\n",
    "ts,tsx\nsrc\nsrc/y.ts\n*.txt\nbuild_out/\n---\n!keep.txt\nsecret_*.py\n",
    "c++\n[!a]*.py\n[b].py\n*.gen.py\n---\ndocs/\n!keep.gen.py\n",
    "\n[^a]*\n^x\nbuild/\nnotes/*.md\n!notes/keep.md\n---\ngen_*.py\n!gen_keep.py\n",
    "markdown\ndocs/**/*.md\ndocs/a b/#c.md\n\\#c.md\n[!.]*/\n",
    "rust,go\nünï\nünï/x.rs\n**/cödé.rs\n/a.py\n",
)
MCP = (
    {"tool": "search", "args": {"query": "retry backoff", "limit": 3}},
    {"tool": "search", "args": {"query": "UserRepository", "lang": "py", "path": "app/"}},
    {"tool": "search", "args": {"query": "verifyToken", "path": "web/*.ts"}},
    {"tool": "read", "args": {"file": "app/retry.py:1-3"}},
    {"tool": "read", "args": {"file": "app/users.py", "start_line": 2, "end_line": 9}},
    {"tool": "related", "args": {"file": "app/retry.py", "line": 10, "limit": 3}},
    {"tool": "locate", "args": {"text": "def ", "limit": 5, "ignore_case": True}},
    {"tool": "status", "args": {}},
    {"tool": "callers", "args": {"target": "compute_backoff", "depth": 2}},
    {"tool": "callees", "args": {"target": "app/cli.py:main"}},
    {"tool": "refs", "args": {"target": "RetryPolicy"}},
    {"tool": "map", "args": {"path": "app/", "symbols": ["compute_backoff"], "budget": 300}},
    {"tool": "read", "args": {"file": "app/retry.py:99999999999999999999999-3"}},
    {"tool": "related", "args": {"file": "app/retry.py", "line": 2**70}},
    {"tool": "locate", "args": {"text": "\ud800", "limit": 10**9}},
    {"tool": "search", "args": {"query": "a\nb", "path": "../x", "lang": ","}},
    {"tool": "callers", "args": {"target": "app/retry.py:9999999999", "depth": 10**9}},
    # ``repos`` against the harness's registry (shop, other, gone, junk-*.db):
    {"tool": "search", "args": {"query": "retry backoff", "repos": ["shop", "other"]}},
    {"tool": "search", "args": {"query": "tool", "repos": ["..", "gone", "../other/lib", "/"]}},
    {"tool": "search", "args": {"query": "x", "repos": ["../cache/junk-000000000000.db", "~"]}},
)


def _seed(name: str, files: dict[str, bytes]) -> int:
    d = HERE / "corpus" / name
    d.mkdir(parents=True, exist_ok=True)
    for old in d.glob("seed-*"):
        old.unlink()
    for fname, data in files.items():
        (d / f"seed-{fname}").write_bytes(data)
    return len(files)


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "-", text).strip("-").lower()[:40]


def main() -> None:
    """Write every harness's seeds."""
    langs = chunk.LANGS
    chunk_seeds: dict[str, bytes] = {}
    for i, case in enumerate(CASES):
        head = bytes([langs.index(case.lang), i % 2])
        chunk_seeds[f"{case.lang}-{i}"] = head + case.source.encode()
    for path, text in FILES.items():
        lang = detect(path)
        head = bytes([langs.index(lang) if lang in langs else langs.index(None), 0])
        chunk_seeds[f"sample-{_slug(path)}"] = head + text.encode()
    tokens = {f"sample-{_slug(p)}": t.encode() for p, t in FILES.items()}
    reports = {
        k.lower(): v.encode()
        for k, v in vars(report_samples).items()
        if k.isupper() and isinstance(v, str)
    }
    reports["payment-report"] = test_report_search.REPORT.encode()
    queries = {f"query-{_slug(q)}": q.encode() for q in QUERIES}
    readme = (HERE.parents[1] / "README.md").read_text(encoding="utf-8")
    tomls = re.findall(r"```toml\n(.*?)```", readme, re.S)
    configs = {f"readme-{i}": t.encode() for i, t in enumerate(tomls)}
    configs |= {f"config-{i}": t.encode() for i, t in enumerate(CONFIGS)}
    counts = {
        "chunk": _seed("chunk", chunk_seeds),
        "tokens": _seed("tokens", tokens),
        "query": _seed("query", reports | queries),
        "config": _seed("config", configs),
        "filters": _seed("filters", {f"{i}": f.encode() for i, f in enumerate(FILTERS)}),
        "mcp": _seed(
            "mcp", {f"{i}-{m['tool']}": json.dumps(m).encode() for i, m in enumerate(MCP)}
        ),
    }
    print(", ".join(f"{k}: {v}" for k, v in counts.items()))


if __name__ == "__main__":
    main()
