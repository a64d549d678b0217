// The drop alert rule's change, below HTTP (docs/api.md, "Settings"; the rule itself in
// docs/scoring.md, "Drop alerts"): a setting of the account that moves no score, so unlike the
// weights and thresholds (./rescore.ts) it recomputes nothing, and is a light write.
import type { DropRule } from '../domain/alerts.ts';
import { nextTimestamp } from '../domain/time.ts';
import type { Settings, Tx } from '../store/store.ts';
import { write } from '../store/write.ts';

/** PATCH /api/settings/health-score/alerts: sets the rule (null: off); the settings as saved. */
export const applyAlerts = write(async function applyAlerts(
  tx: Tx,
  accountId: string,
  drop: DropRule | null,
  clock: number,
): Promise<Settings> {
  const current = await tx.getSettings(accountId, { forUpdate: true });
  await tx.putAlerts(accountId, drop, nextTimestamp(clock, current.alertsUpdatedAt ?? 0));
  return tx.getSettings(accountId);
});
