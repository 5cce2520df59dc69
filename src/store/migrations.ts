import type { Db } from './db.js'

/**
 * The schema, as an append-only list: entry N brings a database from `user_version` N to N+1.
 * Never edit an entry that has shipped; add a new one.
 */
export const MIGRATIONS: readonly string[] = [
  // 1: deployments and their revisions. A revision is stored as an anchor (status, status_at) plus
  // its speed; `next_at` is when its next timed transition is due (NULL when none is), which lets
  // the store find and persist due transitions cheaply. Everything about a deployment that follows
  // from its revisions (latest, active, status) is derived in `deployment_view`, never stored twice.
  `
  CREATE TABLE deployments (
    seq               INTEGER PRIMARY KEY,
    id                TEXT NOT NULL UNIQUE,
    tenant_id         TEXT NOT NULL,
    name              TEXT NOT NULL,
    source            TEXT NOT NULL,
    source_config     TEXT NOT NULL,
    secrets           TEXT NOT NULL,
    secret_references TEXT,
    image_version     TEXT,
    speed             TEXT,
    created_at        INTEGER NOT NULL,
    updated_at        INTEGER NOT NULL
  ) STRICT;
  CREATE UNIQUE INDEX deployments_name ON deployments (tenant_id, name);
  CREATE INDEX deployments_by_tenant ON deployments (tenant_id, seq);

  CREATE TABLE revisions (
    seq                    INTEGER PRIMARY KEY,
    id                     TEXT NOT NULL UNIQUE,
    deployment_seq         INTEGER NOT NULL REFERENCES deployments (seq) ON DELETE CASCADE,
    source                 TEXT NOT NULL,
    source_revision_config TEXT NOT NULL,
    speed                  TEXT NOT NULL,
    status                 TEXT NOT NULL,
    status_at              INTEGER NOT NULL,
    next_at                INTEGER,
    created_at             INTEGER NOT NULL
  ) STRICT;
  CREATE INDEX revisions_by_deployment ON revisions (deployment_seq, seq);
  CREATE INDEX revisions_deployed ON revisions (deployment_seq, status_at, seq) WHERE status = 'DEPLOYED';
  CREATE INDEX revisions_due ON revisions (next_at) WHERE next_at IS NOT NULL;

  CREATE VIEW deployment_view AS
  SELECT d.*,
         latest.id AS latest_revision_id,
         latest.source_revision_config AS latest_config,
         active.id AS active_revision_id,
         CASE WHEN active.id IS NULL THEN 'AWAITING_DATABASE' ELSE 'READY' END AS status,
         max(d.updated_at, coalesce(active.status_at, 0)) AS changed_at
    FROM deployments d
    LEFT JOIN revisions latest
      ON latest.seq = (SELECT max(seq) FROM revisions WHERE deployment_seq = d.seq)
    LEFT JOIN revisions active
      ON active.seq = (SELECT seq FROM revisions
                        WHERE deployment_seq = d.seq AND status = 'DEPLOYED'
                        ORDER BY status_at DESC, seq DESC LIMIT 1);
  `,

  // 2: workspaces (seeded from fixtures when first seen), listeners, and the Auth Service:
  // OAuth providers, authorization requests (one per started flow), tokens, agent connections.
  `
  CREATE TABLE workspaces (
    id                     TEXT PRIMARY KEY,
    self_hosted_enterprise INTEGER NOT NULL,
    seeded_at              INTEGER NOT NULL
  ) STRICT;

  CREATE TABLE listeners (
    seq            INTEGER PRIMARY KEY,
    id             TEXT NOT NULL UNIQUE,
    tenant_id      TEXT NOT NULL,
    compute_type   TEXT NOT NULL,
    compute_id     TEXT NOT NULL,
    compute_config TEXT NOT NULL,
    version        TEXT,
    created_at     INTEGER NOT NULL,
    updated_at     INTEGER NOT NULL,
    UNIQUE (tenant_id, compute_id)
  ) STRICT;

  CREATE TABLE oauth_providers (
    seq                        INTEGER PRIMARY KEY,
    id                         TEXT NOT NULL UNIQUE,
    tenant_id                  TEXT NOT NULL,
    provider_id                TEXT NOT NULL,
    name                       TEXT NOT NULL,
    client_id                  TEXT NOT NULL,
    client_secret              TEXT,
    auth_url                   TEXT NOT NULL,
    token_url                  TEXT NOT NULL,
    uses_pkce                  INTEGER NOT NULL,
    code_challenge_method      TEXT,
    provider_type              TEXT,
    mcp_server_url             TEXT,
    token_endpoint_auth_method TEXT NOT NULL,
    is_dynamic_client          INTEGER NOT NULL,
    account_label              TEXT,
    created_at                 INTEGER NOT NULL,
    updated_at                 INTEGER NOT NULL,
    UNIQUE (tenant_id, provider_id)
  ) STRICT;

  CREATE TABLE oauth_tokens (
    seq                    INTEGER PRIMARY KEY,
    id                     TEXT NOT NULL UNIQUE,
    provider_seq           INTEGER NOT NULL REFERENCES oauth_providers (seq) ON DELETE CASCADE,
    user_id                TEXT NOT NULL,
    access_token           TEXT NOT NULL,
    scopes                 TEXT NOT NULL,
    provider_account_label TEXT,
    is_default             INTEGER NOT NULL,
    expires_at             INTEGER,
    created_at             INTEGER NOT NULL,
    updated_at             INTEGER NOT NULL
  ) STRICT;
  CREATE INDEX oauth_tokens_by_user ON oauth_tokens (provider_seq, user_id);

  CREATE TABLE oauth_auth_requests (
    id             TEXT PRIMARY KEY,
    provider_seq   INTEGER NOT NULL REFERENCES oauth_providers (seq) ON DELETE CASCADE,
    user_id        TEXT NOT NULL,
    agent_id       TEXT,
    scopes         TEXT NOT NULL,
    is_default     INTEGER NOT NULL,
    state          TEXT NOT NULL UNIQUE,
    code_verifier  TEXT,
    code_challenge TEXT,
    code           TEXT UNIQUE,
    code_issued_at INTEGER,
    token_seq      INTEGER REFERENCES oauth_tokens (seq) ON DELETE SET NULL,
    completed_at   INTEGER,
    created_at     INTEGER NOT NULL,
    expires_at     INTEGER NOT NULL
  ) STRICT;

  CREATE TABLE agent_connections (
    seq        INTEGER PRIMARY KEY,
    id         TEXT NOT NULL UNIQUE,
    tenant_id  TEXT NOT NULL,
    agent_id   TEXT NOT NULL,
    token_seq  INTEGER NOT NULL REFERENCES oauth_tokens (seq) ON DELETE CASCADE,
    created_by TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    UNIQUE (agent_id, token_seq)
  ) STRICT;
  CREATE INDEX agent_connections_by_agent ON agent_connections (tenant_id, agent_id);
  `,

  // 3: the agent server. Everything lives in a `scope` ('' for the agent server at the root; a
  // deployment's own agent server uses its id), so scopes never see each other's data. A run's
  // events are an append-only log numbered from 0 (the SSE `id:`); checkpoints are the thread's
  // history, newest last.
  `
  CREATE TABLE assistants (
    seq          INTEGER PRIMARY KEY,
    scope        TEXT NOT NULL,
    assistant_id TEXT NOT NULL,
    graph_id     TEXT NOT NULL,
    name         TEXT NOT NULL,
    description  TEXT,
    config       TEXT NOT NULL,
    context      TEXT NOT NULL,
    metadata     TEXT NOT NULL,
    version      INTEGER NOT NULL,
    created_at   INTEGER NOT NULL,
    updated_at   INTEGER NOT NULL,
    UNIQUE (scope, assistant_id)
  ) STRICT;

  CREATE TABLE assistant_versions (
    assistant_seq INTEGER NOT NULL REFERENCES assistants (seq) ON DELETE CASCADE,
    version       INTEGER NOT NULL,
    graph_id      TEXT NOT NULL,
    name          TEXT NOT NULL,
    description   TEXT,
    config        TEXT NOT NULL,
    context       TEXT NOT NULL,
    metadata      TEXT NOT NULL,
    created_at    INTEGER NOT NULL,
    PRIMARY KEY (assistant_seq, version)
  ) STRICT;

  CREATE TABLE threads (
    seq              INTEGER PRIMARY KEY,
    scope            TEXT NOT NULL,
    thread_id        TEXT NOT NULL,
    metadata         TEXT NOT NULL,
    status           TEXT NOT NULL,
    state_values     TEXT,
    interrupts       TEXT NOT NULL,
    config           TEXT,
    error            TEXT,
    created_at       INTEGER NOT NULL,
    updated_at       INTEGER NOT NULL,
    state_updated_at INTEGER NOT NULL,
    UNIQUE (scope, thread_id)
  ) STRICT;

  CREATE TABLE checkpoints (
    seq                  INTEGER PRIMARY KEY,
    thread_seq           INTEGER NOT NULL REFERENCES threads (seq) ON DELETE CASCADE,
    checkpoint_id        TEXT NOT NULL,
    parent_checkpoint_id TEXT,
    run_id               TEXT,
    state_values         TEXT NOT NULL,
    next                 TEXT NOT NULL,
    metadata             TEXT NOT NULL,
    tasks                TEXT NOT NULL,
    interrupts           TEXT NOT NULL,
    paused_at            TEXT,
    created_at           INTEGER NOT NULL,
    UNIQUE (thread_seq, checkpoint_id)
  ) STRICT;

  CREATE TABLE runs (
    seq                INTEGER PRIMARY KEY,
    scope              TEXT NOT NULL,
    run_id             TEXT NOT NULL UNIQUE,
    thread_seq         INTEGER NOT NULL REFERENCES threads (seq) ON DELETE CASCADE,
    assistant_id       TEXT NOT NULL,
    status             TEXT NOT NULL,
    metadata           TEXT NOT NULL,
    kwargs             TEXT NOT NULL,
    multitask_strategy TEXT,
    created_at         INTEGER NOT NULL,
    updated_at         INTEGER NOT NULL
  ) STRICT;
  CREATE INDEX runs_by_thread ON runs (thread_seq, seq);

  CREATE TABLE run_events (
    run_seq INTEGER NOT NULL REFERENCES runs (seq) ON DELETE CASCADE,
    idx     INTEGER NOT NULL,
    event   TEXT NOT NULL,
    data    TEXT NOT NULL,
    PRIMARY KEY (run_seq, idx)
  ) STRICT, WITHOUT ROWID;
  `,

  // 4: feedback on runs: presigned tokens (the token id is the authorization) and the feedback
  // records submitted with them or through the API, keyed by run id (run ids are unique).
  `
  CREATE TABLE feedback_tokens (
    id              TEXT PRIMARY KEY,
    run_id          TEXT NOT NULL,
    feedback_key    TEXT NOT NULL,
    feedback_config TEXT,
    url             TEXT NOT NULL,
    expires_at      INTEGER NOT NULL,
    created_at      INTEGER NOT NULL
  ) STRICT;
  CREATE INDEX feedback_tokens_by_run ON feedback_tokens (run_id);

  CREATE TABLE feedback (
    seq             INTEGER PRIMARY KEY,
    id              TEXT NOT NULL UNIQUE,
    run_id          TEXT,
    key             TEXT NOT NULL,
    score           TEXT,
    value           TEXT,
    comment         TEXT,
    correction      TEXT,
    feedback_source TEXT,
    feedback_config TEXT,
    token_id        TEXT,
    created_at      INTEGER NOT NULL,
    modified_at     INTEGER NOT NULL
  ) STRICT;
  CREATE INDEX feedback_by_run ON feedback (run_id, key);
  `,

  // 5: thread search pages in SQL; its default order (newest first) reads this index backwards
  // instead of sorting every thread of the scope.
  `
  CREATE INDEX threads_by_created ON threads (scope, created_at, seq);
  `,

  // 6: whose feedback is whose. Tokens and feedback on a run carry the run's agent-server scope
  // (so that the data of a deleted deployment, or of a reset workspace, goes with it); feedback
  // written through the API also carries the workspace that wrote it (feedback on no run is seen
  // only there).
  `
  ALTER TABLE feedback_tokens ADD COLUMN scope TEXT;
  UPDATE feedback_tokens SET scope = (SELECT scope FROM runs WHERE runs.run_id = feedback_tokens.run_id);
  CREATE INDEX feedback_tokens_by_scope ON feedback_tokens (scope);
  ALTER TABLE feedback ADD COLUMN scope TEXT;
  ALTER TABLE feedback ADD COLUMN tenant_id TEXT;
  UPDATE feedback SET scope = (SELECT scope FROM runs WHERE runs.run_id = feedback.run_id);
  CREATE INDEX feedback_by_scope ON feedback (scope);
  CREATE INDEX feedback_by_tenant ON feedback (tenant_id);
  `,

  // 7: the session protocol. Each thread has one log of protocol events across all its runs,
  // numbered from 1 (the envelope's `seq`); the thread remembers the assistant its first
  // `run.start` bound it to.
  `
  CREATE TABLE thread_events (
    thread_seq INTEGER NOT NULL REFERENCES threads (seq) ON DELETE CASCADE,
    seq        INTEGER NOT NULL,
    run_id     TEXT,
    method     TEXT NOT NULL,
    namespace  TEXT NOT NULL,
    node       TEXT,
    data       TEXT NOT NULL,
    at         INTEGER NOT NULL,
    PRIMARY KEY (thread_seq, seq)
  ) STRICT, WITHOUT ROWID;
  ALTER TABLE threads ADD COLUMN bound_assistant_id TEXT;
  `,

  // 8: subgraph checkpoints. A subgraph writes its own checkpoints into its thread, in the namespace
  // of the task that runs it (`<node>:<task id>`, nested ones joined by `|`); '' is the root graph,
  // whose checkpoints alone are the thread's state and history. Reads ask for a namespace's latest
  // checkpoint or its history, newest first: the index serves both.
  `
  ALTER TABLE checkpoints ADD COLUMN checkpoint_ns TEXT NOT NULL DEFAULT '';
  CREATE INDEX checkpoints_by_ns ON checkpoints (thread_seq, checkpoint_ns, seq);
  `,

  // 9: the agent server's store (long-term memory), per scope like the rest of an agent server's
  // data. A namespace is kept as its labels joined by '.', which no label may contain, so a prefix
  // of labels is a prefix of the text. `ttl_minutes` is what the client asked for; `expires_at`
  // (epoch ms, NULL: never) moves when a read refreshes it. An item written again gets a new `seq`,
  // so `updated_at DESC, seq DESC` lists the most recently written first even on a frozen clock.
  `
  CREATE TABLE store_items (
    seq          INTEGER PRIMARY KEY,
    scope        TEXT NOT NULL,
    namespace    TEXT NOT NULL,
    key          TEXT NOT NULL,
    value        TEXT NOT NULL,
    index_fields TEXT,
    ttl_minutes  REAL,
    expires_at   INTEGER,
    created_at   INTEGER NOT NULL,
    updated_at   INTEGER NOT NULL,
    UNIQUE (scope, namespace, key)
  ) STRICT;
  CREATE INDEX store_items_by_update ON store_items (scope, updated_at, seq);
  CREATE INDEX store_items_expiring ON store_items (expires_at) WHERE expires_at IS NOT NULL;
  `,

  // 10: crons, per scope like the rest of an agent server's data. A thread cron goes with its thread
  // (the cascade); a stateless one has none. `payload` is the run body each occurrence creates a run
  // from (JSON); `next_run_at` (epoch ms) is the next occurrence not yet fired, NULL when none is
  // left before `end_time`: the scheduler fires what is due in `next_run_at` order, and reads derive
  // `next_run_date` from it and the clock. `public_base` is where the creator reached hangar (for
  // the URLs a run hands out, like feedback links).
  `
  CREATE TABLE crons (
    seq              INTEGER PRIMARY KEY,
    cron_id          TEXT NOT NULL UNIQUE,
    scope            TEXT NOT NULL,
    assistant_id     TEXT NOT NULL,
    thread_seq       INTEGER REFERENCES threads (seq) ON DELETE CASCADE,
    user_id          TEXT,
    schedule         TEXT NOT NULL,
    timezone         TEXT,
    end_time         INTEGER,
    enabled          INTEGER NOT NULL,
    on_run_completed TEXT,
    payload          TEXT NOT NULL,
    metadata         TEXT NOT NULL,
    public_base      TEXT NOT NULL,
    next_run_at      INTEGER,
    created_at       INTEGER NOT NULL,
    updated_at       INTEGER NOT NULL
  ) STRICT;
  CREATE INDEX crons_by_scope ON crons (scope, created_at, seq);
  CREATE INDEX crons_by_thread ON crons (thread_seq);
  CREATE INDEX crons_due ON crons (next_run_at, seq) WHERE enabled = 1 AND next_run_at IS NOT NULL;
  `,

  // 11: what the official tools read and do beyond the first schema. A deployment's `display_name`
  // (set by PATCH only). A deletion takes time: from DELETE on, a deployment has a row here, an
  // anchor like a revision's (the step it is at, since when, at which speed; `next_at` when it is
  // due to move on by time alone), until the deployment's own row goes with it (the cascade). The
  // deployment's status shows the deletion's step while it lasts. A deployment has no revision
  // until its code arrives (`langgraph deploy` creates it empty), so `deployment_view` is rebuilt; what
  // its create did say about that code (a config path) waits in `pending_revision_config`.
  `
  ALTER TABLE deployments ADD COLUMN display_name TEXT;
  ALTER TABLE deployments ADD COLUMN pending_revision_config TEXT;

  CREATE TABLE deployment_deletions (
    deployment_seq INTEGER PRIMARY KEY REFERENCES deployments (seq) ON DELETE CASCADE,
    step           TEXT NOT NULL,
    speed          TEXT NOT NULL,
    since          INTEGER NOT NULL,
    next_at        INTEGER
  ) STRICT;
  CREATE INDEX deployment_deletions_due ON deployment_deletions (next_at) WHERE next_at IS NOT NULL;

  DROP VIEW deployment_view;
  CREATE VIEW deployment_view AS
  SELECT d.*,
         latest.id AS latest_revision_id,
         latest.source_revision_config AS latest_config,
         active.id AS active_revision_id,
         coalesce(deletion.step, CASE WHEN active.id IS NULL THEN 'AWAITING_DATABASE' ELSE 'READY' END) AS status,
         max(d.updated_at, coalesce(active.status_at, 0), coalesce(deletion.since, 0)) AS changed_at
    FROM deployments d
    LEFT JOIN deployment_deletions deletion ON deletion.deployment_seq = d.seq
    LEFT JOIN revisions latest
      ON latest.seq = (SELECT max(seq) FROM revisions WHERE deployment_seq = d.seq)
    LEFT JOIN revisions active
      ON active.seq = (SELECT seq FROM revisions
                        WHERE deployment_seq = d.seq AND status = 'DEPLOYED'
                        ORDER BY status_at DESC, seq DESC LIMIT 1);
  `,

  // 12: uploaded sources and what the logs are made of. `source_uploads` holds each signed upload URL
  // handed out (its object path, signature and expiry) and, once something was PUT to it, the bytes
  // with their size, digests and what unpacking them found (`archive`, JSON). `revisions.snapshot`
  // (JSON) is what a revision was made from beyond its config, taken when it is created: the
  // deployment's name, its secrets' names (never values), the commands, the tarball's facts.
  // `revision_steps` records when a revision entered each status; the trigger writes it on every
  // status change, whichever path makes it (a due transition, a poll read, an admin force, an
  // interrupt, a newer revision skipping it), so no code path has to remember to. A write that jumps
  // several steps at once records the last; the others follow from the revision's speed.
  `
  CREATE TABLE source_uploads (
    seq            INTEGER PRIMARY KEY,
    id             TEXT NOT NULL UNIQUE,
    deployment_seq INTEGER NOT NULL REFERENCES deployments (seq) ON DELETE CASCADE,
    object_path    TEXT NOT NULL UNIQUE,
    signature      TEXT NOT NULL,
    issued_at      INTEGER NOT NULL,
    expires_at     INTEGER NOT NULL,
    uploaded_at    INTEGER,
    size           INTEGER,
    sha256         TEXT,
    md5            TEXT,
    archive        TEXT,
    content        BLOB
  ) STRICT;
  CREATE INDEX source_uploads_by_deployment ON source_uploads (deployment_seq, seq);

  ALTER TABLE revisions ADD COLUMN snapshot TEXT;

  CREATE TABLE revision_steps (
    revision_seq INTEGER NOT NULL REFERENCES revisions (seq) ON DELETE CASCADE,
    status       TEXT NOT NULL,
    at           INTEGER NOT NULL,
    PRIMARY KEY (revision_seq, status)
  ) STRICT, WITHOUT ROWID;
  CREATE TRIGGER revision_steps_recorded AFTER UPDATE OF status ON revisions
  WHEN NEW.status IS NOT OLD.status
  BEGIN
    INSERT OR IGNORE INTO revision_steps (revision_seq, status, at) VALUES (NEW.seq, NEW.status, NEW.status_at);
  END;
  `,

  // 13: when each revision reaches the end of its track by time alone (`ends_at`: DEPLOYED or its
  // failure; NULL when time alone never takes it there, or it is there). While nobody follows the
  // event bus, the ticker writes a revision when it ends rather than at every step (reads still
  // write what is due first). A revision in progress before this takes its next step as its end:
  // the ticker writes it then, with its real end.
  `
  ALTER TABLE revisions ADD COLUMN ends_at INTEGER;
  UPDATE revisions SET ends_at = next_at WHERE next_at IS NOT NULL;
  CREATE INDEX revisions_ending ON revisions (ends_at) WHERE ends_at IS NOT NULL;
  `,
]

export function migrate(db: Db) {
  const version = db.pragma('user_version', { simple: true }) as number
  if (version > MIGRATIONS.length) {
    throw new Error(`the database was written by a newer hangar (schema ${version}; this one knows ${MIGRATIONS.length})`)
  }
  for (let next = version; next < MIGRATIONS.length; next++) {
    db.transaction(() => {
      db.exec(MIGRATIONS[next])
      db.pragma(`user_version = ${next + 1}`)
    })()
  }
}
