-- scrydb index schema. One SQLite file per repository, opened with apsw in WAL mode.
-- Applied by scrydb/store.py when the file is created; PRAGMA user_version holds the
-- schema version (store.SCHEMA_VERSION) and a file with a newer version is refused.
-- The two sqlite-vec tables depend on the embedder's dimension and are created from code
-- (store.py, VEC_TABLES_SQL); their definition is repeated at the end of this file.

-- Fingerprint and bookkeeping: schema, repo root/key, embedder id + dimension, the
-- recipe of embedded texts (embed_text), chunker and tokenizer versions, the scrydb
-- version that last wrote, last sync time, measured embedding rate, counters.
CREATE TABLE IF NOT EXISTS meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
) WITHOUT ROWID;

-- One row per indexed file. (mtime_ns, size) decide whether a file must be re-read;
-- hash (blake2b of the bytes) whether it must be re-chunked.
CREATE TABLE IF NOT EXISTS files (
    id        INTEGER PRIMARY KEY,
    path      TEXT NOT NULL UNIQUE,        -- POSIX path relative to the repo root
    lang      TEXT,                        -- langs.detect(); NULL when unknown
    size      INTEGER NOT NULL,
    mtime_ns  INTEGER NOT NULL,
    hash      TEXT NOT NULL,
    n_lines   INTEGER NOT NULL DEFAULT 0,
    indexed_at REAL NOT NULL               -- unix time of the last (re)chunking
);

-- Embeddings, one per distinct chunk text per embedder: reused by text_hash, so an
-- unchanged, renamed or moved chunk is never embedded twice. The vectors themselves live
-- in vec_float / vec_bit with rowid = embeddings.id. Ids only grow (sync.py takes them
-- from meta.emb_seq), so a reader that has seen id N knows every newer vector is > N.
-- A vector no chunk refers to any more is an orphan: kept (the most recently orphaned
-- index.orphan_keep of them) so a branch switch back or an undo costs no embedding.
CREATE TABLE IF NOT EXISTS embeddings (
    id          INTEGER PRIMARY KEY,
    text_hash   TEXT NOT NULL UNIQUE,
    orphaned_at REAL,                      -- unix time a sync found it unreferenced; NULL in use
    origin      INTEGER                    -- NULL: computed by the model here; 1: taken from
                                           -- the shared vector cache; 2: from a seed index
);
CREATE INDEX IF NOT EXISTS embeddings_orphaned ON embeddings(orphaned_at)
    WHERE orphaned_at IS NOT NULL;

-- Retrievable units (chunk/__init__.py). emb_id is NULL until the chunk's text has a
-- vector: such chunks are searchable lexically only ("embeddings pending").
CREATE TABLE IF NOT EXISTS chunks (
    id         INTEGER PRIMARY KEY,
    file_id    INTEGER NOT NULL REFERENCES files(id) ON DELETE CASCADE,
    start_line INTEGER NOT NULL,
    end_line   INTEGER NOT NULL,
    kind       TEXT NOT NULL,
    symbol     TEXT,                       -- qualified, e.g. Client.send
    content    TEXT NOT NULL,
    text_hash  TEXT NOT NULL,              -- hash of content: key of embedding reuse
    emb_id     INTEGER REFERENCES embeddings(id) ON DELETE SET NULL,
    entry      INTEGER NOT NULL DEFAULT 0, -- 1: shaped like an entry point (chunk.ENTRY_SHAPES)
    -- The header vector (chunk/header.py): a short natural-language text (name and path in
    -- words, first docstring sentence) embedded beside the body. head_hash (of the header
    -- without its path words, so a moved chunk keeps its vector, as bodies do) is NULL
    -- until the embedding phase derives it, '' when the chunk has no header.
    head_hash  TEXT,
    head_emb_id INTEGER,                   -- embeddings.id; unset by hand where vectors go
    windows    INTEGER                     -- rows in chunk_windows; NULL until derived
);
CREATE INDEX IF NOT EXISTS chunks_head ON chunks(head_hash);
CREATE INDEX IF NOT EXISTS chunks_head_emb ON chunks(head_emb_id);
CREATE INDEX IF NOT EXISTS chunks_entry ON chunks(entry) WHERE entry = 1;
CREATE INDEX IF NOT EXISTS chunks_file ON chunks(file_id, start_line);
CREATE INDEX IF NOT EXISTS chunks_hash ON chunks(text_hash);
CREATE INDEX IF NOT EXISTS chunks_emb ON chunks(emb_id);

