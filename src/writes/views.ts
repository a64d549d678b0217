// A person's saved views, one write each, for their routes (http/views.ts): a new view, checked
// against the person's limit in the same transaction, and a deletion. Sent whole with store.run
// (docs/architecture.md, "A write"); the POST's write builds its answer's text and stores it for
// the request's Idempotency-Key. docs/api.md, "Saved views".
import { VIEWS_PER_PERSON, viewJson } from '../api/views.ts';
import { ApiError, notFound } from '../domain/errors.ts';
import { newId } from '../domain/ids.ts';
import type { Tx } from '../store/store.ts';
import { write } from '../store/write.ts';
import { type Claim, recordAnswer } from './answers.ts';

/**
 * POST /api/views: the person's new view, its answer's text (201), stored for the request's
 * Idempotency-Key. 400 when they have VIEWS_PER_PERSON already; 401 when they were removed meanwhile.
 */
export const createView = write(async function createView(
  tx: Tx,
  accountId: string,
  userId: string,
  input: { name: string; query: string },
  claim: Claim,
  now: number,
): Promise<string> {
  const view = { id: newId.view(), name: input.name, query: input.query, createdAt: now };
  const saved = await tx.insertView(accountId, userId, view, VIEWS_PER_PERSON);
  if (saved === 'full') {
    throw new ApiError(
      'parameter_invalid',
      `A person may keep at most ${VIEWS_PER_PERSON} views; delete one to save another.`,
      'name',
    );
  }
  if (saved === 'no_user') {
    throw new ApiError('session_missing', 'Sign in first: there is no session, or it has ended.');
  }
  const body = viewJson(view);
  await recordAnswer(tx, accountId, claim, body, 201);
  return body;
});

/** DELETE /api/views/:id: 404 view_not_found for an id that is not one of the person's views. */
export const deleteView = write(async function deleteView(
  tx: Tx,
  accountId: string,
  userId: string,
  id: string,
): Promise<{ id: string; deleted: true }> {
  if (!(await tx.deleteView(accountId, userId, id))) throw notFound.view(id);
  return { id, deleted: true };
});
