// A health score as the API sends it (the HealthScore schema of http/health-scores.ts), as JSON
// text built here: the stored factor text goes out as it is, and the text is the same wherever
// it is made, on the main thread for the answer or where the write runs for the answer that an
// Idempotency-Key replays. test/http/score-json.test.ts proves it byte-equal to the schema
// serializer's output.
import { computedOf, gatedByOf, type ScoreRecord } from '../domain/health.ts';
import type { Gates } from '../domain/scoring.ts';
import { iso } from '../domain/time.ts';

/** The HealthScore's `override` member: null, or the override with the computed score beneath it. */
function overrideJson(s: ScoreRecord): string {
  const o = s.override;
  if (!o) return 'null';
  return `{"health_score":${JSON.stringify(o.score)},"computed_score":${JSON.stringify(computedOf(s))},"reason":${JSON.stringify(o.reason)},"expires_at":"${iso(o.expiresAt)}","set_at":"${iso(o.setAt)}","set_by":${JSON.stringify(o.setBy)}}`;
}

/**
 * `gates`: the account's, for a score read from the store; a version just computed carries its
 * own `gatedBy` (health.ts), which stands without them.
 */
export function healthScoreJson(s: ScoreRecord, gates?: Gates): string {
  const factors = s.factorsJson ?? JSON.stringify(s.factors);
  const gatedBy = gates ? gatedByOf(s, gates) : (s.gatedBy ?? []);
  return `{"customer_id":${JSON.stringify(s.customerId)},"health_score":${JSON.stringify(s.score)},"factors":${factors},"status":"${s.status}","gated_by":${JSON.stringify(gatedBy)},"updated_at":"${iso(s.updatedAt)}","override":${overrideJson(s)}}`;
}
