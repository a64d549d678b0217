import type { DatabaseSync } from 'node:sqlite';
import { customerJsonV7, customerJsonV25, ROLLUP_FROM_HISTORY_V8 } from '../migration-steps.ts';

// Append-only: a migration that has shipped is never edited; a change is a new entry. Steps that
// live code also has are taken frozen from ../migration-steps.ts, never from the live modules.
// Ids compare byte-wise (SQLite's BINARY collation), matching PostgreSQL's COLLATE "C".
// An entry is SQL, or a function for a step SQL cannot express (run in the same transaction).
export type Migration = string | ((db: DatabaseSync) => void);

export const MIGRATIONS: Migration[] = [
  /* 1: accounts, keys, customers */ `
  CREATE TABLE accounts (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    created_at INTEGER NOT NULL
  ) STRICT;
  CREATE TABLE api_keys (
    id TEXT PRIMARY KEY,
    account_id TEXT NOT NULL REFERENCES accounts(id),
    key_hash TEXT NOT NULL UNIQUE,
    prefix TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    revoked_at INTEGER
  ) STRICT;
  CREATE TABLE customers (
    account_id TEXT NOT NULL REFERENCES accounts(id),
    id TEXT NOT NULL,
    name TEXT NOT NULL,
    email TEXT NOT NULL,
    metadata TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    PRIMARY KEY (account_id, id)
  ) WITHOUT ROWID, STRICT;
  `,
];

MIGRATIONS.push(
  /* 2: health scores, history, settings, the event outbox */ `
  CREATE TABLE account_settings (
    account_id TEXT PRIMARY KEY REFERENCES accounts(id),
    weights TEXT NOT NULL DEFAULT '{}',
    weights_updated_at INTEGER,
    healthy REAL NOT NULL DEFAULT 0.7,
    at_risk REAL NOT NULL DEFAULT 0.4,
    thresholds_updated_at INTEGER
  ) STRICT;
  CREATE TABLE health_scores (
    account_id TEXT NOT NULL,
    customer_id TEXT NOT NULL,
    score REAL NOT NULL,
    band INTEGER NOT NULL, -- 0 critical, 1 at_risk, 2 healthy
    factors TEXT NOT NULL,
    version INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    PRIMARY KEY (account_id, customer_id),
    FOREIGN KEY (account_id, customer_id) REFERENCES customers(account_id, id) ON DELETE CASCADE
  ) WITHOUT ROWID, STRICT;
  -- Bands are contiguous score ranges, so (band, score) order is score order: one index serves
  -- the portfolio with and without a status filter.
  CREATE INDEX health_scores_portfolio ON health_scores (account_id, band, score, customer_id);
  CREATE TABLE score_history (
    account_id TEXT NOT NULL,
    customer_id TEXT NOT NULL,
    version INTEGER NOT NULL,
    score REAL NOT NULL,
    status TEXT NOT NULL,
    factors TEXT NOT NULL,
    reason TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    PRIMARY KEY (account_id, customer_id, version),
    FOREIGN KEY (account_id, customer_id) REFERENCES customers(account_id, id) ON DELETE CASCADE
  ) WITHOUT ROWID, STRICT;
  CREATE TABLE events (
    seq INTEGER PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    account_id TEXT NOT NULL REFERENCES accounts(id),
    type TEXT NOT NULL,
    data TEXT NOT NULL,
    created_at INTEGER NOT NULL
  ) STRICT;
  CREATE INDEX events_by_account ON events (account_id, seq);
  `,
);

MIGRATIONS.push(
  /* 3: webhooks and their deliveries */ `
  CREATE TABLE webhooks (
    account_id TEXT NOT NULL REFERENCES accounts(id),
    id TEXT NOT NULL,
    url TEXT NOT NULL,
    events TEXT NOT NULL,
    description TEXT,
    secret TEXT NOT NULL,
    enabled INTEGER NOT NULL,
    disabled_reason TEXT,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    PRIMARY KEY (account_id, id)
  ) WITHOUT ROWID, STRICT;
  CREATE TABLE webhook_subscriptions (
    account_id TEXT NOT NULL,
    event_type TEXT NOT NULL,
    webhook_id TEXT NOT NULL,
    PRIMARY KEY (account_id, event_type, webhook_id),
    FOREIGN KEY (account_id, webhook_id) REFERENCES webhooks(account_id, id) ON DELETE CASCADE
  ) WITHOUT ROWID, STRICT;
  CREATE TABLE deliveries (
    id TEXT PRIMARY KEY,
    account_id TEXT NOT NULL,
    webhook_id TEXT NOT NULL,
    event_id TEXT NOT NULL REFERENCES events(id),
    status TEXT NOT NULL, -- pending, succeeded, failed
    attempts INTEGER NOT NULL,
    next_attempt_at INTEGER,
    lease_owner TEXT,
    lease_until INTEGER,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    FOREIGN KEY (account_id, webhook_id) REFERENCES webhooks(account_id, id) ON DELETE CASCADE
  ) WITHOUT ROWID, STRICT;
  -- Covers the dispatchers' choice of due work, so choosing reads no table rows.
  CREATE INDEX deliveries_due ON deliveries (next_attempt_at, lease_until, account_id, webhook_id)
    WHERE status = 'pending';
  CREATE INDEX deliveries_by_webhook ON deliveries (account_id, webhook_id, id);
  CREATE TABLE delivery_attempts (
    delivery_id TEXT NOT NULL REFERENCES deliveries(id) ON DELETE CASCADE,
    attempt INTEGER NOT NULL,
    started_at INTEGER NOT NULL,
    duration_ms INTEGER NOT NULL,
    status_code INTEGER,
    error TEXT,
    response_body TEXT,
    PRIMARY KEY (delivery_id, attempt)
  ) WITHOUT ROWID, STRICT;
  `,
);