-- Window vectors (chunk/windows.py): a long chunk's extra vectors over the stretches of
-- its text its body vector does not see; the dense leg scores a chunk by the best of its
-- body and window cosines. Derived by the embedding phase (chunks.windows then says how
-- many, 0 for most chunks); text_hash (sync.base.window_hash, of the window's text) is
-- the key of reuse, as for bodies.
CREATE TABLE IF NOT EXISTS chunk_windows (
    chunk_id  INTEGER NOT NULL REFERENCES chunks(id) ON DELETE CASCADE,
    seq       INTEGER NOT NULL,            -- 0, 1, 2: order in the chunk
    text_hash TEXT NOT NULL,
    emb_id    INTEGER,                     -- embeddings.id; NULL until embedded
    PRIMARY KEY (chunk_id, seq)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS chunk_windows_hash ON chunk_windows(text_hash);
CREATE INDEX IF NOT EXISTS chunk_windows_emb ON chunk_windows(emb_id);

-- Definitions found by tree-sitter: exact-symbol votes, definition boosts and the
-- "did you mean" suggestions.
CREATE TABLE IF NOT EXISTS symbols (
    id       INTEGER PRIMARY KEY,
    name     TEXT NOT NULL,                -- bare name: send
    norm     TEXT NOT NULL,                -- squashed lower-case words: getUserById -> getuserbyid
    qualname TEXT NOT NULL,                -- Client.send
    kind     TEXT NOT NULL,
    file_id  INTEGER NOT NULL REFERENCES files(id) ON DELETE CASCADE,
    chunk_id INTEGER NOT NULL REFERENCES chunks(id) ON DELETE CASCADE,
    line     INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS symbols_norm ON symbols(norm);
CREATE INDEX IF NOT EXISTS symbols_chunk ON symbols(chunk_id);
CREATE INDEX IF NOT EXISTS symbols_file ON symbols(file_id);

-- Lexical leg: BM25 over four columns, rowid = chunks.id. Contentless (the text is in
-- chunks.content); the indexed text is prepared in Python by tokens.py: identifiers
-- kept whole AND split into words (getUserById -> getuserbyid get user by id), so the
-- built-in unicode61 tokenizer reads it and any SQLite with FTS5 can query the file.
--   symbol: the chunk's symbols (qualified, whole + split)
--   stem:   the file name without extension (whole + split)
--   path:   the directories of the path (split)
--   body:   the chunk content (identifiers whole + split)
CREATE VIRTUAL TABLE IF NOT EXISTS chunks_fts USING fts5(
    symbol, stem, path, body,
    content = '',
    contentless_delete = 1,
    tokenize = 'porter unicode61 remove_diacritics 2 tokenchars ''_'''
);

-- Fuzzy query expansion: trigrams of distinct normalised symbol names (symbols.norm),
-- rowid = a stable id per name. Candidates from here are verified by edit distance.
CREATE TABLE IF NOT EXISTS symbol_names (
    id   INTEGER PRIMARY KEY,
    name TEXT NOT NULL UNIQUE              -- a symbols.norm value
);
CREATE VIRTUAL TABLE IF NOT EXISTS symbol_trigrams USING fts5(
    name,
    content = 'symbol_names',
    content_rowid = 'id',
    tokenize = 'trigram'
);
CREATE TRIGGER IF NOT EXISTS symbol_names_ai AFTER INSERT ON symbol_names BEGIN
    INSERT INTO symbol_trigrams(rowid, name) VALUES (new.id, new.name);
END;
CREATE TRIGGER IF NOT EXISTS symbol_names_ad AFTER DELETE ON symbol_names BEGIN
    INSERT INTO symbol_trigrams(symbol_trigrams, rowid, name) VALUES ('delete', old.id, old.name);
END;

-- The code graph's raw references (issue 44): each chunk's outgoing references as the
-- chunker found them (calls, imports, base classes, type uses, decorators). They are
-- written and deleted with their chunk, in the same transaction, so a killed sync leaves
-- no half-written graph; names are resolved to definitions when asked (search/graph.py),
-- so an edit to a definition is seen by every reference at once.
CREATE TABLE IF NOT EXISTS refs (
    chunk_id  INTEGER NOT NULL REFERENCES chunks(id) ON DELETE CASCADE,
    file_id   INTEGER NOT NULL REFERENCES files(id) ON DELETE CASCADE,
    name      TEXT NOT NULL,               -- as written, last component: send
    norm      TEXT NOT NULL,               -- normalise_name(name), as symbols.norm
    kind      TEXT NOT NULL,               -- call, import, inherit, type, decorator
    line      INTEGER NOT NULL,            -- 1-based line of the reference site
    col       INTEGER NOT NULL,            -- 1-based column of the name
    qualifier TEXT,                        -- what it was reached through: self, client, os.path
    module    TEXT,                        -- for imports: the module or path imported from
    alias     TEXT                         -- for imports: the local name (import x as y)
);
CREATE INDEX IF NOT EXISTS refs_norm ON refs(norm);
CREATE INDEX IF NOT EXISTS refs_chunk ON refs(chunk_id);
CREATE INDEX IF NOT EXISTS refs_file ON refs(file_id);

-- Files seen but not indexed, with the stat that decided it, so an unchanged skipped
-- file is not read again and `scry status` can count the reasons.
CREATE TABLE IF NOT EXISTS skipped (
    path     TEXT PRIMARY KEY,
    reason   TEXT NOT NULL,
    size     INTEGER NOT NULL,
    mtime_ns INTEGER NOT NULL
) WITHOUT ROWID;

-- Query vectors by (embedder, query text): a repeated query pays only for retrieval,
-- also across CLI processes. Trimmed to the most recent QUERY_CACHE_SIZE rows.
CREATE TABLE IF NOT EXISTS query_cache (
    key     TEXT PRIMARY KEY,              -- blake2b(embedder id + query)
    vector  BLOB NOT NULL,
    used_at REAL NOT NULL
) WITHOUT ROWID;

-- The vector tables (created from code once the embedder's dimension D is known):
--   CREATE VIRTUAL TABLE vec_float USING vec0(embedding float[D] distance_metric=cosine);
--   CREATE VIRTUAL TABLE vec_bit   USING vec0(embedding bit[D]);
-- rowid = embeddings.id in both. Float vectors are L2-normalised. vec_bit holds the
-- sign bits (vec_quantize_binary) for the coarse Hamming pass above the exact-search
-- threshold; vec_float rescores the candidates.
