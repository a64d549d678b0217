// Frozen: what shipped migrations run, as they ran. Live code changes (the customer JSON, the
// rollup's statements), but a migration must do on an old database exactly what it did when it
// shipped, so it takes its steps from here and never from the live modules. Append-only: a step
// that has shipped is never edited; a change is a new step for a new migration.

/** Migration 8 (both backends): score_days filled from the history kept so far. */
export const ROLLUP_FROM_HISTORY_V8 = `
  INSERT INTO score_days (account_id, day, slot, critical, at_risk, healthy, score_micros)
  SELECT account_id, day, 0,
    1 * SUM(CASE WHEN status = 'critical' THEN 1 ELSE 0 END - CASE WHEN prev_status = 'critical' THEN 1 ELSE 0 END),
    1 * SUM(CASE WHEN status = 'at_risk' THEN 1 ELSE 0 END - CASE WHEN prev_status = 'at_risk' THEN 1 ELSE 0 END),
    1 * SUM(CASE WHEN status = 'healthy' THEN 1 ELSE 0 END - CASE WHEN prev_status = 'healthy' THEN 1 ELSE 0 END),
    1 * SUM(micros - COALESCE(prev_micros, 0))
  FROM (
    SELECT account_id, created_at / 86400000 AS day, status, CAST(round(h.score * 1000000) AS bigint) AS micros,
      lag(status) OVER w AS prev_status, lag(CAST(round(h.score * 1000000) AS bigint)) OVER w AS prev_micros
    FROM score_history h WHERE true
    WINDOW w AS (PARTITION BY account_id, customer_id ORDER BY version)
  ) h
  WHERE true
  GROUP BY account_id, day
  ON CONFLICT (account_id, day, slot) DO UPDATE SET
    critical = score_days.critical + excluded.critical,
    at_risk = score_days.at_risk + excluded.at_risk,
    healthy = score_days.healthy + excluded.healthy,
    score_micros = score_days.score_micros + excluded.score_micros`;

/**
 * Migration 7 (SQLite): a customer as the API sent it then, from its stored fields, to fill
 * customers.api_json. The live serializer (src/api/customers.ts) must make the same text for every
 * customer, or the rows this filled are stale: test/http/customer-json.test.ts holds the two
 * equal, and says to add a migration that refills the column with a frozen copy of the new shape.
 */
export function customerJsonV7(
  id: string,
  name: string,
  email: string,
  metadata: string,
  createdAt: number,
  updatedAt: number,
): string {
  const iso = (ms: number) => new Date(ms).toISOString();
  return `{"id":${JSON.stringify(id)},"name":${JSON.stringify(name)},"email":${JSON.stringify(email)},"metadata":${metadata},"created_at":"${iso(createdAt)}","updated_at":"${iso(updatedAt)}"}`;
}

/**
 * Migration 25 (SQLite): a customer as the API sends it with the book fields (owner, arr,
 * renewal_at, lifecycle, parent_id; docs/api.md, "Customers"), to refill customers.json. ARR is
 * given in integer cents, the renewal in epoch ms.
 */
export function customerJsonV25(c: {
  id: string;
  name: string;
  email: string;
  owner: string | null;
  arrCents: number | null;
  renewalAt: number | null;
  lifecycle: string;
  parentId: string | null;
  metadata: string;
  createdAt: number;
  updatedAt: number;
}): string {
  const iso = (ms: number) => new Date(ms).toISOString();
  const orNull = (s: string | null) => (s === null ? 'null' : JSON.stringify(s));
  const arr = c.arrCents === null ? 'null' : String(c.arrCents / 100);
  const renewal = c.renewalAt === null ? 'null' : `"${iso(c.renewalAt)}"`;
  return `{"id":${JSON.stringify(c.id)},"name":${JSON.stringify(c.name)},"email":${JSON.stringify(c.email)},"owner":${orNull(c.owner)},"arr":${arr},"renewal_at":${renewal},"lifecycle":${JSON.stringify(c.lifecycle)},"parent_id":${orNull(c.parentId)},"metadata":${c.metadata},"created_at":"${iso(c.createdAt)}","updated_at":"${iso(c.updatedAt)}"}`;
}

/** The serializer the newest migration that filled customers.json used (SQLite). */
export const STORED_CUSTOMER_JSON = customerJsonV25;
