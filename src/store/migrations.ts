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
