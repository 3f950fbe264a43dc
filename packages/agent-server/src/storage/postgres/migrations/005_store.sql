-- LangGraph's long-term memory store: the tables of sqlite/migrations/005_store.sql, in PostgreSQL types.
-- namespace is the labels joined with "." (a label holds no "."), COLLATE "C" so that the items under a prefix are
-- one range of the primary key, which is also the index of namespace prefix scans:
-- namespace = 'a.b' OR 'a.b.' <= namespace < 'a.b/'.
-- An item whose expires_at has passed is invisible to reads already; the sweeper deletes it later.
CREATE TABLE store_items (
  namespace   text COLLATE "C" NOT NULL,
  key         text COLLATE "C" NOT NULL,
  value       jsonb NOT NULL,
  created_at  timestamptz NOT NULL,
  updated_at  timestamptz NOT NULL,
  expires_at  timestamptz,          -- NULL: never
  ttl_minutes double precision,     -- what a refresh pushes expires_at to from now (may be fractional); NULL: none
  PRIMARY KEY (namespace, key)
);
-- Sweeps take the earliest expired items first.
CREATE INDEX store_items_expires_at ON store_items (expires_at) WHERE expires_at IS NOT NULL;

-- The embeddings of an item's indexed fields, numbered by idx (a list field yields several).
-- Vectors are float32 little-endian bytes, as in SQLite, ranked in the server (shared/store-vectors.ts) rather than
-- in SQL: without an extension such as pgvector, cosine similarity over real[] in SQL (unnest) costs ~0.2 µs per
-- element, 3 s for 10,000 vectors of 1536 dimensions, where reading the bytes and ranking them takes under one.
CREATE TABLE store_vectors (
  namespace text COLLATE "C" NOT NULL,
  key       text COLLATE "C" NOT NULL,
  idx       integer NOT NULL,
  field     text NOT NULL,
  vector    bytea NOT NULL,
  PRIMARY KEY (namespace, key, idx),
  FOREIGN KEY (namespace, key) REFERENCES store_items (namespace, key) ON DELETE CASCADE
);
-- Random floats do not compress: storing them out of line as they are spares every write a pointless attempt.
ALTER TABLE store_vectors ALTER COLUMN vector SET STORAGE EXTERNAL;
