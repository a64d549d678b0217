// A health score as the API sends it (the HealthScore schema of http/health-scores.ts), as JSON
// text built here: the stored factor text goes out as it is, and the text is the same wherever
// it is made, on the main thread for the answer or where the write runs for the answer that an
// Idempotency-Key replays. test/http/score-json.test.ts proves it byte-equal to the schema
// serializer's output.
import type { ScoreRecord } from '../domain/health.ts';
import { iso } from '../domain/time.ts';

export function healthScoreJson(s: ScoreRecord): string {
  const factors = s.factorsJson ?? JSON.stringify(s.factors);
  return `{"customer_id":${JSON.stringify(s.customerId)},"health_score":${JSON.stringify(s.score)},"factors":${factors},"status":"${s.status}","updated_at":"${iso(s.updatedAt)}"}`;
}