MIGRATIONS.push(
  /* 4: Idempotency-Key claims (status NULL while the request runs) */ `
  CREATE TABLE idempotency_keys (
    account_id TEXT NOT NULL,
    key TEXT NOT NULL,
    fingerprint TEXT NOT NULL,
    status INTEGER,
    body TEXT,
    created_at INTEGER NOT NULL,
    PRIMARY KEY (account_id, key)
  ) WITHOUT ROWID, STRICT;
  CREATE INDEX idempotency_keys_by_age ON idempotency_keys (created_at);
  `,
);

MIGRATIONS.push(
  /* 5: retention finds an event's deliveries by the event (and so does the foreign key's check) */ `
  CREATE INDEX deliveries_by_event ON deliveries (event_id);
  `,
);

MIGRATIONS.push(
  /* 6: nothing on SQLite (one writer: seq is already commit order); PostgreSQL's feed order */ `
  SELECT 1;
  `,
);

/*
 * 7: each customer's API JSON kept with its row, so a list page is its rows' text joined
 * (docs/operations.md, "Upgrades"). A process of the previous version writes customers without
 * it: its inserts leave the default '' and the trigger blanks the text its updates leave stale;
 * a blank is read the slow way (reader.ts), so going back a version and forth again is safe.
 */
MIGRATIONS.push((db) => {
  db.exec(`
    ALTER TABLE customers ADD COLUMN json TEXT NOT NULL DEFAULT '';
    CREATE TRIGGER customers_json_stale AFTER UPDATE OF name, email, metadata, updated_at ON customers
    WHEN NEW.json = OLD.json AND NEW.json <> ''
    BEGIN
      UPDATE customers SET json = '' WHERE account_id = NEW.account_id AND id = NEW.id;
    END;
  `);
  backfillCustomerJson(db);
});

/** Fills migration 7's column for the customers stored before it, 5,000 at a time. */
function backfillCustomerJson(db: DatabaseSync): void {
  const read = db.prepare(
    `SELECT account_id, id, name, email, metadata, created_at, updated_at FROM customers
     WHERE (account_id, id) > (?, ?) ORDER BY account_id, id LIMIT 5000`,
  );
  read.setReturnArrays(true);
  const write = db.prepare('UPDATE customers SET json = ? WHERE account_id = ? AND id = ?');
  let after: [string, string] = ['', ''];
  for (;;) {
    const rows = read.all(...after) as unknown as [string, string, string, string, string, number, number][];
    for (const [account, id, name, email, metadata, created, updated] of rows) {
      write.run(customerJsonV7(id, name, email, metadata, created, updated), account, id);
    }
    const last = rows.at(-1);
    if (!last || rows.length < 5000) return;
    after = [last[0], last[1]];
  }
}

/*
 * 8: segments, trends, movers and drop alerts (docs/operations.md, "The trend rollup"). score_days
 * holds what each UTC day changed in the portfolio, filled from the history kept so far; the drop
 * alert rule lives with the other settings; drop_alerts remembers each customer's last alert.
 */
MIGRATIONS.push((db) => {
  db.exec(`
    CREATE TABLE score_days (
      account_id TEXT NOT NULL,
      day INTEGER NOT NULL, -- UTC days since 1970-01-01
      slot INTEGER NOT NULL, -- 0 here; PostgreSQL's writers spread over slots
      critical INTEGER NOT NULL,
      at_risk INTEGER NOT NULL,
      healthy INTEGER NOT NULL,
      score_micros INTEGER NOT NULL,
      PRIMARY KEY (account_id, day, slot)
    ) WITHOUT ROWID, STRICT;
    CREATE TABLE drop_alerts (
      account_id TEXT NOT NULL,
      customer_id TEXT NOT NULL,
      alerted_at INTEGER NOT NULL,
      PRIMARY KEY (account_id, customer_id),
      FOREIGN KEY (account_id, customer_id) REFERENCES customers(account_id, id) ON DELETE CASCADE
    ) WITHOUT ROWID, STRICT;
    ALTER TABLE account_settings ADD COLUMN drop_delta REAL;
    ALTER TABLE account_settings ADD COLUMN drop_days INTEGER;
    ALTER TABLE account_settings ADD COLUMN alerts_updated_at INTEGER;
  `);
  db.exec(ROLLUP_FROM_HISTORY_V8);
});

MIGRATIONS.push(
  /* 9: API keys have a scope (docs/api.md, "Authentication"): every key made before is a write key */ `
  ALTER TABLE api_keys ADD COLUMN scope TEXT NOT NULL DEFAULT 'write' CHECK (scope IN ('read', 'write'));
  `,
);

