"""Query analysis: what shape a query has and which terms the lexical leg looks for.

Shapes (they route the fusion weights in ``rank.py``):

* ``identifier``: one code-like token (``UserRepository``, ``auth::verify``,
  ``_internal``, ``Client.send``, ``parse_ast()``);
* ``keyword``: a few plain words with no question form (``retry backoff``);
* ``location``: "where is / where does / entry point / bootstrap / configured ...";
* ``question``: any other natural-language question or sentence.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from scrydb import tokens
from scrydb.errors import ScryError
from scrydb.search.report import Report, analyse_report

#: Words dropped from the lexical query (they match everything and carry no intent).
STOP_WORDS = frozenset(
    """
    a an the and or but of to in on at by for with from into onto as is are was were be been
    being do does did done doing have has had having it its this that these those there here
    what which who whom whose when where why how i me my we our you your he she they them their
    can could should would will shall may might must not no yes so if then than too very just
    about any all some each every get gets got find show tell give me please code function
    method class file files implementation implemented defined define handled handle happen
    happens work works used use uses using thing things way does where s t
    """.split()
)

#: Location questions: ask *where* something lives rather than how it works.
_LOCATION = re.compile(
    r"\b(where\b|entry ?points?\b|entrypoint|bootstrap|start(s|ed|up)?\b|main\b|"
    r"configured|registered|initiali[sz]ed|defined|declared|located|set up|wired|instantiated|"
    r"which (file|module|function|class))",
    re.I,
)
#: Words that ask for an entry point specifically.
_ENTRY = re.compile(
    r"\b(entry ?points?|entrypoint|start(s|up)?|bootstrap|main|launch(es)?|begins?)\b", re.I
)
_QUESTION_START = re.compile(
    r"^(what|where|how|why|when|which|who|does|do|is|are|can|could|should|would|will|"
    r"find|show|list|explain|locate)\b",
    re.I,
)
#: A question's opening words, which the dense leg leaves out (see :func:`dense_text`):
#: a question word with its auxiliary verb and the asker ("how does the", "where is",
#: "how do I", "where can we"), a contraction ("where's the"), or "what" / "which" alone
#: ("which flag names ..."). "how long", "how many" and "when the" (a condition, not a
#: question) stay.
_QUESTION_LEAD = re.compile(
    r"^(?:(?:how|where|what|which|why|when|who)\s+"
    r"(?:does|do|did|is|are|was|were|can|could|should|would|will|gets?)\s+"
    r"(?:(?:i|we|you)\s+)?"
    r"|(?:how|where|what|who)['\u2019]s\s+"
    r"|(?:what|which)\s+)"
    r"(?:(?:the|a|an)\s+)?",
    re.I,
)
#: A single code-like token: dotted / ``::`` / ``->`` paths, call parens allowed.
_IDENT_TOKEN = re.compile(r"^[A-Za-z_$][\w$]*((\.|::|->|#)[A-Za-z_$][\w$]*)*(\(\))?$")
#: Words that ask for tests or examples (path penalties are lifted for them).
_WANTS_TESTS = re.compile(r"\b(tests?|spec|specs|testing|unittest|pytest|fixtures?|mocks?)\b", re.I)
_WANTS_EXAMPLES = re.compile(r"\b(examples?|samples?|demo|tutorial)\b", re.I)
_WANTS_DOCS = re.compile(r"\b(docs?|documentation|readme|changelog|guide)\b", re.I)


@dataclass
class Query:
    """An analysed query."""

    text: str
    shape: str
    words: list[str]  #: identifier-ish runs in order, as typed
    terms: list[str]  #: content words/identifiers for the lexical leg (stop words dropped)
    identifiers: list[str] = field(default_factory=list)  #: code-like tokens (mixed case, _ . ::)
    entry: bool = False  #: asks for an entry point ("where does the CLI start")
    wants_tests: bool = False
    wants_examples: bool = False
    wants_docs: bool = False
    #: phrased as a question ("how does ...", "...?"), not a statement of what the code
    #: does ("merge adjacent text nodes")
    interrogative: bool = False
    #: FTS tokens for the lexical leg (:func:`fts_terms`), set by :func:`prepare`
    lexical_terms: list[str] = field(default_factory=list)
    #: lower-case query words and their identifier parts (snippets centre on them)
    hit_words: frozenset[str] = frozenset()
    #: the bare names the query's identifiers end in (``send`` of ``Client.send()``)
    named: frozenset[str] = frozenset()
    #: what the search should say about the text itself (it was cut, it is a report)
    notes: list[str] = field(default_factory=list)
    #: a long text read into its parts (search/report.py): the legs and votes read those
    report: Report | None = None
    #: what the dense leg embeds (several segments of a report; their vectors averaged)
    dense_texts: list[str] = field(default_factory=list)

    @property
    def is_code_lookup(self) -> bool:
        """Identifier or keyword shape: lexical evidence dominates."""
        return self.shape in ("identifier", "keyword")


#: Every shape :func:`analyse` gives a query; rankers keep weights per shape.
QUERY_SHAPES = ("identifier", "keyword", "question", "location")

#: Longest query text analysed; the rest is ignored (a pasted file is not a query).
MAX_QUERY_CHARS = 2000


def clean_query(text: object) -> str:
    """A search's text as searched: control characters out, whitespace collapsed, at most
    :data:`MAX_QUERY_CHARS`. An empty or all-whitespace one is a
    :class:`~scrydb.errors.ScryError`, the same for the CLI, the API and MCP (the one place
    that says so); invisible characters alone search for nothing."""
    if text is None or not str(text).strip():
        raise ScryError(
            "empty query: say what to look for, e.g. scry search 'where is the config loaded'"
        )
    kept = "".join(ch if ch.isprintable() or ch in "\t\n" else " " for ch in str(text))
    return " ".join(kept.split())[:MAX_QUERY_CHARS]


def cut_note(text: object) -> str | None:
    """The note a search carries when :func:`clean_query` cuts its text (None when the
    whole text is searched)."""
    n = len(" ".join(str(text).split())) if text is not None else 0
    if n <= MAX_QUERY_CHARS:
        return None
    return (
        f"the query was cut to its first {MAX_QUERY_CHARS:,} of {n:,} characters: "
        "the rest was not searched"
    )


def is_identifier_like(tok: str) -> bool:
    """A token that can only be code: inner capitals, ``_``, ``.``, ``::``, digits+letters."""
    if not tok:
        return False
    if any(sep in tok for sep in ("_", "::", "->", "$")):
        return True
    if "." in tok and not tok.endswith("."):
        return True
    core = tok.strip("()")
    return bool(re.search(r"[a-z][A-Z]|[A-Z]{2,}[a-z]|^[A-Z][a-z]+[A-Z]", core))


def analyse(text: str) -> Query:
    """Classify ``text`` and pick its lexical terms."""
    q = " ".join(text.split())
    raw_tokens = q.split(" ") if q else []
    words = [w for w in re.findall(r"[\w$]+", q)]
    identifiers = [t.strip("`'\"?,;") for t in raw_tokens if is_identifier_like(t.strip("`'\"?,;"))]
    terms = [w for w in words if w.lower() not in STOP_WORDS or is_identifier_like(w)]
    if not terms:
        terms = words[:]
    if len(raw_tokens) == 1 and _IDENT_TOKEN.match(raw_tokens[0].strip("`'\"")):
        # One code-like token, or one capitalised word (a class name: ``Environment``).
        # A lone lower-case word (``run``, ``cache``) is a keyword: it may name many things.
        tok = raw_tokens[0].strip("`'\"")
        shape = "identifier" if (is_identifier_like(tok) or tok[:1].isupper()) else "keyword"
        if shape == "identifier" and tok not in identifiers:
            identifiers.append(tok)
    elif _LOCATION.search(q) and (len(words) >= 3 or q.lower().startswith("where")):
        shape = "location"
    elif _QUESTION_START.match(q) or q.endswith("?") or len(words) >= 4:
        shape = "question"
    else:
        shape = "keyword"
    return Query(
        text=q,
        shape=shape,
        words=words,
        terms=terms,
        identifiers=identifiers,
        entry=shape == "location" and bool(_ENTRY.search(q)),
        wants_tests=bool(_WANTS_TESTS.search(q)),
        wants_examples=bool(_WANTS_EXAMPLES.search(q)),
        wants_docs=bool(_WANTS_DOCS.search(q)),
        interrogative=bool(_QUESTION_START.match(q)) or q.endswith("?"),
    )


def prepare(text: object) -> Query:
    """A search's text, analysed once into the one value every later stage reads: the
    text cleaned (:func:`clean_query`, which may cut it: then a note says so), its shape
    and terms (:func:`analyse`), the lexical leg's tokens, the words a snippet centres on
    and the names the query gives."""
    cut = cut_note(text)
    q = analyse(clean_query(text))
    rep = analyse_report(str(text))
    if rep is not None:
        _as_report(q, rep)
    elif cut:
        q.notes.append(cut)
    q.dense_texts = q.dense_texts or [q.text]
    q.lexical_terms = fts_terms(q)
    words = {w.lower() for w in q.terms} | {p for w in q.terms for p in tokens.split_identifier(w)}
    q.hit_words = frozenset(words - STOP_WORDS)
    q.named = frozenset(i.split(".")[-1].split("::")[-1].strip("()") for i in q.identifiers)
    return q


def _as_report(q: Query, rep: Report) -> None:
    """Route a bug report (search/reportquery.py): its names are the query's identifiers
    and lead its lexical terms, its prose segments are what the dense leg embeds; it is a
    question (location words in a report are prose), and words like "test" or "docs" in
    it do not ask for tests or docs (a report asks where to change the code)."""
    from scrydb.search import reportquery

    names = reportquery.report_names(rep)
    words = [w for w in re.findall(r"[\w$]+", reportquery.report_text_words(rep))]
    q.report = rep
    q.shape, q.entry, q.interrogative = "question", False, True
    q.wants_tests = q.wants_examples = q.wants_docs = False
    q.identifiers = names
    terms = [w for w in words if w.lower() not in STOP_WORDS or is_identifier_like(w)]
    q.terms = list(dict.fromkeys(names + terms))[: reportquery.MAX_TERMS]
    q.dense_texts = reportquery.dense_segments(rep, q.text)
    q.notes.append(reportquery.describe(rep))


def dense_text(text: str) -> str:
    """What the dense leg embeds for a query: the text without its opening question words
    ("how does the", "where is", "how do I", "what's the") and a closing question mark.

    The code model learned to match docstring summaries, which state what code does
    ("Compute the edit distance between two names"); a question's opening words match no
    docstring and draw its vector towards other questions. `scry eval`, all golden sets,
    MRR@10 of the dense leg: dev 0.535 -> 0.558, test 0.536 -> 0.562; fused: dev 0.705 ->
    0.710, test 0.695 -> 0.706 (evals/RESULTS.md). Identifiers and keywords are untouched;
    a text that would keep only stop words is kept whole.
    """
    q = " ".join(text.split())
    rest = _QUESTION_LEAD.sub("", q, count=1).rstrip("?").strip()
    if not any(w.lower() not in STOP_WORDS for w in re.findall(r"[\w$]+", rest)):
        return q  # nothing but stop words would be left ("what is", "how does it work")
    return rest


def fts_terms(q: Query) -> list[str]:
    """Distinct FTS tokens for the lexical leg: whole identifiers, squashed forms, words."""
    out: list[str] = []
    seen: set[str] = set()

    def add(t: str) -> None:
        t = t.lower()
        if t and t not in seen:
            seen.add(t)
            out.append(t)

    for term in q.terms:
        parts = tokens.split_identifier(term)
        add(term)
        if len(parts) > 1:
            add("".join(parts))
            for p in parts:
                if len(p) >= tokens.MIN_PART and p not in STOP_WORDS:
                    add(p)
        elif parts and parts[0] != term.lower():
            add(parts[0])
    return out


def fts_match(terms: list[str]) -> str | None:
    """An FTS5 MATCH expression OR-ing the quoted terms (no user syntax gets through).
    A NUL is dropped: FTS5 reads the expression as a C string, and one NUL in a report's
    name (found by tests/fuzz/query.py) made it refuse the whole expression."""
    kept = [t.replace("\x00", "") for t in terms]
    quoted = ['"' + t.replace('"', '""') + '"' for t in kept if t.strip()]
    return " OR ".join(quoted) if quoted else None
