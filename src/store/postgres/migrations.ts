// Append-only: a migration that has shipped is never edited; a change is a new entry. The
// versions match SQLite's, table for table.
//
// Typing follows SQLite's STRICT tables: ids and other keys are text COLLATE "C" (byte-wise, like
// SQLite's BINARY, whatever the database's locale), timestamps bigint epoch milliseconds, scores
// double precision, JSON documents json (stored as written, so key order round-trips; not jsonb).
import { ROLLUP_FROM_HISTORY_V8 } from '../migration-steps.ts';

export const MIGRATIONS: string[] = [
  /* 1: accounts, keys, customers */ `
  CREATE TABLE accounts (
    id text COLLATE "C" PRIMARY KEY,
    name text COLLATE "C" NOT NULL UNIQUE,
    created_at bigint NOT NULL
  );
  CREATE TABLE api_keys (
    id text COLLATE "C" PRIMARY KEY,
    account_id text COLLATE "C" NOT NULL REFERENCES accounts(id),
    key_hash text COLLATE "C" NOT NULL UNIQUE,
    prefix text NOT NULL,
    created_at bigint NOT NULL,
    revoked_at bigint
  );
  CREATE TABLE customers (
    account_id text COLLATE "C" NOT NULL REFERENCES accounts(id),
    id text COLLATE "C" NOT NULL,
    name text NOT NULL,
    email text NOT NULL,
    metadata json NOT NULL,
    created_at bigint NOT NULL,
    updated_at bigint NOT NULL,
    PRIMARY KEY (account_id, id)
  );
  `,
];

MIGRATIONS.push(
  /* 2: health scores, history, settings, the event outbox */ `
  CREATE TABLE account_settings (
    account_id text COLLATE "C" PRIMARY KEY REFERENCES accounts(id),
    weights json NOT NULL DEFAULT '{}',
    weights_updated_at bigint,
    healthy double precision NOT NULL DEFAULT 0.7,
    at_risk double precision NOT NULL DEFAULT 0.4,
    thresholds_updated_at bigint
  );
  CREATE TABLE health_scores (
    account_id text COLLATE "C" NOT NULL,
    customer_id text COLLATE "C" NOT NULL,
    score double precision NOT NULL,
    band smallint NOT NULL, -- 0 critical, 1 at_risk, 2 healthy
    factors json NOT NULL,
    version integer NOT NULL,
    updated_at bigint NOT NULL,
    PRIMARY KEY (account_id, customer_id),
    FOREIGN KEY (account_id, customer_id) REFERENCES customers(account_id, id) ON DELETE CASCADE
  );
  -- Bands are contiguous score ranges, so (band, score) order is score order: one index serves
  -- the portfolio with and without a status filter.
  CREATE INDEX health_scores_portfolio ON health_scores (account_id, band, score, customer_id);
  CREATE TABLE score_history (
    account_id text COLLATE "C" NOT NULL,
    customer_id text COLLATE "C" NOT NULL,
    version integer NOT NULL,
    score double precision NOT NULL,
    status text NOT NULL,
    factors json NOT NULL,
    reason text NOT NULL,
    created_at bigint NOT NULL,
    PRIMARY KEY (account_id, customer_id, version),
    FOREIGN KEY (account_id, customer_id) REFERENCES customers(account_id, id) ON DELETE CASCADE
  );
  CREATE TABLE events (
    seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    id text COLLATE "C" NOT NULL UNIQUE,
    account_id text COLLATE "C" NOT NULL REFERENCES accounts(id),
    type text COLLATE "C" NOT NULL,
    data json NOT NULL,
    created_at bigint NOT NULL
  );
  CREATE INDEX events_by_account ON events (account_id, seq);
  `,
);

