"""One query end to end: analyse -> legs -> votes -> fuse -> diversify -> snippets."""

from __future__ import annotations

import contextlib
import hashlib
import re
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

import apsw
import numpy as np

from scrydb import tokens
from scrydb.config import Config
from scrydb.embed import Embedder
from scrydb.errors import ScryError
from scrydb.results import Hit, Results
from scrydb.search import rank
from scrydb.search.query import STOP_WORDS, Query, analyse, fts_match, fts_terms
from scrydb.search.snippet import make_snippet
from scrydb.store import Store
from scrydb.sync import normalise_name
from scrydb.vectors import VectorIndex

#: Query vectors kept per process (and persisted in the ``query_cache`` table).
QUERY_CACHE_SIZE = 256
#: Longest query text analysed; the rest is ignored (a pasted file is not a query).
MAX_QUERY_CHARS = 2000
#: Longest ``lang`` / ``path`` filter accepted (SQLite allows 32,766 parameters and
#: GLOB patterns of 50,000 bytes; no real filter comes near this).
MAX_FILTER_CHARS = 4096
#: Fuzzy expansion: a query word of this length or more may match a symbol within
#: edit distance 1 (2 from FUZZY_LONG chars on); at most FUZZY_MAX names are added.
FUZZY_MIN = 5
FUZZY_LONG = 9
FUZZY_MAX = 3
#: Fuzzy-match plain words of questions too (not only identifiers and keyword queries).
FUZZY_PLAIN_WORDS = False
#: Vote weight of a fuzzy (not exact) symbol match.
FUZZY_VOTE = 0.5
#: A result list is "weak" when no hit has a lexical match of any content word and the
#: best cosine is below this.
WEAK_COSINE = 0.35

MODES = ("fused", "lexical", "dense")
#: Content factors remembered per engine (a few hundred bytes each).
FACTORS_MEMO_MAX = 100_000


