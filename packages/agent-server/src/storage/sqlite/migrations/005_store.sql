-- LangGraph's long-term memory store (the API's /store routes and graphs' BaseStore): items and their vectors.
-- namespace is the labels joined with "." (a label holds no "."), so the items under a prefix are one range of the
-- primary key, which is also the index of namespace prefix scans: namespace = 'a.b' OR 'a.b.' <= namespace < 'a.b/'.
-- An item whose expires_at has passed is invisible to reads already; the sweeper deletes it later.
CREATE TABLE store_items (
  namespace   TEXT NOT NULL,
  key         TEXT NOT NULL,
  value       TEXT NOT NULL,   -- JSON object
  created_at  TEXT NOT NULL,
  updated_at  TEXT NOT NULL,
  expires_at  TEXT,            -- NULL: never
  ttl_minutes REAL,            -- what a refresh pushes expires_at to from now (may be fractional); NULL: none
  PRIMARY KEY (namespace, key)
);
-- Sweeps take the earliest expired items first.
CREATE INDEX store_items_expires_at ON store_items (expires_at) WHERE expires_at IS NOT NULL;

-- The embeddings of an item's indexed fields; a field that yields several texts (a list) has several vectors,
-- numbered by idx. A search compares vectors of the query's dimension only.
CREATE TABLE store_vectors (
  namespace TEXT NOT NULL,
  key       TEXT NOT NULL,
  idx       INTEGER NOT NULL,   -- position among the item's vectors
  field     TEXT NOT NULL,      -- the path the embedded text came from
  vector    BLOB NOT NULL,      -- float32 little-endian
  PRIMARY KEY (namespace, key, idx),
  FOREIGN KEY (namespace, key) REFERENCES store_items (namespace, key) ON DELETE CASCADE
);
