// A health score as the API sends it (the HealthScore schema of http/health-scores.ts), as JSON
// text built here: the stored factor text goes out as it is, and the text is the same wherever
// it is made, on the main thread for the answer or where the write runs for the answer that an
// Idempotency-Key replays. test/http/score-json.test.ts proves it byte-equal to the schema
// serializer's output.
import { computedOf, type ScoreRecord } from '../domain/health.ts';
import { iso } from '../domain/time.ts';

/** The HealthScore's `override` member: null, or the override with the computed score beneath it. */
function overrideJson(s: ScoreRecord): string {
  const o = s.override;
  if (!o) return 'null';
  return `{"health_score":${JSON.stringify(o.score)},"computed_score":${JSON.stringify(computedOf(s))},"reason":${JSON.stringify(o.reason)},"expires_at":"${iso(o.expiresAt)}","set_at":"${iso(o.setAt)}","set_by":${JSON.stringify(o.setBy)}}`;
}

export function healthScoreJson(s: ScoreRecord): string {
  const factors = s.factorsJson ?? JSON.stringify(s.factors);
  return `{"customer_id":${JSON.stringify(s.customerId)},"health_score":${JSON.stringify(s.score)},"factors":${factors},"status":"${s.status}","updated_at":"${iso(s.updatedAt)}","override":${overrideJson(s)}}`;
}