MIGRATIONS.push(
  /* 3: webhooks and their deliveries */ `
  CREATE TABLE webhooks (
    account_id text COLLATE "C" NOT NULL REFERENCES accounts(id),
    id text COLLATE "C" NOT NULL,
    url text NOT NULL,
    events json NOT NULL,
    description text,
    secret text NOT NULL,
    enabled boolean NOT NULL,
    disabled_reason text,
    created_at bigint NOT NULL,
    updated_at bigint NOT NULL,
    PRIMARY KEY (account_id, id)
  );
  CREATE TABLE webhook_subscriptions (
    account_id text COLLATE "C" NOT NULL,
    event_type text COLLATE "C" NOT NULL,
    webhook_id text COLLATE "C" NOT NULL,
    PRIMARY KEY (account_id, event_type, webhook_id),
    FOREIGN KEY (account_id, webhook_id) REFERENCES webhooks(account_id, id) ON DELETE CASCADE
  );
  CREATE TABLE deliveries (
    id text COLLATE "C" PRIMARY KEY,
    account_id text COLLATE "C" NOT NULL,
    webhook_id text COLLATE "C" NOT NULL,
    event_id text COLLATE "C" NOT NULL REFERENCES events(id),
    status text NOT NULL, -- pending, succeeded, failed
    attempts integer NOT NULL,
    next_attempt_at bigint,
    lease_owner text,
    lease_until bigint,
    created_at bigint NOT NULL,
    updated_at bigint NOT NULL,
    FOREIGN KEY (account_id, webhook_id) REFERENCES webhooks(account_id, id) ON DELETE CASCADE
  );
  -- As on SQLite: the dispatchers' choice of due work is decided within the index.
  CREATE INDEX deliveries_due ON deliveries (next_attempt_at, lease_until, account_id, webhook_id)
    WHERE status = 'pending';
  CREATE INDEX deliveries_by_webhook ON deliveries (account_id, webhook_id, id);
  CREATE TABLE delivery_attempts (
    delivery_id text COLLATE "C" NOT NULL REFERENCES deliveries(id) ON DELETE CASCADE,
    attempt integer NOT NULL,
    started_at bigint NOT NULL,
    duration_ms integer NOT NULL,
    status_code integer,
    error text,
    response_body text,
    PRIMARY KEY (delivery_id, attempt)
  );
  `,
);

MIGRATIONS.push(
  /* 4: Idempotency-Key claims (status NULL while the request runs) */ `
  CREATE TABLE idempotency_keys (
    account_id text COLLATE "C" NOT NULL,
    key text COLLATE "C" NOT NULL,
    fingerprint text NOT NULL,
    status integer,
    body text,
    created_at bigint NOT NULL,
    PRIMARY KEY (account_id, key)
  );
  CREATE INDEX idempotency_keys_by_age ON idempotency_keys (created_at);
  `,
);

MIGRATIONS.push(
  /* 5: retention finds an event's deliveries by the event (and so does the foreign key's check) */ `
  CREATE INDEX deliveries_by_event ON deliveries (event_id);
  `,
);

MIGRATIONS.push(
  /* 6: the events feed in an order no later commit can slip in before (docs/api.md, "Events"):
     by the writing transaction's id, then seq. Rows written before this version count as
     transaction 0: a constant default adds the column without rewriting the table, and the
     default for new rows is set after. events_by_account stays for processes of the previous
     version during a rolling upgrade. */ `
  ALTER TABLE events ADD COLUMN xid xid8 NOT NULL DEFAULT '0';
  ALTER TABLE events ALTER COLUMN xid SET DEFAULT pg_current_xact_id();
  CREATE INDEX events_feed ON events (account_id, xid, seq);
  `,
);

MIGRATIONS.push(
  /* 7: nothing on PostgreSQL; SQLite's list pages keep each customer's JSON with its row */ `
  SELECT 1;
  `,
);

MIGRATIONS.push(
  /* 8: segments, trends, movers and drop alerts (docs/operations.md, "The trend rollup"): what each
     UTC day changed in the portfolio, filled from the history kept so far; the drop alert rule
     with the other settings; each customer's last drop alert. */ `
  CREATE TABLE score_days (
    account_id text COLLATE "C" NOT NULL,
    day integer NOT NULL, -- UTC days since 1970-01-01
    slot smallint NOT NULL, -- writers on different connections add to different rows
    critical integer NOT NULL,
    at_risk integer NOT NULL,
    healthy integer NOT NULL,
    score_micros bigint NOT NULL,
    PRIMARY KEY (account_id, day, slot)
  );
  CREATE TABLE drop_alerts (
    account_id text COLLATE "C" NOT NULL,
    customer_id text COLLATE "C" NOT NULL,
    alerted_at bigint NOT NULL,
    PRIMARY KEY (account_id, customer_id),
    FOREIGN KEY (account_id, customer_id) REFERENCES customers(account_id, id) ON DELETE CASCADE
  );
  ALTER TABLE account_settings ADD COLUMN drop_delta double precision;
  ALTER TABLE account_settings ADD COLUMN drop_days integer;
  ALTER TABLE account_settings ADD COLUMN alerts_updated_at bigint;
  ${ROLLUP_FROM_HISTORY_V8};
  `,
);

MIGRATIONS.push(
  /* 9: API keys have a scope (docs/api.md, "Authentication"): every key made before is a write key */ `
  ALTER TABLE api_keys ADD COLUMN scope text NOT NULL DEFAULT 'write' CHECK (scope IN ('read', 'write'));
  `,
);

