"""Code-aware tokens: identifiers kept whole and split, queries analysed."""

from __future__ import annotations

import re

from scrydb import tokens
from scrydb.search.query import analyse, dense_text, fts_terms


def test_split_identifier_cases() -> None:
    assert tokens.split_identifier("getUserById") == ("get", "user", "by", "id")
    assert tokens.split_identifier("get_user_by_id") == ("get", "user", "by", "id")
    assert tokens.split_identifier("HTTPServerError") == ("http", "server", "error")
    assert tokens.split_identifier("parseAST") == ("parse", "ast")
    assert tokens.split_identifier("kebab-case-name") == ("kebab", "case", "name")
    assert tokens.split_identifier("_internal") == ("internal",)


def test_index_text_keeps_whole_and_parts() -> None:
    text = tokens.index_text("return getUserById(user_id)")
    words = re.findall(r"\w+", text.lower())
    assert "getuserbyid" in words
    assert {"get", "user", "by", "id"} <= set(words)
    assert "user_id" in text and "userid" in words


def test_leading_underscore_word_is_findable() -> None:
    assert "cache" in tokens.index_text("self._cache").split()


def test_path_texts_split_stem_and_dirs() -> None:
    stem, dirs = tokens.path_texts("src/user_repository/UserRepository.ts")
    assert "UserRepository" in stem and "user" in stem.split() and "repository" in stem.split()
    assert "src" in dirs.split() and "user_repository" in dirs.split()


def test_query_terms_cover_all_spellings() -> None:
    for q in ("getUserById", "get_user_by_id", "GetUserByID"):
        terms = fts_terms(analyse(q))
        assert "getuserbyid" in terms, (q, terms)


def test_query_shapes() -> None:
    assert analyse("UserRepository").shape == "identifier"
    assert analyse("auth::verify").shape == "identifier"
    assert analyse("Client.send").shape == "identifier"
    assert analyse("_internal").shape == "identifier"
    assert analyse("retry backoff").shape == "keyword"
    assert analyse("how are failed requests retried").shape == "question"
    assert analyse("where does the CLI start").shape == "location"
    assert analyse("how are failed requests retried").interrogative
    assert analyse("retry failed requests with a growing delay").shape == "question"
    assert not analyse("retry failed requests with a growing delay").interrogative
    q = analyse("where does the CLI start")
    assert q.entry
    assert analyse("where is the default timeout set").shape == "location"
    assert not analyse("where is the default timeout set").entry


def test_stop_words_dropped_but_not_identifiers() -> None:
    q = analyse("where is the retry backoff computed")
    assert "the" not in q.terms and "where" not in q.terms
    assert "retry" in q.terms and "backoff" in q.terms
    assert analyse("how is get_user handled").terms.count("get_user") == 1


def test_dense_text_drops_question_openings() -> None:
    cases = {
        "how does the client retry a failed request?": "client retry a failed request",
        "Where is the retry backoff computed": "retry backoff computed",
        "how are argument completions produced": "argument completions produced",
        "what is a Router": "Router",
        "which flag names are offered first": "flag names are offered first",
        "what happens when  the socket closes": "happens when the socket closes",
        "how do I register the server in my editor": "register the server in my editor",
        "where can we change the timeout": "change the timeout",
        "where's the retry logic?": "retry logic",
        "What\u2019s a Router": "Router",
        # no auxiliary verb after how / when: a measure or a condition, kept whole
        "how long do we wait before trying again": "how long do we wait before trying again",
        "when text is wrapped": "when text is wrapped",
        # "another" is not the article "an"; "however" is not "how"
        "how does another worker start": "another worker start",
        "however it fails": "however it fails",
        # identifiers, keywords and a bare question word are untouched
        "UserRepository": "UserRepository",
        "retry backoff": "retry backoff",
        "how": "how",
        "what is": "what is",
        "how does it work": "how does it work",
    }
    for query, want in cases.items():
        assert dense_text(query) == want, query