MIGRATIONS.push(
  /* 10: people who sign in (docs/people.md): users, one-time links, sessions, failed sign-ins.
     Emails are unique across accounts (sign-in goes by email); secrets are kept as hashes. */ `
  CREATE TABLE users (
    id TEXT PRIMARY KEY,
    account_id TEXT NOT NULL REFERENCES accounts(id),
    email TEXT NOT NULL UNIQUE,
    role TEXT NOT NULL CHECK (role IN ('admin', 'editor', 'viewer')),
    password_hash TEXT,
    created_at INTEGER NOT NULL
  ) STRICT;
  CREATE TABLE sign_in_links (
    token_hash TEXT PRIMARY KEY,
    user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    expires_at INTEGER NOT NULL,
    used_at INTEGER
  ) STRICT;
  CREATE TABLE sessions (
    id_hash TEXT PRIMARY KEY,
    user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    data TEXT NOT NULL,
    expires_at INTEGER NOT NULL
  ) STRICT;
  CREATE INDEX sessions_by_user ON sessions (user_id);
  CREATE INDEX sign_in_links_by_user ON sign_in_links (user_id);
  CREATE TABLE sign_in_failures (
    email TEXT NOT NULL,
    at INTEGER NOT NULL
  ) STRICT;
  CREATE INDEX sign_in_failures_by_email ON sign_in_failures (email, at);
  `,
);

MIGRATIONS.push(
  /* 11: the audit log (docs/people.md, "Audit log"): who changed what, never with a secret */ `
  CREATE TABLE audit_log (
    account_id TEXT NOT NULL REFERENCES accounts(id),
    id TEXT NOT NULL,
    actor_type TEXT NOT NULL,
    actor_id TEXT NOT NULL,
    actor_label TEXT NOT NULL,
    action TEXT NOT NULL,
    object_id TEXT,
    at INTEGER NOT NULL,
    request_id TEXT NOT NULL,
    PRIMARY KEY (account_id, id)
  ) WITHOUT ROWID, STRICT;
  `,
);

MIGRATIONS.push(
  /* 12: a webhook's backlog (docs/webhooks.md, "Backlog"): its unfinished deliveries, counted and the
     oldest found within one small index */ `
  CREATE INDEX deliveries_pending_by_webhook ON deliveries (account_id, webhook_id, created_at)
    WHERE status = 'pending';
  `,
);

MIGRATIONS.push(
  /* 13: fair claims (docs/webhooks.md, "Throughput and fairness"). A lease is a row of its own: a
     claim inserts it into a small table instead of rewriting the delivery (and every index of
     deliveries with it), and what is in flight is counted there. Each webhook's due deliveries
     have an index of their own in due order, so a claim seeks per webhook instead of walking one
     queue of every account's work, and needs no table statistics to do so. */ `
  CREATE TABLE delivery_leases (
    delivery_id TEXT PRIMARY KEY,
    account_id TEXT NOT NULL,
    webhook_id TEXT NOT NULL,
    owner TEXT NOT NULL,
    until INTEGER NOT NULL
  ) WITHOUT ROWID, STRICT;
  INSERT INTO delivery_leases (delivery_id, account_id, webhook_id, owner, until)
    SELECT id, account_id, webhook_id, lease_owner, lease_until FROM deliveries
    WHERE status = 'pending' AND lease_owner IS NOT NULL AND lease_until IS NOT NULL;
  DROP INDEX deliveries_due;
  ALTER TABLE deliveries DROP COLUMN lease_owner;
  ALTER TABLE deliveries DROP COLUMN lease_until;
  CREATE INDEX deliveries_due_by_webhook ON deliveries (account_id, webhook_id, next_attempt_at)
    WHERE status = 'pending';
  `,
);

MIGRATIONS.push(
  /* 14: metrics and factor rules (docs/scoring.md, "Factors from metrics"): a customer's raw
     signals as points, one per metric and instant (a point written again at the same instant
     replaces it), read per customer and metric in time order; and the rules that derive a
     factor from a metric. Points go with their customer; the retention job prunes by age. */ `
  CREATE TABLE metric_points (
    account_id TEXT NOT NULL,
    customer_id TEXT NOT NULL,
    metric TEXT NOT NULL,
    at INTEGER NOT NULL,
    value REAL NOT NULL,
    PRIMARY KEY (account_id, customer_id, metric, at),
    FOREIGN KEY (account_id, customer_id) REFERENCES customers(account_id, id) ON DELETE CASCADE
  ) WITHOUT ROWID, STRICT;
  CREATE INDEX metric_points_by_at ON metric_points (at);
  CREATE TABLE factor_rules (
    account_id TEXT NOT NULL REFERENCES accounts(id),
    factor TEXT NOT NULL,
    metric TEXT NOT NULL,
    aggregate TEXT NOT NULL,
    window_days INTEGER,
    scale TEXT NOT NULL,
    max_age_days INTEGER,
    updated_at INTEGER NOT NULL,
    PRIMARY KEY (account_id, factor)
  ) WITHOUT ROWID, STRICT;
  `,
);

MIGRATIONS.push(
  /* 15: when each customer's derived factors may next change with no new point (a point leaving a
     window, the newest passing max_age_days): the rescore job takes only the customers due
     (docs/scoring.md, "Factors from metrics"). */ `
  CREATE TABLE rederive_due (
    account_id TEXT NOT NULL,
    customer_id TEXT NOT NULL,
    due_at INTEGER NOT NULL,
    PRIMARY KEY (account_id, customer_id),
    FOREIGN KEY (account_id, customer_id) REFERENCES customers(account_id, id) ON DELETE CASCADE
  ) WITHOUT ROWID, STRICT;
  CREATE INDEX rederive_due_by_time ON rederive_due (due_at);
  `,
);