MIGRATIONS.push(
  /* 10: people who sign in (docs/people.md): users, one-time links, sessions, failed sign-ins.
     Emails are unique across accounts (sign-in goes by email); secrets are kept as hashes. */ `
  CREATE TABLE users (
    id text COLLATE "C" PRIMARY KEY,
    account_id text COLLATE "C" NOT NULL REFERENCES accounts(id),
    email text COLLATE "C" NOT NULL UNIQUE,
    role text NOT NULL CHECK (role IN ('admin', 'editor', 'viewer')),
    password_hash text,
    created_at bigint NOT NULL
  );
  CREATE TABLE sign_in_links (
    token_hash text COLLATE "C" PRIMARY KEY,
    user_id text COLLATE "C" NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    expires_at bigint NOT NULL,
    used_at bigint
  );
  CREATE TABLE sessions (
    id_hash text COLLATE "C" PRIMARY KEY,
    user_id text COLLATE "C" NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    data text NOT NULL,
    expires_at bigint NOT NULL
  );
  CREATE INDEX sessions_by_user ON sessions (user_id);
  CREATE INDEX sign_in_links_by_user ON sign_in_links (user_id);
  CREATE TABLE sign_in_failures (
    email text COLLATE "C" NOT NULL,
    at bigint NOT NULL
  );
  CREATE INDEX sign_in_failures_by_email ON sign_in_failures (email, at);
  `,
);

MIGRATIONS.push(
  /* 11: the audit log (docs/people.md, "Audit log"): who changed what, never with a secret */ `
  CREATE TABLE audit_log (
    account_id text COLLATE "C" NOT NULL REFERENCES accounts(id),
    id text COLLATE "C" NOT NULL,
    actor_type text NOT NULL,
    actor_id text NOT NULL,
    actor_label text NOT NULL,
    action text NOT NULL,
    object_id text,
    at bigint NOT NULL,
    request_id text NOT NULL,
    PRIMARY KEY (account_id, id)
  );
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
    delivery_id text COLLATE "C" PRIMARY KEY,
    account_id text COLLATE "C" NOT NULL,
    webhook_id text COLLATE "C" NOT NULL,
    owner text COLLATE "C" NOT NULL,
    until bigint NOT NULL
  );
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
    account_id text COLLATE "C" NOT NULL,
    customer_id text COLLATE "C" NOT NULL,
    metric text COLLATE "C" NOT NULL,
    at bigint NOT NULL,
    value double precision NOT NULL,
    PRIMARY KEY (account_id, customer_id, metric, at),
    FOREIGN KEY (account_id, customer_id) REFERENCES customers(account_id, id) ON DELETE CASCADE
  );
  CREATE INDEX metric_points_by_at ON metric_points (at);
  CREATE TABLE factor_rules (
    account_id text COLLATE "C" NOT NULL REFERENCES accounts(id),
    factor text COLLATE "C" NOT NULL,
    metric text COLLATE "C" NOT NULL,
    aggregate text NOT NULL,
    window_days integer,
    scale json NOT NULL,
    max_age_days integer,
    updated_at bigint NOT NULL,
    PRIMARY KEY (account_id, factor)
  );
  `,
);

MIGRATIONS.push(
  /* 15: when each customer's derived factors may next change with no new point (a point leaving a
     window, the newest passing max_age_days): the rescore job takes only the customers due
     (docs/scoring.md, "Factors from metrics"). */ `
  CREATE TABLE rederive_due (
    account_id text COLLATE "C" NOT NULL,
    customer_id text COLLATE "C" NOT NULL,
    due_at bigint NOT NULL,
    PRIMARY KEY (account_id, customer_id),
    FOREIGN KEY (account_id, customer_id) REFERENCES customers(account_id, id) ON DELETE CASCADE
  );
  CREATE INDEX rederive_due_by_time ON rederive_due (due_at);
  `,
);

MIGRATIONS.push(
  /* 16: every version explained, and overrides (docs/scoring.md, "Why this score"). A score keeps
     the score its factors give (computed, only while an override pins another), the override
     (JSON) and what its derived factors came from (inputs, JSON); each history version keeps
     those and the effective weights it was computed with. Older versions have them null. */ `
  ALTER TABLE health_scores ADD COLUMN computed double precision, ADD COLUMN override json,
    ADD COLUMN inputs json;
  ALTER TABLE score_history ADD COLUMN computed double precision, ADD COLUMN override json,
    ADD COLUMN weights json, ADD COLUMN inputs json;
  `,
);

MIGRATIONS.push(
  /* 17: what happened to each customer at a renewal (churned or retained), against which the score
     is measured (docs/scoring.md, "Does the score predict churn?"). Outcomes go with their customer. */ `
  CREATE TABLE outcomes (
    account_id text COLLATE "C" NOT NULL,
    id text COLLATE "C" NOT NULL,
    customer_id text COLLATE "C" NOT NULL,
    outcome text NOT NULL,
    at bigint NOT NULL,
    note text,
    created_at bigint NOT NULL,
    PRIMARY KEY (account_id, id),
    FOREIGN KEY (account_id, customer_id) REFERENCES customers(account_id, id) ON DELETE CASCADE
  );
  CREATE INDEX outcomes_by_customer ON outcomes (account_id, customer_id, at);
  `,
);

