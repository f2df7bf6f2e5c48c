"""training/inner.py: (inner comment -> code) pairs mined with the real chunker."""

from __future__ import annotations

from pathlib import Path

from training import inner

SOURCE = '''\
"""Demo module."""


def pick_protocol(offered, supported):
    """Choose the protocol for a handshake."""
    wanted = [p.strip() for p in offered.split(",")]
    # Take the first protocol the client offered that the server also speaks.
    for proto in wanted:
        if proto in supported:
            return proto
    # x = fallback(offered)
    # noqa: this line is a lint pragma, not a description of code
    return None


class Store:
    """A small store."""

    # Remember every value under its key so later lookups are cheap and fast.
    def put(self, key, value):
        self.data[key] = value
        return value

    def drop_expired(self, now):
        """Remove stale entries."""
        for key in list(self.data):
            # Entries older than the time to live are removed from the table here.
            if self.data[key].born + self.ttl < now:
                del self.data[key]
'''


def _package(tmp_path: Path) -> tuple[dict, Path]:
    root = tmp_path / "demo"
    (root / "demo-1.0" / "demo").mkdir(parents=True)
    (root / "demo-1.0" / "demo" / "core.py").write_text(SOURCE)
    return {"registry": "pypi", "name": "demo", "sha256": "0" * 64}, root


def test_inner_comments_become_queries_without_their_comment(tmp_path):
    pkg, root = _package(tmp_path)
    pairs, drops = inner.mine(pkg, root, seed=14)
    by_query = {p["query"]: p for p in pairs}
    take = "Take the first protocol the client offered that the server also speaks."
    assert take in by_query
    pair = by_query[take]
    assert pair["symbol"] == "pick_protocol"
    assert pair["code"].startswith("demo > demo/core.py > pick_protocol\n")
    assert "if proto in supported" in pair["code"]
    assert "Take the first protocol" not in pair["code"]  # the answer is not in the text
    assert pair["source"] == "inner"
    ttl = "Entries older than the time to live are removed from the table here."
    assert ttl in by_query
    # a hard negative from the same file, never the pair's own code
    assert by_query[ttl]["negatives"] and by_query[ttl]["code"] not in by_query[ttl]["negatives"]
    # commented-out code and lint pragmas are not queries
    assert not any("fallback" in q or "noqa" in q for q in by_query)
    assert drops["inner-commented-code"] + drops["inner-pragma"] >= 1
    # a comment right above a member definition is that member's doc, not an inner comment
    assert not any(q.startswith("Remember every value") for q in by_query)


def test_comment_query_filters():
    assert inner.comment_query(["# see https://example.com/spec.html for details"], "f")[0] is None
    assert inner.comment_query(["// TODO: make this faster one day soon"], "f")[0] is None
    assert inner.comment_query(["// i++"], "f")[0] is None
    q, why = inner.comment_query(
        ["// Skip the byte order mark", "// when the stream starts with one."], "read"
    )
    assert (q, why) == ("Skip the byte order mark when the stream starts with one.", "")