MIGRATIONS.push(
  /* 16: every version explained, and overrides (docs/scoring.md, "Why this score"). A score keeps
     the score its factors give (computed, only while an override pins another), the override
     (JSON) and what its derived factors came from (inputs, JSON); each history version keeps
     those and the effective weights it was computed with. Older versions have them null. */ `
  ALTER TABLE health_scores ADD COLUMN computed REAL;
  ALTER TABLE health_scores ADD COLUMN override TEXT;
  ALTER TABLE health_scores ADD COLUMN inputs TEXT;
  ALTER TABLE score_history ADD COLUMN computed REAL;
  ALTER TABLE score_history ADD COLUMN override TEXT;
  ALTER TABLE score_history ADD COLUMN weights TEXT;
  ALTER TABLE score_history ADD COLUMN inputs TEXT;
  `,
);

MIGRATIONS.push(
  /* 17: what happened to each customer at a renewal (churned or retained), against which the score
     is measured (docs/scoring.md, "Does the score predict churn?"). Outcomes go with their customer. */ `
  CREATE TABLE outcomes (
    account_id TEXT NOT NULL,
    id TEXT NOT NULL,
    customer_id TEXT NOT NULL,
    outcome TEXT NOT NULL,
    at INTEGER NOT NULL,
    note TEXT,
    created_at INTEGER NOT NULL,
    PRIMARY KEY (account_id, id),
    FOREIGN KEY (account_id, customer_id) REFERENCES customers(account_id, id) ON DELETE CASCADE
  ) WITHOUT ROWID, STRICT;
  CREATE INDEX outcomes_by_customer ON outcomes (account_id, customer_id, at);
  `,
);

MIGRATIONS.push(
  /* 18: nothing on SQLite. PostgreSQL's history drops its foreign key to customers (a row lock per
     history row there; here the check is one probe of the customers' key), and its events drop
     events_by_account, which its feed does not read (SQLite's does). */ `
  SELECT 1;
  `,
);

MIGRATIONS.push(
  /* 19: nothing on SQLite. PostgreSQL's events drop their foreign key to accounts (a key-share
     lock on the account's row per event there; here one probe of the accounts' key). */ `
  SELECT 1;
  `,
);

MIGRATIONS.push(
  /* 20: the history is kept in the order it is written, with an index by customer and version
     (PostgreSQL's heap and primary key already work this way; docs/development.md, "The store").
     Clustered by customer (WITHOUT ROWID), each new version went into the middle of the table,
     beside that customer's earlier ones: a whole-account rescore wrote into every leaf page of the
     history, so its cost grew with the history's length (50,000 customers with 30 versions each:
     1.2 s of inserts and 1.8 s of commit for the next version, against 0.2 s and 0.5 s appended).
     The index also holds what the walks back through a customer's versions read (when, the score,
     the band), so the movers, the calibration and the trend of a segment read no row to find the
     version they want. It is not unique: a version is written only over the one before it
     (writeScores checks the stored version), which keeps versions unique without a second index
     on every insert. */ `
  CREATE TABLE score_history_appended (
    account_id TEXT NOT NULL,
    customer_id TEXT NOT NULL,
    version INTEGER NOT NULL,
    score REAL NOT NULL,
    status TEXT NOT NULL,
    factors TEXT NOT NULL,
    reason TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    computed REAL,
    override TEXT,
    weights TEXT,
    inputs TEXT,
    FOREIGN KEY (account_id, customer_id) REFERENCES customers(account_id, id) ON DELETE CASCADE
  ) STRICT;
  INSERT INTO score_history_appended
    SELECT account_id, customer_id, version, score, status, factors, reason, created_at,
      computed, override, weights, inputs
    FROM score_history ORDER BY created_at, account_id, customer_id, version;
  DROP TABLE score_history;
  ALTER TABLE score_history_appended RENAME TO score_history;
  CREATE INDEX score_history_by_customer
    ON score_history (account_id, customer_id, version, created_at, score, status);
  `,
);

MIGRATIONS.push(
  /* 21: nothing on SQLite, whose points are kept in their key's order with their values already.
     PostgreSQL's primary key of the points takes their value (INCLUDE), for index-only reads. */ `
  SELECT 1;
  `,
);

MIGRATIONS.push(
  /* 22: a factor rule may gate the status (docs/scoring.md, "Gates"): while the factor is below
     `below`, the customer's status is at most `status`. JSON text {"below", "status"}, or null. */ `
  ALTER TABLE factor_rules ADD COLUMN gate TEXT;
  `,
);

MIGRATIONS.push(
  /* 23: a webhook's secret rotated with an overlap (docs/webhooks.md, "Rotating the secret"): the
     previous secret keeps signing beside the new one until previous_secret_expires_at. */ `
  ALTER TABLE webhooks ADD COLUMN previous_secret TEXT;
  ALTER TABLE webhooks ADD COLUMN previous_secret_expires_at INTEGER;
  `,
);

MIGRATIONS.push(
  /* 24: a person's saved views of the portfolio (docs/api.md, "Saved views"): a name and the
     portfolio's query string, private to the person, removed with them. Listed newest first. */ `
  CREATE TABLE views (
    account_id TEXT NOT NULL REFERENCES accounts(id),
    user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    id TEXT NOT NULL,
    name TEXT NOT NULL,
    query TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    PRIMARY KEY (account_id, id)
  ) WITHOUT ROWID, STRICT;
  CREATE INDEX views_by_user ON views (user_id, created_at, id);
  `,
);