MIGRATIONS.push(
  /* 18: less to maintain per score and event written (docs/postgresql.md, "Rescoring a whole
     account"). The history loses its foreign key to customers: its per-row check (a key-share lock
     written to the customer's row) cost a rescore of 100,000 customers a fifth of its database
     time, and never found anything: every history row is written with its score's row under the
     customer's lock or the account's exclusive lock, and deleteCustomer deletes the history itself.
     events_by_account goes: no statement has read it since version 6 (the feed reads events_feed),
     and every event inserted paid for it. */ `
  ALTER TABLE score_history DROP CONSTRAINT score_history_account_id_customer_id_fkey;
  DROP INDEX events_by_account;
  `,
);

MIGRATIONS.push(
  /* 19: events lose their foreign key to accounts (docs/postgresql.md, "Rescoring a whole
     account"). Its check ran per inserted event and took a key-share lock on the account's row:
     half of an event insert's time, and every writer of the account queued its lock on one row.
     It never found anything: no account is ever deleted, and every event is written with the
     account id its key authenticated. */ `
  ALTER TABLE events DROP CONSTRAINT events_account_id_fkey;
  `,
);

MIGRATIONS.push(
  /* 20: nothing on PostgreSQL. SQLite's history becomes a table in the order it is written with its
     key as an index, as a PostgreSQL heap with its primary key already is. */ `
  SELECT 1;
  `,
);

MIGRATIONS.push(
  /* 21: a metric's points read from the primary key alone (docs/postgresql.md, "Rescoring a whole
     account"). A rule's summary of a customer's window read each point's value from the heap,
     where points written day by day for every customer lie a page apart; with the value in the
     key's leaves (INCLUDE) the summaries and the newest-point probes are index-only scans, as
     SQLite's points (a table without rowid, ordered by the key) always were. Rebuilds the key:
     12 s per 10,000,000 points on the benchmark machine. */ `
  ALTER TABLE metric_points DROP CONSTRAINT metric_points_pkey,
    ADD CONSTRAINT metric_points_pkey PRIMARY KEY (account_id, customer_id, metric, at) INCLUDE (value);
  `,
);

MIGRATIONS.push(
  /* 22: a factor rule may gate the status (docs/scoring.md, "Gates"): while the factor is below
     `below`, the customer's status is at most `status`. JSON text {"below", "status"}, or null. */ `
  ALTER TABLE factor_rules ADD COLUMN gate text;
  `,
);

MIGRATIONS.push(
  /* 23: a webhook's secret rotated with an overlap (docs/webhooks.md, "Rotating the secret"): the
     previous secret keeps signing beside the new one until previous_secret_expires_at. */ `
  ALTER TABLE webhooks ADD COLUMN previous_secret text;
  ALTER TABLE webhooks ADD COLUMN previous_secret_expires_at bigint;
  `,
);

MIGRATIONS.push(
  /* 24: a person's saved views of the portfolio (docs/api.md, "Saved views"): a name and the
     portfolio's query string, private to the person, removed with them. Listed newest first. */ `
  CREATE TABLE views (
    account_id text COLLATE "C" NOT NULL REFERENCES accounts(id),
    user_id text COLLATE "C" NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    id text COLLATE "C" NOT NULL,
    name text NOT NULL,
    query text NOT NULL,
    created_at bigint NOT NULL,
    PRIMARY KEY (account_id, id)
  );
  CREATE INDEX views_by_user ON views (user_id, created_at, id);
  `,
);

MIGRATIONS.push(
  /* 25: the customer's book fields (docs/api.md, "Customers"): its owner (an email, compared
     ignoring case: customers_by_owner holds it lower-cased), its ARR in integer cents (sums stay
     exact), its next renewal (epoch ms), its lifecycle and its parent in the account. As on SQLite,
     no foreign key for the parent: a change of parent is checked under the account's exclusive
     lock, and deleteCustomer clears the children's parent_id itself. */ `
  ALTER TABLE customers ADD COLUMN owner text,
    ADD COLUMN arr_cents bigint,
    ADD COLUMN renewal_at bigint,
    ADD COLUMN lifecycle text NOT NULL DEFAULT 'active',
    ADD COLUMN parent_id text COLLATE "C";
  CREATE INDEX customers_by_owner ON customers (account_id, lower(owner)) WHERE owner IS NOT NULL;
  CREATE INDEX customers_by_parent ON customers (account_id, parent_id) WHERE parent_id IS NOT NULL;
  `,
);

