// An account's settings: its weights, thresholds and drop alert rule (docs/scoring.md), one row
// written in place. A change takes the account's lock exclusively (sql-tx.ts, lockAccount).
import type { DropRule } from '../domain/alerts.ts';
import type { Thresholds, Weights } from '../domain/scoring.ts';
import type { Driver } from './driver.ts';
import { SETTINGS_COLUMNS, toSettings } from './rows.ts';

export interface Settings {
  weights: Weights;
  weightsUpdatedAt: number | null;
  thresholds: Thresholds;
  thresholdsUpdatedAt: number | null;
  /** The drop alert rule; null: off (docs/scoring.md, "Drop alerts"). */
  drop: DropRule | null;
  alertsUpdatedAt: number | null;
}

export interface SettingsReads {
  getSettings(accountId: string): Promise<Settings>;
}

/** In a transaction, where `getSettings` takes `forUpdate` too (store.ts, Tx). */
export interface SettingsWrites {
  putWeights(accountId: string, weights: Weights, now: number): Promise<void>;
  putThresholds(accountId: string, thresholds: Thresholds, now: number): Promise<void>;
  putAlerts(accountId: string, drop: DropRule | null, now: number): Promise<void>;
}

export async function getSettings(db: Driver, accountId: string): Promise<Settings> {
  return toSettings(
    await db.get(`SELECT ${SETTINGS_COLUMNS} FROM account_settings WHERE account_id = $1`, [accountId]),
  );
}

/** An account-settings column set, inserted or updated in place. */
const putSettings = (columns: string[]) =>
  `INSERT INTO account_settings (account_id, ${columns.join(', ')})
   VALUES ($1, ${columns.map((_, i) => `$${i + 2}`).join(', ')})
   ON CONFLICT (account_id) DO UPDATE SET ${columns.map((c) => `${c} = excluded.${c}`).join(', ')}`;

const PUT_WEIGHTS = putSettings(['weights', 'weights_updated_at']);
const PUT_THRESHOLDS = putSettings(['healthy', 'at_risk', 'thresholds_updated_at']);
const PUT_ALERTS = putSettings(['drop_delta', 'drop_days', 'alerts_updated_at']);

export async function putWeights(
  db: Driver,
  accountId: string,
  weights: Weights,
  now: number,
): Promise<void> {
  await db.run(PUT_WEIGHTS, [accountId, db.json(weights), now]);
}

export async function putThresholds(
  db: Driver,
  accountId: string,
  t: Thresholds,
  now: number,
): Promise<void> {
  await db.run(PUT_THRESHOLDS, [accountId, t.healthy, t.at_risk, now]);
}

export async function putAlerts(db: Driver, accountId: string, drop: DropRule | null, now: number) {
  await db.run(PUT_ALERTS, [accountId, drop?.delta ?? null, drop?.days ?? null, now]);
}
