"""Code-aware tokens: identifiers kept whole and split, queries analysed."""

from __future__ import annotations

import re

from scrydb import tokens
from scrydb.search.query import analyse, fts_terms


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
    q = analyse("where does the CLI start")
    assert q.entry
    assert analyse("where is the default timeout set").shape == "location"
    assert not analyse("where is the default timeout set").entry


def test_stop_words_dropped_but_not_identifiers() -> None:
    q = analyse("where is the retry backoff computed")
    assert "the" not in q.terms and "where" not in q.terms
    assert "retry" in q.terms and "backoff" in q.terms
    assert analyse("how is get_user handled").terms.count("get_user") == 1