/*
 * 25: the customer's book fields (docs/api.md, "Customers"): its owner (an email, compared ignoring
 * case: customers_by_owner holds it lower-cased), its ARR in integer cents (sums stay exact), its
 * next renewal (epoch ms), its lifecycle and its parent in the account. No foreign key for the
 * parent: SQLite cannot add one to a table, and its ON DELETE SET NULL on (account_id, parent_id)
 * would clear the account too; deleteCustomer clears the children's parent_id itself. Every
 * customer's stored JSON gains the fields, so it is written again (customerJsonV25).
 */
MIGRATIONS.push((db) => {
  db.exec(`
    ALTER TABLE customers ADD COLUMN owner TEXT;
    ALTER TABLE customers ADD COLUMN arr_cents INTEGER;
    ALTER TABLE customers ADD COLUMN renewal_at INTEGER;
    ALTER TABLE customers ADD COLUMN lifecycle TEXT NOT NULL DEFAULT 'active';
    ALTER TABLE customers ADD COLUMN parent_id TEXT;
    CREATE INDEX customers_by_owner ON customers (account_id, lower(owner)) WHERE owner IS NOT NULL;
    CREATE INDEX customers_by_parent ON customers (account_id, parent_id) WHERE parent_id IS NOT NULL;
  `);
  const read = db.prepare(
    `SELECT account_id, id, name, email, owner, arr_cents, renewal_at, lifecycle, parent_id, metadata,
       created_at, updated_at FROM customers
     WHERE (account_id, id) > (?, ?) ORDER BY account_id, id LIMIT 5000`,
  );
  const write = db.prepare('UPDATE customers SET json = ? WHERE account_id = ? AND id = ?');
  let after: [string, string] = ['', ''];
  for (;;) {
    const rows = read.all(...after) as Record<string, string | number | null>[];
    for (const r of rows) {
      const json = customerJsonV25({
        id: r.id as string,
        name: r.name as string,
        email: r.email as string,
        owner: r.owner as string | null,
        arrCents: r.arr_cents as number | null,
        renewalAt: r.renewal_at as number | null,
        lifecycle: r.lifecycle as string,
        parentId: r.parent_id as string | null,
        metadata: r.metadata as string,
        createdAt: r.created_at as number,
        updatedAt: r.updated_at as number,
      });
      write.run(json, r.account_id as string, r.id as string);
    }
    const last = rows.at(-1);
    if (!last || rows.length < 5000) return;
    after = [last.account_id as string, last.id as string];
  }
});

/*
 * 26: the portfolio's book orders (docs/api.md, "Health scores"): sort=-arr walks
 * customers_by_arr from the highest ARR, sort=renewal_at customers_by_renewal from the soonest; the
 * customers without the field, listed last by id, are found by the same indexes (the field IS NULL,
 * then the id). The summary counts active customers and sums their ARR: customers_book holds both,
 * so it reads no customer row (a wide row, with its stored JSON): 69 ms instead of 139 ms at 100,000.
 * customers_churned tells at once whether an account has a churned customer at all: while it has
 * none, the distribution and the trend of its active customers are those of the whole account.
 */
MIGRATIONS.push(`
  CREATE INDEX customers_by_arr ON customers (account_id, arr_cents DESC, id);
  CREATE INDEX customers_by_renewal ON customers (account_id, renewal_at, id);
  CREATE INDEX customers_book ON customers (account_id, lifecycle, id, arr_cents);
  CREATE INDEX customers_churned ON customers (account_id) WHERE lifecycle <> 'active';
`);

/**
 * 27: a customer's lifecycle changes (docs/api.md, "Segments, trends and movers"): the trend counts
 * a customer on the days it was active, so it must know when it churned or came back. The triggers
 * write a row for every path that changes the column (PATCH, the batch, an import) and take the
 * rows away with the customer. Changes made before this migration were not kept: such a customer
 * counts in its present lifecycle on every day.
 */
MIGRATIONS.push(`
  CREATE TABLE lifecycle_changes (
    account_id TEXT NOT NULL,
    customer_id TEXT NOT NULL,
    at INTEGER NOT NULL,
    from_lifecycle TEXT NOT NULL,
    to_lifecycle TEXT NOT NULL
  ) STRICT;
  CREATE INDEX lifecycle_changes_by_customer ON lifecycle_changes (account_id, customer_id, at);
  CREATE INDEX lifecycle_changes_by_time ON lifecycle_changes (account_id, at);
  CREATE TRIGGER customers_lifecycle AFTER UPDATE OF lifecycle ON customers
  WHEN OLD.lifecycle IS NOT NEW.lifecycle
  BEGIN
    INSERT INTO lifecycle_changes (account_id, customer_id, at, from_lifecycle, to_lifecycle)
    VALUES (NEW.account_id, NEW.id, NEW.updated_at, OLD.lifecycle, NEW.lifecycle);
  END;
  CREATE TRIGGER customers_lifecycle_gone AFTER DELETE ON customers
  BEGIN
    DELETE FROM lifecycle_changes WHERE account_id = OLD.account_id AND customer_id = OLD.id;
  END;
`);