class SearchEngine:
    """Runs queries against one store. Thread-safe for concurrent readers."""

    def __init__(self, store: Store, config: Config, embedder: Callable[[], Embedder]) -> None:
        self.store = store
        self.config = config
        self._embedder_factory = embedder
        self._embedder: Embedder | None = None
        self.vectors = VectorIndex()
        self._qcache: OrderedDict[str, np.ndarray] = OrderedDict()
        #: rank.content_factors per (text_hash, lang, kind, start_line) and path_factors
        #: per (path, wants...): pure, and the same chunks come back query after query
        #: (bench/run.py: 6 of 15 ms of a 16k-chunk query went to them).
        self._factors: dict[tuple[Any, ...], dict[str, float]] = {}
        self._factors_stamp: tuple[Any, ...] = ()
        self._lock = threading.Lock()

    # -- public ------------------------------------------------------------------------

    def search(
        self,
        text: str,
        k: int = 10,
        lang: str | None = None,
        path: str | None = None,
        explain: bool = False,
        mode: str = "fused",
        rerank: bool = True,
    ) -> Results:
        """Ranked hits for ``text`` (see ``Index.search``)."""
        if mode not in MODES:
            raise ScryError(f"unknown search mode {mode!r} (one of {', '.join(MODES)})")
        if text is None or not str(text).strip():
            raise ScryError(
                "empty query: say what to look for, e.g. scry search 'where is the config loaded'"
            )
        text = _clean(str(text))[:MAX_QUERY_CHARS]
        k = max(1, min(int(k), 1000))
        t0 = time.perf_counter()
        q = analyse(text)
        res = Results()
        res.query, res.shape = text, q.shape
        filt = _Filter(lang, path)
        pool = rank.POOL_LOCATION if q.shape == "location" else rank.POOL
        pool = max(pool, k * 3)
        cands: dict[int, rank.Candidate] = {}

        terms = fts_terms(q)
        expansions = self._fuzzy_expand(q) if mode == "fused" else []
        if mode in ("fused", "lexical"):
            self._lexical(terms + [e for e in expansions if e not in terms], filt, pool, cands)
            res.legs.append("lexical")
        t_lex = time.perf_counter()
        if mode in ("fused", "dense"):
            if self._dense(q, filt, pool, cands, res):
                res.legs.append("dense")
        t_dense = time.perf_counter()
        if mode == "fused":
            self._symbol_votes(q, expansions, filt, cands)
        if not cands:
            res.weak = True
            res.suggestions = self.suggest(q)
            res.timings = {"total": time.perf_counter() - t0}
            return res
        self._hydrate(cands)
        if mode == "fused":
            self._path_signals(q, cands)
            if q.entry:
                self._entry_votes(filt, cands)
            dense_w, lex_w = rank.WEIGHTS[q.shape]
        else:
            dense_w, lex_w = (1.0, 0.0) if mode == "dense" else (0.0, 1.0)
        rank.fuse(cands, dense_w, lex_w)
        if mode == "fused" and rerank and self.config.rerank.provider != "none":
            from scrydb.rerank import rerank_leg  # the optional third leg (issue 7)

            if rerank_leg(self, q, cands, res):
                rank.fuse(cands, dense_w, lex_w)
        chosen = (
            rank.diversify(list(cands.values()), k) if mode == "fused" else _plain_top(cands, k)
        )
        qwords = {w.lower() for w in q.terms} | {
            p for w in q.terms for p in tokens.split_identifier(w)
        }
        qwords -= STOP_WORDS
        named = {i.split(".")[-1].split("::")[-1].strip("()") for i in q.identifiers}
        for c in chosen:
            snip = make_snippet(
                c.content,
                c.start_line,
                qwords,
                named | ({c.symbol.split(".")[-1]} if c.symbol else set()),
            )
            res.append(
                Hit(
                    path=c.path,
                    start_line=c.start_line,
                    end_line=c.end_line,
                    lang=c.lang,
                    kind=c.kind,
                    symbol=c.symbol,
                    score=round(c.score * 1000, 4),
                    snippet=snip.text,
                    anchor_line=snip.anchor_line,
                    snippet_start=snip.start_line,
                    truncated=snip.truncated,
                    chunk_id=c.chunk_id,
                    explain=c.explain() if explain else None,
                )
            )
        if mode == "fused":
            res.weak = self._is_weak(chosen, q)
            if res.weak:
                res.suggestions = self.suggest(q)
        res.timings = {
            "lexical": t_lex - t0,
            "dense": t_dense - t_lex,
            "total": time.perf_counter() - t0,
        }
        return res

    def query_vector(self, text: str, res: Results | None = None) -> np.ndarray:
        """The query's vector: process cache, then the index's cache, then the model.

        For a search (``res`` given) whose shape ``[chat] hyde`` expands, the vector is
        made from the chat model's hypothetical code (``scrydb.hyde``) and cached under a
        key that says so; a failing chat model falls back to the plain vector (noted).
        """
        emb = self.embedder()
        tag = ""
        if res is not None and self.config.chat.hyde != "off":
            from scrydb import hyde

            tag = hyde.cache_tag(self.config.chat, res.shape)
        key = hashlib.blake2b(f"{emb.id}\0{tag}{text}".encode(), digest_size=16).hexdigest()
        with self._lock:
            if key in self._qcache:
                self._qcache.move_to_end(key)
                return self._qcache[key]
        blob = self.store.scalar("SELECT vector FROM query_cache WHERE key = ?", (key,))
        if blob is not None:
            vec = np.frombuffer(blob, dtype=np.float32).copy()
        else:
            vec = hyde.hyde_vector(self, emb, text, res) if tag and res is not None else None
            if tag and vec is None:
                return self.query_vector(text)  # the chat model failed: plain query
            if vec is None:
                vec = emb.embed_query(text)
            self._persist_query_vector(key, vec)
        with self._lock:
            self._qcache[key] = vec
            while len(self._qcache) > QUERY_CACHE_SIZE:
                self._qcache.popitem(last=False)
        return vec

    def embedder(self) -> Embedder:
        """The embedder, built on first use."""
        if self._embedder is None:
            self._embedder = self._embedder_factory()
        return self._embedder

    def suggest(self, q: Query, limit: int = 5) -> list[str]:
        """Existing symbol names close to the query's words ("did you mean")."""
        out: list[str] = []
        for w in q.identifiers + [t for t in q.terms if len(t) >= 4]:
            for name in self._fuzzy_names(normalise_name(w.split(".")[-1]), max_dist=2):
                row = self.store.scalar("SELECT name FROM symbols WHERE norm = ? LIMIT 1", (name,))
                if row and row not in out:
                    out.append(row)
            if len(out) >= limit:
                break
        return out[:limit]

    # -- legs --------------------------------------------------------------------------

    def _lexical(
        self, terms: list[str], filt: _Filter, pool: int, cands: dict[int, rank.Candidate]
    ) -> None:
        match = fts_match(terms)
        if not match:
            return
        w = rank.BM25_WEIGHTS
        where, params = filt.sql()
        bm25 = f"bm25(chunks_fts, {w[0]}, {w[1]}, {w[2]}, {w[3]}) AS s FROM chunks_fts"
        if filt.active:
            sql = (
                f"SELECT c.id, {bm25} JOIN chunks c ON c.id = chunks_fts.rowid "
                f"JOIN files f ON f.id = c.file_id WHERE chunks_fts MATCH ? {where} "
                "ORDER BY s LIMIT ?"
            )
        else:  # no filter: no join per match (every FTS row is a chunk; 1.7 vs 4.5 ms)
            sql = f"SELECT rowid, {bm25} WHERE chunks_fts MATCH ? ORDER BY s LIMIT ?"
        try:
            rows = self.store.rows(sql, (match, *params, pool))
        except apsw.SQLError:
            return  # an FTS expression we failed to quote: no lexical evidence
        for r, (cid, score) in enumerate(rows, 1):
            c = cands.setdefault(cid, rank.Candidate(cid))
            c.lex_rank, c.lex_score = r, score

    def _dense(
        self, q: Query, filt: _Filter, pool: int, cands: dict[int, rank.Candidate], res: Results
    ) -> bool:
        s = self.store
        if s.vec_dim() is None:
            if s.scalar("SELECT count(*) FROM chunks"):
                res.notes.append("lexical only: no embeddings yet (indexing adds them)")
            return False
        pending = s.scalar("SELECT count(*) FROM chunks WHERE emb_id IS NULL") or 0
        if pending:
            total = s.scalar("SELECT count(*) FROM chunks") or 0
            res.notes.append(
                f"{pending} of {total} chunks wait for embeddings: they are found lexically only"
            )
        try:
            qvec = self.query_vector(q.text, res)
        except ScryError as e:
            res.notes.append(f"dense leg skipped: {e}")
            return False
        self.vectors.refresh(s)
        if qvec.shape[0] != self.vectors.dim:
            res.notes.append(
                "dense leg skipped: the model's dimension differs from the index (the next index sync re-embeds)"
            )
            return False
        allowed = None
        if filt.active:
            where, params = filt.sql()
            ids = [
                r[0]
                for r in s.rows(
                    f"SELECT DISTINCT c.emb_id FROM chunks c JOIN files f ON f.id = c.file_id WHERE c.emb_id IS NOT NULL {where}",
                    tuple(params),
                )
            ]
            allowed = self.vectors.mask(np.array(ids, dtype=np.int64))
        sc = self.config.search
        emb_ids, scores = self.vectors.search(qvec, pool, allowed, sc.exact_max, sc.coarse_pool)
        if len(emb_ids) == 0:
            return True
        rank_of = {int(e): (i + 1, float(scores[i])) for i, e in enumerate(emb_ids)}
        where, params = filt.sql()
        placeholders = ",".join("?" * len(rank_of))
        rows = s.rows(
            f"SELECT c.id, c.emb_id FROM chunks c JOIN files f ON f.id = c.file_id WHERE c.emb_id IN ({placeholders}) {where}",
            (*rank_of.keys(), *params),
        )
        for cid, eid in rows:
            r, score = rank_of[eid]
            c = cands.setdefault(cid, rank.Candidate(cid))
            c.dense_rank, c.dense_score = r, score
        return True

    # -- ranker evidence ---------------------------------------------------------------

    def _symbol_votes(
        self, q: Query, expansions: list[str], filt: _Filter, cands: dict[int, rank.Candidate]
    ) -> None:
        """Votes for chunks that define a symbol the query names."""
        wanted: dict[str, tuple[float, str | None]] = {}  # norm -> (weight, qualifier)
        for ident in q.identifiers:
            parts = [p for p in re.split(r"\.|::|->|#", ident.strip("()")) if p]
            if not parts:
                continue
            qual = normalise_name(parts[-2]) if len(parts) > 1 else None
            wanted[normalise_name(parts[-1])] = (rank.SYMBOL_VOTE, qual)
        plain = [
            t
            for t in q.terms
            if t.lower() not in STOP_WORDS and not any(t in i for i in q.identifiers)
        ]
        for n in (1, 2, 3):
            for i in range(len(plain) - n + 1):
                norm = normalise_name("_".join(plain[i : i + n]))
                if len(norm) >= 3 and norm not in wanted:
                    # -1 marks a plain word (checked for ambiguity below); a run of words
                    # ("user repository" ~ UserRepository) votes fully in a keyword query
                    # and QUESTION_SYMBOL_SCALE of that in a question.
                    w = rank.SYMBOL_VOTE * (1.0 if q.is_code_lookup else rank.QUESTION_SYMBOL_SCALE)
                    wanted[norm] = (-1.0 if n == 1 else w, None)
        for e in expansions:
            wanted.setdefault(e, (rank.SYMBOL_VOTE * FUZZY_VOTE, None))
        if not wanted:
            return
        where, params = filt.sql()
        for norm, (weight, qual) in wanted.items():
            rows = self.store.rows(
                "SELECT s.chunk_id, s.qualname, f.path FROM symbols s JOIN files f ON f.id = s.file_id "
                f"WHERE s.norm = ? {where} LIMIT 50",
                (norm, *params),
            )
            if not rows:
                continue
            if weight < 0:  # a plain word: only when it names few definitions
                if len(rows) > rank.PLAIN_WORD_MAX_DEFS or q.shape in ("question", "location"):
                    continue
                weight = rank.SYMBOL_VOTE
            for cid, qualname, path in rows:
                w = weight
                qual_ok = True
                if qual is not None:
                    quals = [normalise_name(p) for p in re.split(r"\.|::", qualname)[:-1]]
                    qual_ok = qual in quals
                    if not qual_ok:  # ``Client.send`` asked, ``Server.send`` found
                        w *= rank.WRONG_QUALIFIER
                if w <= 0:
                    continue
                c = cands.setdefault(cid, rank.Candidate(cid))
                c.votes["symbol"] = max(c.votes.get("symbol", 0.0), w)
                if q.shape == "identifier" and qual_ok:
                    c.votes["definition"] = rank.DEFINITION_VOTE
                    stem = path.rsplit("/", 1)[-1].split(".", 1)[0]
                    if normalise_name(stem) == norm:
                        c.votes["stem"] = rank.STEM_VOTE

    def _factor_memo(self) -> dict[tuple[Any, ...], dict[str, float]]:
        """The memo of rank.content_factors / path_factors, emptied when it grows past
        FACTORS_MEMO_MAX or when a ranking constant or function changes (tuning
        scripts set them in process)."""
        stamp = (
            rank.content_factors,
            rank.path_factors,
            *(v for k, v in vars(rank).items() if k.isupper() and isinstance(v, int | float)),
        )
        if stamp != self._factors_stamp or len(self._factors) > FACTORS_MEMO_MAX:
            self._factors = {}
            self._factors_stamp = stamp
        return self._factors

    def _path_signals(self, q: Query, cands: dict[int, rank.Candidate]) -> None:
        """Multiplicative priors from the path, the content shape and the kind."""
        memo = self._factor_memo()
        wants = (q.wants_tests, q.wants_examples, q.wants_docs)
        for c in cands.values():
            if not q.wants_docs:
                key = (c.text_hash, c.lang, c.kind, c.start_line)
                cf = memo.get(key)
                if cf is None:
                    cf = memo[key] = rank.content_factors(c.content, c.lang, c.kind, c.start_line)
                c.factors.update(cf)
            if (
                q.shape in rank.DECLARATION_SHAPES
                and c.kind in rank.DECLARATION_KINDS
                and rank.PENALTY_DECLARATION < 1
            ):
                c.factors["declaration"] = rank.PENALTY_DECLARATION
            pkey = (c.path, *wants)
            pf = memo.get(pkey)
            if pf is None:
                pf = memo[pkey] = rank.path_factors(c.path, *wants)
            c.factors.update(pf)
        if self.config.search.recency:
            newest = self.store.scalar("SELECT max(mtime_ns) FROM files") or 0
            for c in cands.values():
                f = rank.recency_factor(c.mtime_ns, newest)
                if f > 1.0:
                    c.factors["recent"] = f

    def _entry_votes(self, filt: _Filter, cands: dict[int, rank.Candidate]) -> None:
        """For "where does X start": chunks shaped like entry points get a vote."""
        where, params = filt.sql()
        rows = self.store.rows(
            f"SELECT c.id FROM chunks c JOIN files f ON f.id = c.file_id WHERE c.entry = 1 {where} LIMIT 500",
            tuple(params),
        )
        extra: dict[int, rank.Candidate] = {}
        for (cid,) in rows:
            c = cands.get(cid)
            if c is None:
                if not rank.ENTRY_INJECT:
                    continue
                c = extra[cid] = rank.Candidate(cid)
            c.votes["entry"] = rank.ENTRY_VOTE
        if extra:
            self._hydrate(extra)
            for cid, c in extra.items():
                c.factors.update(rank.path_factors(c.path, False, False, False))
                cands[cid] = c

    def _fuzzy_expand(self, q: Query) -> list[str]:
        """Normalised symbol names within a small edit distance of query words."""
        out: list[str] = []
        words = list(q.identifiers)
        if FUZZY_PLAIN_WORDS or q.is_code_lookup:
            # In a question, "header" is English, not a misspelt ``headers``.
            words += [t for t in q.terms if t.lower() not in STOP_WORDS and t not in words]
        for w in words:
            norm = normalise_name(w.split(".")[-1].strip("()"))
            if len(norm) < FUZZY_MIN:
                continue
            if self.store.scalar("SELECT 1 FROM symbol_names WHERE name = ?", (norm,)):
                continue  # exact name exists: no need to guess
            dist = 2 if len(norm) >= FUZZY_LONG else 1
            for name in self._fuzzy_names(norm, max_dist=dist):
                if name not in out:
                    out.append(name)
            if len(out) >= FUZZY_MAX:
                break
        return out[:FUZZY_MAX]

    def _fuzzy_names(self, norm: str, max_dist: int) -> list[str]:
        if len(norm) < 3:
            return []
        grams = {norm[i : i + 3] for i in range(len(norm) - 2)}
        match = " OR ".join('"' + g.replace('"', '""') + '"' for g in grams)
        try:
            rows = self.store.rows(
                "SELECT name FROM symbol_trigrams WHERE symbol_trigrams MATCH ? ORDER BY rank LIMIT 200",
                (match,),
            )
        except apsw.SQLError:
            return []
        scored = []
        for (name,) in rows:
            if abs(len(name) - len(norm)) > max_dist or name == norm:
                continue
            d = _edit_distance(norm, name, max_dist)
            if d <= max_dist:
                scored.append((d, name))
        scored.sort()
        return [n for _, n in scored[:5]]

    def _hydrate(self, cands: dict[int, rank.Candidate]) -> None:
        ids = list(cands)
        for i in range(0, len(ids), 500):
            part = ids[i : i + 500]
            rows = self.store.rows(
                "SELECT c.id, f.path, f.lang, c.start_line, c.end_line, c.kind, c.symbol, c.content, "
                "c.text_hash, f.mtime_ns "
                f"FROM chunks c JOIN files f ON f.id = c.file_id WHERE c.id IN ({','.join('?' * len(part))})",
                tuple(part),
            )
            for cid, path, lang, a, b, kind, sym, content, h, mtime_ns in rows:
                c = cands[cid]
                c.path, c.lang, c.start_line, c.end_line = path, lang, a, b
                c.kind, c.symbol, c.content, c.text_hash = kind, sym, content, h
                c.mtime_ns = mtime_ns
        for cid in [cid for cid, c in cands.items() if not c.path]:
            del cands[cid]  # deleted by a concurrent sync between the legs and now

    def _is_weak(self, chosen: list[rank.Candidate], q: Query) -> bool:
        if not chosen:
            return True
        if any(c.votes.get("symbol") for c in chosen):
            return False
        best_cos = max((c.dense_score or 0.0) for c in chosen)
        lexical = any(c.lex_rank is not None for c in chosen)
        return not lexical and best_cos < WEAK_COSINE

    def _persist_query_vector(self, key: str, vec: np.ndarray) -> None:
        """Best effort: never wait for the writer, never fail a search over it."""
        if self.store.readonly:
            return
        conn = self.store.conn
        conn.set_busy_timeout(0)
        try:
            with self.store.transaction():
                conn.execute(
                    "INSERT OR REPLACE INTO query_cache(key, vector, used_at) VALUES (?, ?, ?)",
                    (key, np.ascontiguousarray(vec, dtype=np.float32).tobytes(), time.time()),
                )
                conn.execute(
                    "DELETE FROM query_cache WHERE key IN (SELECT key FROM query_cache ORDER BY used_at DESC LIMIT -1 OFFSET ?)",
                    (QUERY_CACHE_SIZE,),
                )
        except apsw.Error:
            pass
        finally:
            from scrydb.store import BUSY_TIMEOUT_MS

            with contextlib.suppress(apsw.Error):
                conn.set_busy_timeout(BUSY_TIMEOUT_MS)