MIGRATIONS.push(
  /* 26: the portfolio's book orders (docs/api.md, "Health scores"): sort=-arr walks
     customers_by_arr from the highest ARR, sort=renewal_at customers_by_renewal from the soonest; the
     customers without the field, listed last by id, by a partial index each: PostgreSQL does not
     take (field IS NULL, id) of the first two as the order of id. customers_churned tells at once
     whether an account has a churned customer at all: while it has none, the distribution and the
     trend of its active customers are those of the whole account. */ `
  CREATE INDEX customers_by_arr ON customers (account_id, arr_cents DESC, id);
  CREATE INDEX customers_by_renewal ON customers (account_id, renewal_at, id);
  CREATE INDEX customers_without_arr ON customers (account_id, id) WHERE arr_cents IS NULL;
  CREATE INDEX customers_without_renewal ON customers (account_id, id) WHERE renewal_at IS NULL;
  CREATE INDEX customers_churned ON customers (account_id) WHERE lifecycle <> 'active';
  `,
  /* 27: a customer's lifecycle changes (docs/api.md, "Segments, trends and movers"): the trend
     counts a customer on the days it was active, so it must know when it churned or came back. The
     trigger writes a row for every path that changes the column (PATCH, the batch, an import); the
     rows go with the customer. Changes made before this migration were not kept: such a customer
     counts in its present lifecycle on every day. */ `
  CREATE TABLE lifecycle_changes (
    account_id text COLLATE "C" NOT NULL,
    customer_id text COLLATE "C" NOT NULL,
    at bigint NOT NULL,
    from_lifecycle text NOT NULL,
    to_lifecycle text NOT NULL,
    FOREIGN KEY (account_id, customer_id) REFERENCES customers (account_id, id) ON DELETE CASCADE
  );
  CREATE INDEX lifecycle_changes_by_customer ON lifecycle_changes (account_id, customer_id, at);
  CREATE INDEX lifecycle_changes_by_time ON lifecycle_changes (account_id, at);
  CREATE FUNCTION customers_lifecycle() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
    INSERT INTO lifecycle_changes (account_id, customer_id, at, from_lifecycle, to_lifecycle)
    VALUES (NEW.account_id, NEW.id, NEW.updated_at, OLD.lifecycle, NEW.lifecycle);
    RETURN NULL;
  END $$;
  CREATE TRIGGER customers_lifecycle AFTER UPDATE OF lifecycle ON customers
  FOR EACH ROW WHEN (OLD.lifecycle IS DISTINCT FROM NEW.lifecycle) EXECUTE FUNCTION customers_lifecycle();
  `,
  /* 28: backfills (docs/api.md, "Backfill"): one row per run, its progress and its lease. The
     partial unique index lets an account have one running at a time, checked by the insert itself;
     backfills_leases finds the running ones whose process stopped renewing its lease. */ `
  CREATE TABLE backfills (
    account_id text COLLATE "C" NOT NULL,
    id text COLLATE "C" NOT NULL,
    status text NOT NULL,
    from_day bigint NOT NULL,
    customer_ids text,
    customers_total bigint NOT NULL,
    customers_done bigint NOT NULL,
    versions_written bigint NOT NULL,
    cursor text COLLATE "C",
    started_at bigint NOT NULL,
    finished_at bigint,
    error text,
    lease_owner text NOT NULL,
    lease_expires_at bigint NOT NULL,
    PRIMARY KEY (account_id, id)
  );
  CREATE UNIQUE INDEX backfills_running ON backfills (account_id) WHERE status = 'running';
  CREATE INDEX backfills_leases ON backfills (lease_expires_at) WHERE status = 'running';
  `,
  /* 29: sources (docs/api.md, "Sources"): a tool that sends data in its own format, with its
     settings (config, JSON text), the hash of the key or token its ingest URL is found by (unique
     across accounts: the key names the source), the secret its signatures are checked with, and its
     counters. source_log keeps each source's last messages for a person to read; source_messages
     the message ids applied (a retry applies once); source_users a Segment user's group. */ `
  CREATE TABLE sources (
    account_id text COLLATE "C" NOT NULL,
    id text COLLATE "C" NOT NULL,
    type text NOT NULL,
    name text NOT NULL,
    enabled boolean NOT NULL,
    config text NOT NULL,
    key_hash text,
    secret text,
    received bigint NOT NULL DEFAULT 0,
    applied bigint NOT NULL DEFAULT 0,
    ignored bigint NOT NULL DEFAULT 0,
    refused bigint NOT NULL DEFAULT 0,
    last_received_at bigint,
    created_at bigint NOT NULL,
    updated_at bigint NOT NULL,
    PRIMARY KEY (account_id, id)
  );
  CREATE UNIQUE INDEX sources_by_key ON sources (key_hash) WHERE key_hash IS NOT NULL;
  CREATE TABLE source_log (
    account_id text COLLATE "C" NOT NULL,
    source_id text COLLATE "C" NOT NULL,
    id text COLLATE "C" NOT NULL,
    received_at bigint NOT NULL,
    kind text NOT NULL,
    customer_id text,
    result text NOT NULL,
    reason text,
    PRIMARY KEY (account_id, source_id, id)
  );
  CREATE TABLE source_messages (
    account_id text COLLATE "C" NOT NULL,
    source_id text COLLATE "C" NOT NULL,
    message_id text COLLATE "C" NOT NULL,
    received_at bigint NOT NULL,
    PRIMARY KEY (account_id, source_id, message_id)
  );
  CREATE INDEX source_messages_by_time ON source_messages (received_at);
  CREATE TABLE source_users (
    account_id text COLLATE "C" NOT NULL,
    source_id text COLLATE "C" NOT NULL,
    user_id text COLLATE "C" NOT NULL,
    group_id text COLLATE "C" NOT NULL,
    PRIMARY KEY (account_id, source_id, user_id)
  );
  `,
  /* 30: tasks, notes and playbooks (docs/playbooks.md), with their customer (foreign keys). `sort` is a task's
     place in an inbox (domain/tasks.ts, sortOf); the three indexes are the inbox of a person, of a
     customer and of the team. `assignee_key` is the assignee lower-cased: emails are compared
     ignoring case. tasks_open_per_playbook holds one open task per playbook and customer, and
     tasks_per_trigger one task per playbook, customer and trigger key (a renewal date), whichever
     process opens it. playbook_states holds the customers for which a playbook's metric trigger
     held when last looked at: a task opens when it starts to hold. */ `
  CREATE TABLE tasks (
    account_id text COLLATE "C" NOT NULL,
    id text COLLATE "C" NOT NULL,
    customer_id text COLLATE "C" NOT NULL,
    title text NOT NULL,
    body text NOT NULL,
    status text COLLATE "C" NOT NULL,
    assignee text,
    assignee_key text COLLATE "C",
    due_at bigint,
    snoozed_until bigint,
    playbook_id text COLLATE "C",
    trigger_key text COLLATE "C",
    created_at bigint NOT NULL,
    updated_at bigint NOT NULL,
    done_at bigint,
    created_by text NOT NULL,
    sort bigint NOT NULL,
    PRIMARY KEY (account_id, id),
    FOREIGN KEY (account_id, customer_id) REFERENCES customers (account_id, id) ON DELETE CASCADE
  );
  CREATE INDEX tasks_by_assignee ON tasks (account_id, assignee_key, status, sort, id);
  CREATE INDEX tasks_by_customer ON tasks (account_id, customer_id, status, sort, id);
  CREATE INDEX tasks_by_status ON tasks (account_id, status, sort, id);
  CREATE UNIQUE INDEX tasks_open_per_playbook ON tasks (account_id, playbook_id, customer_id)
    WHERE status = 'open' AND playbook_id IS NOT NULL;
  CREATE UNIQUE INDEX tasks_per_trigger ON tasks (account_id, playbook_id, customer_id, trigger_key)
    WHERE trigger_key IS NOT NULL;
  CREATE TABLE notes (
    account_id text COLLATE "C" NOT NULL,
    id text COLLATE "C" NOT NULL,
    customer_id text COLLATE "C" NOT NULL,
    body text NOT NULL,
    author text NOT NULL,
    author_id text COLLATE "C" NOT NULL,
    created_at bigint NOT NULL,
    updated_at bigint NOT NULL,
    PRIMARY KEY (account_id, id),
    FOREIGN KEY (account_id, customer_id) REFERENCES customers (account_id, id) ON DELETE CASCADE
  );
  CREATE INDEX notes_by_customer ON notes (account_id, customer_id, id);
  CREATE TABLE playbooks (
    account_id text COLLATE "C" NOT NULL,
    id text COLLATE "C" NOT NULL,
    name text NOT NULL,
    enabled boolean NOT NULL,
    trigger_type text NOT NULL,
    trigger_json text NOT NULL,
    task text NOT NULL,
    assignee text,
    created_at bigint NOT NULL,
    updated_at bigint NOT NULL,
    PRIMARY KEY (account_id, id)
  );
  CREATE TABLE playbook_states (
    account_id text COLLATE "C" NOT NULL,
    playbook_id text COLLATE "C" NOT NULL,
    customer_id text COLLATE "C" NOT NULL,
    PRIMARY KEY (account_id, playbook_id, customer_id),
    FOREIGN KEY (account_id, customer_id) REFERENCES customers (account_id, id) ON DELETE CASCADE
  );
  `,
  /* 31: the Stripe intake (docs/sources.md, "Stripe"). A delivery names its source by id alone
     (/ingest/stripe/{id}: the URL carries no account), so sources_by_id finds it, and makes an id
     name one source across accounts. A Stripe event names a Stripe customer, which is the Vitals
     customer whose metadata.stripe_customer_id holds it: customers_by_stripe_customer indexes that
     value where it is set. An index on the expression, not a side table kept beside the metadata:
     every path that writes metadata (PATCH, the batch, an import, a Segment group, this intake)
     keeps it right without knowing of it, and the customers without the key cost it nothing. The
     expression is spelled as the Dialect's stripeCustomerId is, or the planner would not use it;
     `->>` on a json value holding \u0000 anywhere fails, so such metadata is skipped (NULL), not a
     500 on every write of it.
     stripe_subscriptions keeps each Stripe subscription of a customer: its status, its monthly
     amount in major units, its current period's end, and the `created` of the last event applied
     to it (an older event changes nothing: Stripe does not promise order). Rows leave with their
     customer; a source's deletion leaves them, since they are the customer's, not the source's. */ `
  CREATE UNIQUE INDEX sources_by_id ON sources (id);
  CREATE INDEX customers_by_stripe_customer
    ON customers (account_id, (CASE WHEN strpos(metadata::text, '\\u0000') = 0 THEN metadata ->> 'stripe_customer_id' END), id)
    WHERE (CASE WHEN strpos(metadata::text, '\\u0000') = 0 THEN metadata ->> 'stripe_customer_id' END) IS NOT NULL;
  CREATE TABLE stripe_subscriptions (
    account_id text COLLATE "C" NOT NULL,
    customer_id text COLLATE "C" NOT NULL,
    subscription_id text COLLATE "C" NOT NULL,
    source_id text COLLATE "C" NOT NULL,
    status text NOT NULL,
    monthly double precision NOT NULL,
    period_end bigint,
    event_at bigint NOT NULL,
    updated_at bigint NOT NULL,
    PRIMARY KEY (account_id, customer_id, subscription_id),
    FOREIGN KEY (account_id, customer_id) REFERENCES customers (account_id, id) ON DELETE CASCADE
  );
  `,
  /* 32: mail to people and Slack-shaped webhooks (docs/operations.md, "Mail"; docs/webhooks.md,
     "Slack"). A person's `digest` is their
     choice of the daily digest. mail_outbox holds each mail from the transaction that caused it until
     it is sent or given up: `next_attempt_at` is when it is next due (a sender that claims it moves
     that on by its lease, so a sender that dies leaves it due again), null once finished; senders
     claim with FOR UPDATE SKIP LOCKED. mail_digests holds one row per person and UTC day whose digest
     was claimed: the primary key is what lets one process alone send it. A webhook's `format` is the
     shape of its bodies. */ `
  ALTER TABLE users ADD COLUMN digest text NOT NULL DEFAULT 'off' CHECK (digest IN ('daily', 'off'));
  ALTER TABLE webhooks ADD COLUMN format text NOT NULL DEFAULT 'standard' CHECK (format IN ('standard', 'slack'));
  CREATE TABLE mail_outbox (
    id text COLLATE "C" PRIMARY KEY,
    account_id text COLLATE "C" NOT NULL,
    kind text NOT NULL,
    recipient text NOT NULL,
    data text NOT NULL,
    status text NOT NULL,
    attempts integer NOT NULL,
    next_attempt_at bigint,
    lease_owner text,
    last_error text,
    created_at bigint NOT NULL,
    updated_at bigint NOT NULL
  );
  CREATE INDEX mail_outbox_due ON mail_outbox (next_attempt_at) WHERE status = 'pending';
  CREATE INDEX mail_outbox_finished ON mail_outbox (updated_at) WHERE status <> 'pending';
  CREATE TABLE mail_digests (
    user_id text COLLATE "C" NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    day text COLLATE "C" NOT NULL,
    account_id text COLLATE "C" NOT NULL,
    claimed_at bigint NOT NULL,
    PRIMARY KEY (user_id, day)
  );
  `,
  /* 33: what a customer's timeline reads that was not kept (docs/api.md, "Timeline"). score_drops
     holds each drop alert a customer got (drop_alerts holds only the last, for the next one's
     window). customer_changes holds each change of a customer's owner, arr, renewal_at, lifecycle
     or parent_id, both sides of all five (a side that did not change is equal on both), written by
     a trigger as lifecycle_changes is, so every path that writes a customer keeps it; the lifecycle
     changes kept so far are copied in. source_activity holds each source message applied to a
     customer, with what it changed, as long as events are kept (the retention job prunes both);
     what the sources' logs still hold of such messages is copied in. override_actors holds who set
     or removed an override, by the score version that did (the version's override keeps only a
     label). tasks.done_by is who marked a task done, outcomes.created_by who recorded an outcome. tasks_by_created and notes_by_time read a
     customer's tasks and notes newest first. All of it goes with its customer (foreign keys). */ `
  ALTER TABLE tasks ADD COLUMN done_by text;
  ALTER TABLE outcomes ADD COLUMN created_by text;
  CREATE INDEX tasks_by_created ON tasks (account_id, customer_id, created_at, id);
  CREATE INDEX notes_by_time ON notes (account_id, customer_id, created_at, id);
  CREATE TABLE score_drops (
    account_id text COLLATE "C" NOT NULL,
    customer_id text COLLATE "C" NOT NULL,
    at bigint NOT NULL,
    from_score double precision,
    to_score double precision NOT NULL,
    peak double precision NOT NULL,
    PRIMARY KEY (account_id, customer_id, at),
    FOREIGN KEY (account_id, customer_id) REFERENCES customers (account_id, id) ON DELETE CASCADE
  );
  CREATE TABLE override_actors (
    account_id text COLLATE "C" NOT NULL,
    customer_id text COLLATE "C" NOT NULL,
    version integer NOT NULL,
    actor text NOT NULL,
    PRIMARY KEY (account_id, customer_id, version),
    FOREIGN KEY (account_id, customer_id) REFERENCES customers (account_id, id) ON DELETE CASCADE
  );
  CREATE TABLE customer_changes (
    seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    account_id text COLLATE "C" NOT NULL,
    customer_id text COLLATE "C" NOT NULL,
    at bigint NOT NULL,
    owner_from text,
    owner_to text,
    arr_from bigint,
    arr_to bigint,
    renewal_from bigint,
    renewal_to bigint,
    lifecycle_from text,
    lifecycle_to text,
    parent_from text COLLATE "C",
    parent_to text COLLATE "C",
    FOREIGN KEY (account_id, customer_id) REFERENCES customers (account_id, id) ON DELETE CASCADE
  );
  CREATE INDEX customer_changes_by_customer ON customer_changes (account_id, customer_id, at, seq);
  CREATE FUNCTION customers_changes() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
    INSERT INTO customer_changes (account_id, customer_id, at, owner_from, owner_to, arr_from, arr_to,
      renewal_from, renewal_to, lifecycle_from, lifecycle_to, parent_from, parent_to)
    VALUES (NEW.account_id, NEW.id, NEW.updated_at, OLD.owner, NEW.owner, OLD.arr_cents, NEW.arr_cents,
      OLD.renewal_at, NEW.renewal_at, OLD.lifecycle, NEW.lifecycle, OLD.parent_id, NEW.parent_id);
    RETURN NULL;
  END $$;
  CREATE TRIGGER customers_changes
  AFTER UPDATE OF owner, arr_cents, renewal_at, lifecycle, parent_id ON customers
  FOR EACH ROW WHEN (OLD.owner IS DISTINCT FROM NEW.owner OR OLD.arr_cents IS DISTINCT FROM NEW.arr_cents
    OR OLD.renewal_at IS DISTINCT FROM NEW.renewal_at OR OLD.lifecycle IS DISTINCT FROM NEW.lifecycle
    OR OLD.parent_id IS DISTINCT FROM NEW.parent_id)
  EXECUTE FUNCTION customers_changes();
  INSERT INTO customer_changes (account_id, customer_id, at, lifecycle_from, lifecycle_to)
    SELECT account_id, customer_id, at, from_lifecycle, to_lifecycle FROM lifecycle_changes
    ORDER BY at;
  CREATE TABLE source_activity (
    account_id text COLLATE "C" NOT NULL,
    customer_id text COLLATE "C" NOT NULL,
    at bigint NOT NULL,
    id text COLLATE "C" NOT NULL,
    source_id text COLLATE "C" NOT NULL,
    source_name text NOT NULL,
    source_type text NOT NULL,
    kind text NOT NULL,
    summary text NOT NULL,
    PRIMARY KEY (account_id, customer_id, at, id),
    FOREIGN KEY (account_id, customer_id) REFERENCES customers (account_id, id) ON DELETE CASCADE
  );
  CREATE INDEX source_activity_by_time ON source_activity (at);
  INSERT INTO source_activity (account_id, customer_id, at, id, source_id, source_name, source_type, kind, summary)
    SELECT l.account_id, l.customer_id, l.received_at, l.id, l.source_id, s.name, s.type, l.kind,
      COALESCE(l.reason, '')
    FROM source_log l JOIN sources s ON s.account_id = l.account_id AND s.id = l.source_id
    WHERE l.result = 'applied' AND l.customer_id IS NOT NULL
      AND EXISTS (SELECT 1 FROM customers c WHERE c.account_id = l.account_id AND c.id = l.customer_id);
  `,
);