/**
 * 28: backfills (docs/api.md, "Backfill"): one row per run, its progress and its lease. The
 * partial unique index lets an account have one running at a time, checked by the insert itself;
 * backfills_leases finds the running ones whose process stopped renewing its lease.
 */
MIGRATIONS.push(`
  CREATE TABLE backfills (
    account_id TEXT NOT NULL,
    id TEXT NOT NULL,
    status TEXT NOT NULL,
    from_day INTEGER NOT NULL,
    customer_ids TEXT,
    customers_total INTEGER NOT NULL,
    customers_done INTEGER NOT NULL,
    versions_written INTEGER NOT NULL,
    cursor TEXT,
    started_at INTEGER NOT NULL,
    finished_at INTEGER,
    error TEXT,
    lease_owner TEXT NOT NULL,
    lease_expires_at INTEGER NOT NULL,
    PRIMARY KEY (account_id, id)
  ) STRICT;
  CREATE UNIQUE INDEX backfills_running ON backfills (account_id) WHERE status = 'running';
  CREATE INDEX backfills_leases ON backfills (lease_expires_at) WHERE status = 'running';
`);

/**
 * 29: sources (docs/api.md, "Sources"): a tool that sends data in its own format, with its
 * settings (config, JSON), the hash of the key or token its ingest URL is found by (unique across
 * accounts: the key names the source), the secret its signatures are checked with, and its
 * counters. source_log keeps each source's last messages for a person to read; source_messages
 * the message ids applied (a retry applies once); source_users a Segment user's group.
 */
MIGRATIONS.push(`
  CREATE TABLE sources (
    account_id TEXT NOT NULL,
    id TEXT NOT NULL,
    type TEXT NOT NULL,
    name TEXT NOT NULL,
    enabled INTEGER NOT NULL,
    config TEXT NOT NULL,
    key_hash TEXT,
    secret TEXT,
    received INTEGER NOT NULL DEFAULT 0,
    applied INTEGER NOT NULL DEFAULT 0,
    ignored INTEGER NOT NULL DEFAULT 0,
    refused INTEGER NOT NULL DEFAULT 0,
    last_received_at INTEGER,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    PRIMARY KEY (account_id, id)
  ) STRICT;
  CREATE UNIQUE INDEX sources_by_key ON sources (key_hash) WHERE key_hash IS NOT NULL;
  CREATE TABLE source_log (
    account_id TEXT NOT NULL,
    source_id TEXT NOT NULL,
    id TEXT NOT NULL,
    received_at INTEGER NOT NULL,
    kind TEXT NOT NULL,
    customer_id TEXT,
    result TEXT NOT NULL,
    reason TEXT,
    PRIMARY KEY (account_id, source_id, id)
  ) WITHOUT ROWID, STRICT;
  CREATE TABLE source_messages (
    account_id TEXT NOT NULL,
    source_id TEXT NOT NULL,
    message_id TEXT NOT NULL,
    received_at INTEGER NOT NULL,
    PRIMARY KEY (account_id, source_id, message_id)
  ) WITHOUT ROWID, STRICT;
  CREATE INDEX source_messages_by_time ON source_messages (received_at);
  CREATE TABLE source_users (
    account_id TEXT NOT NULL,
    source_id TEXT NOT NULL,
    user_id TEXT NOT NULL,
    group_id TEXT NOT NULL,
    PRIMARY KEY (account_id, source_id, user_id)
  ) WITHOUT ROWID, STRICT;
`);

/**
 * 30: tasks, notes and playbooks (docs/playbooks.md), with their customer (foreign keys). `sort` is a task's
 * place in an inbox (domain/tasks.ts, sortOf); the three indexes are the inbox of a person, of a
 * customer and of the team. `assignee_key` is the assignee lower-cased: emails are compared
 * ignoring case. tasks_open_per_playbook holds one open task per playbook and customer, and
 * tasks_per_trigger one task per playbook, customer and trigger key (a renewal date), whichever
 * process opens it. playbook_states holds the customers for which a playbook's metric trigger
 * held when last looked at: a task opens when it starts to hold.
 */