class _Filter:
    """Hard filters (language, path prefix or glob) as an SQL fragment over ``f``."""

    def __init__(self, lang: str | None, path: str | None) -> None:
        for name, value in (("lang", lang), ("path", path)):
            if value and (len(value) > MAX_FILTER_CHARS or not _storable(value)):
                raise ScryError(f"bad {name} filter {value[:40]!r}…: too long or not text")
        langs = [x.strip().lower() for x in lang.split(",") if x.strip()] if lang else []
        self.langs = list(dict.fromkeys(langs))
        p = (path or "").strip()
        if p.startswith("./"):
            p = p[2:]
        self.path = p.strip("/") if p not in ("", ".", "./") else ""
        self.active = bool(self.langs or self.path)

    def sql(self) -> tuple[str, list[Any]]:
        parts: list[str] = []
        params: list[Any] = []
        if self.langs:
            parts.append(f"f.lang IN ({','.join('?' * len(self.langs))})")
            params += self.langs
        if self.path:
            if any(ch in self.path for ch in "*?["):
                parts.append("(f.path GLOB ? OR f.path GLOB ?)")
                params += [self.path, self.path + "/*"]
            else:
                prefix = self.path + "/"
                parts.append("(f.path = ? OR substr(f.path, 1, ?) = ?)")
                params += [self.path, len(prefix), prefix]
        return ("AND " + " AND ".join(parts)) if parts else "", params


def _storable(text: str) -> bool:
    """Valid Unicode without NULs (an undecodable argument or a JSON ``\\ud800`` is not)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return "\x00" not in text


def _plain_top(cands: dict[int, rank.Candidate], k: int) -> list[rank.Candidate]:
    return sorted(cands.values(), key=lambda c: (-c.score, c.path, c.start_line))[:k]


def _clean(text: str) -> str:
    """Control characters out, whitespace collapsed."""
    return " ".join("".join(ch if ch.isprintable() or ch in "\t\n" else " " for ch in text).split())


def _edit_distance(a: str, b: str, limit: int) -> int:
    """Levenshtein distance, giving up (returning limit + 1) once it exceeds ``limit``."""
    if a == b:
        return 0
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        cur = [i] + [0] * len(b)
        best = i
        for j, cb in enumerate(b, 1):
            cur[j] = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ca != cb))
            best = min(best, cur[j])
        if best > limit:
            return limit + 1
        prev = cur
    return prev[-1]
