// An Idempotency-Key's answer, stored by the write that gives it, in its transaction: a crash
// cannot commit the one without the other, so a retry never runs a write twice (docs/api.md,
// "Idempotency keys"). The write builds its answer's JSON text itself, byte-equal to what the
// route's response schema would serialize, since it runs where it cannot see the reply.

import { idempotencyInProgress } from '../domain/errors.ts';
import type { Tx } from '../store/store.ts';

/** An Idempotency-Key claim (http/idempotency.ts, claimToAnswer): the answer is stored in the write's transaction. */
export type Claim = { key: string; claimedAt: number } | undefined;

/** Stores the answer of the request's Idempotency-Key claim, in the write's transaction. */
export async function recordAnswer(
  tx: Tx,
  accountId: string,
  claim: Claim,
  body: string,
  status = 200,
): Promise<void> {
  if (!claim) return;
  if (!(await tx.recordIdempotentAnswer(accountId, claim.key, claim.claimedAt, { status, body }))) {
    throw idempotencyInProgress();
  }
}