MIGRATIONS.push(`
  CREATE TABLE tasks (
    account_id TEXT NOT NULL,
    id TEXT NOT NULL,
    customer_id TEXT NOT NULL,
    title TEXT NOT NULL,
    body TEXT NOT NULL,
    status TEXT NOT NULL,
    assignee TEXT,
    assignee_key TEXT,
    due_at INTEGER,
    snoozed_until INTEGER,
    playbook_id TEXT,
    trigger_key TEXT,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    done_at INTEGER,
    created_by TEXT NOT NULL,
    sort INTEGER NOT NULL,
    PRIMARY KEY (account_id, id),
    FOREIGN KEY (account_id, customer_id) REFERENCES customers(account_id, id) ON DELETE CASCADE
  ) STRICT;
  CREATE INDEX tasks_by_assignee ON tasks (account_id, assignee_key, status, sort, id);
  CREATE INDEX tasks_by_customer ON tasks (account_id, customer_id, status, sort, id);
  CREATE INDEX tasks_by_status ON tasks (account_id, status, sort, id);
  CREATE UNIQUE INDEX tasks_open_per_playbook ON tasks (account_id, playbook_id, customer_id)
    WHERE status = 'open' AND playbook_id IS NOT NULL;
  CREATE UNIQUE INDEX tasks_per_trigger ON tasks (account_id, playbook_id, customer_id, trigger_key)
    WHERE trigger_key IS NOT NULL;
  CREATE TABLE notes (
    account_id TEXT NOT NULL,
    id TEXT NOT NULL,
    customer_id TEXT NOT NULL,
    body TEXT NOT NULL,
    author TEXT NOT NULL,
    author_id TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    PRIMARY KEY (account_id, id),
    FOREIGN KEY (account_id, customer_id) REFERENCES customers(account_id, id) ON DELETE CASCADE
  ) STRICT;
  CREATE INDEX notes_by_customer ON notes (account_id, customer_id, id);
  CREATE TABLE playbooks (
    account_id TEXT NOT NULL,
    id TEXT NOT NULL,
    name TEXT NOT NULL,
    enabled INTEGER NOT NULL,
    trigger_type TEXT NOT NULL,
    trigger_json TEXT NOT NULL,
    task TEXT NOT NULL,
    assignee TEXT,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    PRIMARY KEY (account_id, id)
  ) STRICT;
  CREATE TABLE playbook_states (
    account_id TEXT NOT NULL,
    playbook_id TEXT NOT NULL,
    customer_id TEXT NOT NULL,
    PRIMARY KEY (account_id, playbook_id, customer_id),
    FOREIGN KEY (account_id, customer_id) REFERENCES customers(account_id, id) ON DELETE CASCADE
  ) WITHOUT ROWID, STRICT;
`);

/**
 * 31: the Stripe intake (docs/sources.md, "Stripe"). A delivery names its source by id alone
 * (/ingest/stripe/{id}: the URL carries no account), so sources_by_id finds it, and makes an id
 * name one source across accounts. A Stripe event names a Stripe customer, which is the Vitals
 * customer whose metadata.stripe_customer_id holds it: customers_by_stripe_customer indexes that
 * value where it is set. An index on the expression, not a side table kept beside the metadata:
 * every path that writes metadata (PATCH, the batch, an import, a Segment group, this intake)
 * keeps it right without knowing of it, and the customers without the key cost it nothing. The
 * expression is spelled as the Dialect's stripeCustomerId is, or the planner would not use it.
 * stripe_subscriptions keeps each Stripe subscription of a customer: its status, its monthly
 * amount in major units, its current period's end, and the `created` of the last event applied
 * to it (an older event changes nothing: Stripe does not promise order). Rows leave with their
 * customer; a source's deletion leaves them, since they are the customer's, not the source's.
 */
MIGRATIONS.push(`
  CREATE UNIQUE INDEX sources_by_id ON sources (id);
  CREATE INDEX customers_by_stripe_customer
    ON customers (account_id, (metadata ->> '$.stripe_customer_id'), id)
    WHERE (metadata ->> '$.stripe_customer_id') IS NOT NULL;
  CREATE TABLE stripe_subscriptions (
    account_id TEXT NOT NULL,
    customer_id TEXT NOT NULL,
    subscription_id TEXT NOT NULL,
    source_id TEXT NOT NULL,
    status TEXT NOT NULL,
    monthly REAL NOT NULL,
    period_end INTEGER,
    event_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    PRIMARY KEY (account_id, customer_id, subscription_id),
    FOREIGN KEY (account_id, customer_id) REFERENCES customers(account_id, id) ON DELETE CASCADE
  ) WITHOUT ROWID, STRICT;
`);

/**
 * 32: mail to people and Slack-shaped webhooks (docs/operations.md, "Mail"; docs/webhooks.md,
 * "Slack"). A person's `digest` is their
 * choice of the daily digest. mail_outbox holds each mail from the transaction that caused it until
 * it is sent or given up: `next_attempt_at` is when it is next due (a sender that claims it moves
 * that on by its lease, so a sender that dies leaves it due again), null once finished.
 * mail_digests holds one row per person and UTC day whose digest was claimed: the primary key is
 * what lets one process alone send it. A webhook's `format` is the shape of its bodies.
 */
MIGRATIONS.push(`
  ALTER TABLE users ADD COLUMN digest TEXT NOT NULL DEFAULT 'off' CHECK (digest IN ('daily', 'off'));
  ALTER TABLE webhooks ADD COLUMN format TEXT NOT NULL DEFAULT 'standard' CHECK (format IN ('standard', 'slack'));
  CREATE TABLE mail_outbox (
    id TEXT PRIMARY KEY,
    account_id TEXT NOT NULL,
    kind TEXT NOT NULL,
    recipient TEXT NOT NULL,
    data TEXT NOT NULL,
    status TEXT NOT NULL,
    attempts INTEGER NOT NULL,
    next_attempt_at INTEGER,
    lease_owner TEXT,
    last_error TEXT,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
  ) STRICT;
  CREATE INDEX mail_outbox_due ON mail_outbox (next_attempt_at) WHERE status = 'pending';
  CREATE INDEX mail_outbox_finished ON mail_outbox (updated_at) WHERE status <> 'pending';
  CREATE TABLE mail_digests (
    user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    day TEXT NOT NULL,
    account_id TEXT NOT NULL,
    claimed_at INTEGER NOT NULL,
    PRIMARY KEY (user_id, day)
  ) WITHOUT ROWID, STRICT;
`);

