-- The ratchet ledger: .ratchet/ledger.db (SQLite, WAL mode).
-- Written only by `ratchet run` (src/store/sqlite_ledger.cc); read by every
-- other command and by the dashboard. Times are unix seconds (REAL).
-- Version 3. A change to this file bumps meta.schema_version (kSchemaVersion
-- in schema.h) and adds a migration in sqlite_ledger.cc (version 1 ledgers
-- gain the columns and the journal below, their rows journaled as found;
-- version 2 ledgers gain runs.curve). This text is compiled
-- into the binary at build time (CMakeLists.txt), never read at run time.
-- A ledger with a higher schema_version than the binary knows is refused.

CREATE TABLE IF NOT EXISTS meta (
  key   TEXT PRIMARY KEY,
  value TEXT NOT NULL
);
-- keys: schema_version, created_at, metric_name, goal ("min"|"max"), branch,
-- protected_hashes (JSON object path -> sha256), prepared_hashes, key_id
-- (which ledger key authenticates the journal), ...

CREATE TABLE IF NOT EXISTS sessions (
  id          INTEGER PRIMARY KEY,      -- 1, 2, ... one per `ratchet run`
  pid         INTEGER NOT NULL,
  started_at  REAL NOT NULL,
  ended_at    REAL,                     -- NULL while running or if it died
  stop_reason TEXT                      -- NULL while running or if it died
);

CREATE TABLE IF NOT EXISTS experiments (
  id               INTEGER PRIMARY KEY, -- 1-based, contiguous, assigned here; 1 = baseline
  session_id       INTEGER NOT NULL,
  phase            TEXT NOT NULL,       -- proposing|committed|building|running|decided|done
  status           TEXT NOT NULL DEFAULT '',  -- '' until decided; keep|discard|crash|timeout|
                                        -- out_of_scope|gate_failed|pruned|interrupted|
                                        -- rejected|no_change|propose_failed
  reason           TEXT NOT NULL DEFAULT '',
  baseline         INTEGER NOT NULL DEFAULT 0,
  parent_commit    TEXT NOT NULL DEFAULT '',
  candidate_commit TEXT NOT NULL DEFAULT '',
  proposer         TEXT NOT NULL DEFAULT '',
  description      TEXT NOT NULL DEFAULT '',
  hypothesis       TEXT NOT NULL DEFAULT '',
  params           TEXT NOT NULL DEFAULT '',  -- JSON object or ''
  metric           REAL,                -- primary metric (mean over runs); NULL if none
  metric_stddev    REAL NOT NULL DEFAULT 0,
  metric_n         INTEGER NOT NULL DEFAULT 0,
  metrics          TEXT NOT NULL DEFAULT '{}',  -- JSON object name -> number
  started_at       REAL NOT NULL DEFAULT 0,
  finished_at      REAL NOT NULL DEFAULT 0,
  propose_s        REAL NOT NULL DEFAULT 0,
  build_s          REAL NOT NULL DEFAULT 0,
  run_s            REAL NOT NULL DEFAULT 0,
  cpu_s            REAL NOT NULL DEFAULT 0,
  peak_rss_mb      REAL NOT NULL DEFAULT 0,
  exit_code        INTEGER NOT NULL DEFAULT -1,
  signal           INTEGER NOT NULL DEFAULT 0,
  diff_stat        TEXT NOT NULL DEFAULT '',
  files_changed    TEXT NOT NULL DEFAULT '[]',  -- JSON array of paths
  log_path         TEXT NOT NULL DEFAULT '',    -- relative to the loop directory
  usage            TEXT NOT NULL DEFAULT '{}',  -- JSON {input_tokens, output_tokens, cost_usd}
  mechanisms       TEXT NOT NULL DEFAULT '[]',  -- JSON array of mechanism names
  tried_commit     TEXT NOT NULL DEFAULT '',    -- what ran, when the kept commit is a rebase
  claims           TEXT NOT NULL DEFAULT '{}',  -- with [verify]: what the run printed
  warnings         TEXT NOT NULL DEFAULT '[]',  -- JSON array of lines
  worker           INTEGER NOT NULL DEFAULT 0
);

CREATE TABLE IF NOT EXISTS runs (
  experiment_id INTEGER NOT NULL,
  attempt       INTEGER NOT NULL,       -- 1-based
  purpose       TEXT NOT NULL,          -- main|baseline_repeat|confirm
  exit_code     INTEGER NOT NULL,
  signal        INTEGER NOT NULL,
  timed_out     INTEGER NOT NULL,
  wall_s        REAL NOT NULL,
  cpu_s         REAL NOT NULL,
  peak_rss_mb   REAL NOT NULL,
  metric        REAL,
  metrics       TEXT NOT NULL,          -- JSON object
  log_path      TEXT NOT NULL,
  claims        TEXT NOT NULL DEFAULT '{}',
  containment   TEXT NOT NULL DEFAULT '',
  sandboxed     INTEGER NOT NULL DEFAULT 0,
  verify_s      REAL NOT NULL DEFAULT 0,
  curve         TEXT NOT NULL DEFAULT '[]',  -- JSON [{"t": s, "v": {key: value}}], ratchet's clock
  PRIMARY KEY (experiment_id, attempt)
);

CREATE TABLE IF NOT EXISTS events (
  seq           INTEGER PRIMARY KEY AUTOINCREMENT,
  at            REAL NOT NULL,
  experiment_id INTEGER NOT NULL DEFAULT 0,
  kind          TEXT NOT NULL,          -- session_start|stop|outer|mechanism|gate|...
  detail        TEXT NOT NULL           -- JSON object
);

CREATE TABLE IF NOT EXISTS mechanism_calls (
  mechanism TEXT NOT NULL,
  hook      TEXT NOT NULL,              -- before_propose|on_candidate|on_result|accept
  calls     INTEGER NOT NULL,
  PRIMARY KEY (mechanism, hook)
);

-- Every row written to experiments, runs, sessions and meta, in write order,
-- hash-chained and authenticated (src/store/journal.h). Never updated.
CREATE TABLE IF NOT EXISTS journal (
  seq  INTEGER PRIMARY KEY,
  at   REAL NOT NULL,
  kind TEXT NOT NULL,                   -- experiment|run|session|meta
  key  TEXT NOT NULL,
  body TEXT NOT NULL,                   -- the row as canonical JSON
  hash TEXT NOT NULL,
  mac  TEXT NOT NULL
);