/**
 * 33: what a customer's timeline reads that was not kept (docs/api.md, "Timeline"). score_drops
 * holds each drop alert a customer got (drop_alerts holds only the last, for the next one's
 * window). customer_changes holds each change of a customer's owner, arr, renewal_at, lifecycle or
 * parent_id, both sides of all five (a side that did not change is equal on both), written by a
 * trigger as lifecycle_changes is, so every path that writes a customer keeps it; the lifecycle
 * changes kept so far are copied in. source_activity holds each source message applied to a
 * customer, with what it changed, as long as events are kept (the retention job prunes both);
 * what the sources' logs still hold of such messages is copied in. override_actors holds who set
 * or removed an override, by the score version that did (the version's override keeps only a
 * label). tasks.done_by is who marked a task done, outcomes.created_by who recorded an outcome. tasks_by_created and notes_by_time read a
 * customer's tasks and notes newest first. All of it goes with its customer (foreign keys).
 */
MIGRATIONS.push(`
  ALTER TABLE tasks ADD COLUMN done_by TEXT;
  ALTER TABLE outcomes ADD COLUMN created_by TEXT;
  CREATE INDEX tasks_by_created ON tasks (account_id, customer_id, created_at, id);
  CREATE INDEX notes_by_time ON notes (account_id, customer_id, created_at, id);
  CREATE TABLE score_drops (
    account_id TEXT NOT NULL,
    customer_id TEXT NOT NULL,
    at INTEGER NOT NULL,
    from_score REAL,
    to_score REAL NOT NULL,
    peak REAL NOT NULL,
    PRIMARY KEY (account_id, customer_id, at),
    FOREIGN KEY (account_id, customer_id) REFERENCES customers(account_id, id) ON DELETE CASCADE
  ) WITHOUT ROWID, STRICT;
  CREATE TABLE override_actors (
    account_id TEXT NOT NULL,
    customer_id TEXT NOT NULL,
    version INTEGER NOT NULL,
    actor TEXT NOT NULL,
    PRIMARY KEY (account_id, customer_id, version),
    FOREIGN KEY (account_id, customer_id) REFERENCES customers(account_id, id) ON DELETE CASCADE
  ) WITHOUT ROWID, STRICT;
  CREATE TABLE customer_changes (
    seq INTEGER PRIMARY KEY,
    account_id TEXT NOT NULL,
    customer_id TEXT NOT NULL,
    at INTEGER NOT NULL,
    owner_from TEXT,
    owner_to TEXT,
    arr_from INTEGER,
    arr_to INTEGER,
    renewal_from INTEGER,
    renewal_to INTEGER,
    lifecycle_from TEXT,
    lifecycle_to TEXT,
    parent_from TEXT,
    parent_to TEXT,
    FOREIGN KEY (account_id, customer_id) REFERENCES customers(account_id, id) ON DELETE CASCADE
  ) STRICT;
  CREATE INDEX customer_changes_by_customer ON customer_changes (account_id, customer_id, at, seq);
  CREATE TRIGGER customers_changes
  AFTER UPDATE OF owner, arr_cents, renewal_at, lifecycle, parent_id ON customers
  WHEN OLD.owner IS NOT NEW.owner OR OLD.arr_cents IS NOT NEW.arr_cents
    OR OLD.renewal_at IS NOT NEW.renewal_at OR OLD.lifecycle IS NOT NEW.lifecycle
    OR OLD.parent_id IS NOT NEW.parent_id
  BEGIN
    INSERT INTO customer_changes (account_id, customer_id, at, owner_from, owner_to, arr_from, arr_to,
      renewal_from, renewal_to, lifecycle_from, lifecycle_to, parent_from, parent_to)
    VALUES (NEW.account_id, NEW.id, NEW.updated_at, OLD.owner, NEW.owner, OLD.arr_cents, NEW.arr_cents,
      OLD.renewal_at, NEW.renewal_at, OLD.lifecycle, NEW.lifecycle, OLD.parent_id, NEW.parent_id);
  END;
  INSERT INTO customer_changes (account_id, customer_id, at, lifecycle_from, lifecycle_to)
    SELECT account_id, customer_id, at, from_lifecycle, to_lifecycle FROM lifecycle_changes
    ORDER BY at;
  CREATE TABLE source_activity (
    account_id TEXT NOT NULL,
    customer_id TEXT NOT NULL,
    at INTEGER NOT NULL,
    id TEXT NOT NULL,
    source_id TEXT NOT NULL,
    source_name TEXT NOT NULL,
    source_type TEXT NOT NULL,
    kind TEXT NOT NULL,
    summary TEXT NOT NULL,
    PRIMARY KEY (account_id, customer_id, at, id),
    FOREIGN KEY (account_id, customer_id) REFERENCES customers(account_id, id) ON DELETE CASCADE
  ) WITHOUT ROWID, STRICT;
  CREATE INDEX source_activity_by_time ON source_activity (at);
  INSERT INTO source_activity (account_id, customer_id, at, id, source_id, source_name, source_type, kind, summary)
    SELECT l.account_id, l.customer_id, l.received_at, l.id, l.source_id, s.name, s.type, l.kind,
      COALESCE(l.reason, '')
    FROM source_log l JOIN sources s ON s.account_id = l.account_id AND s.id = l.source_id
    WHERE l.result = 'applied' AND l.customer_id IS NOT NULL
      AND EXISTS (SELECT 1 FROM customers c WHERE c.account_id = l.account_id AND c.id = l.customer_id);
`);
