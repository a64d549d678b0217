// The audit log (docs/people.md, "Audit log"): every successful change through /api is recorded
// with who made it (a key or a person), what it was and which object, never a body, a secret or
// a password. The score writes, single metric writes and whole-account rescores record it in their
// own transaction; the others as the answer goes out, just after the change has committed.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { newId } from '../domain/ids.ts';
import type { AuditEntry, Store } from '../store/store.ts';

/** Route (as registered) and method → the action recorded. Routes that change nothing are absent. */
const ACTIONS: Record<string, string> = {
  'POST /api/customers': 'customer.created',
  'PATCH /api/customers/:customer_id': 'customer.updated',
  'DELETE /api/customers/:customer_id': 'customer.deleted',
  'POST /api/customers/:customer_id/health-score': 'health_score.replaced',
  'PATCH /api/customers/:customer_id/health-score': 'health_score.merged',
  'PUT /api/customers/:customer_id/health-score/override': 'health_score.override_set',
  'DELETE /api/customers/:customer_id/health-score/override': 'health_score.override_removed',
  'POST /api/customers/:customer_id/outcomes': 'outcome.recorded',
  'DELETE /api/customers/:customer_id/outcomes/:outcome_id': 'outcome.deleted',
  'POST /api/outcomes/batch': 'outcomes.batch_recorded',
  'POST /api/customers/batch': 'customers.batch_upserted',
  'POST /api/health-scores/batch': 'health_scores.batch_updated',
  'POST /api/customers/:customer_id/metrics': 'metrics.recorded',
  'POST /api/metrics/batch': 'metrics.batch_recorded',
  'PATCH /api/settings/health-score/weights': 'weights.updated',
  'PATCH /api/settings/health-score/thresholds': 'thresholds.updated',
  'PATCH /api/settings/health-score/alerts': 'alerts.updated',
  'PUT /api/settings/health-score/factors/:factor': 'factor_rule.put',
  'DELETE /api/settings/health-score/factors/:factor': 'factor_rule.deleted',
  'POST /api/sources': 'source.created',
  'PATCH /api/sources/:source_id': 'source.updated',
  'DELETE /api/sources/:source_id': 'source.deleted',
  'POST /api/health-scores/backfill': 'backfill.started',
  'POST /api/customers/:customer_id/tasks': 'task.created',
  'PATCH /api/tasks/:task_id': 'task.updated',
  'DELETE /api/tasks/:task_id': 'task.deleted',
  'POST /api/customers/:customer_id/notes': 'note.created',
  'PATCH /api/notes/:note_id': 'note.updated',
  'DELETE /api/notes/:note_id': 'note.deleted',
  'POST /api/playbooks': 'playbook.created',
  'PATCH /api/playbooks/:playbook_id': 'playbook.updated',
  'DELETE /api/playbooks/:playbook_id': 'playbook.deleted',
  'POST /api/webhooks': 'webhook.created',
  'PATCH /api/webhooks/:webhook_id': 'webhook.updated',
  'DELETE /api/webhooks/:webhook_id': 'webhook.deleted',
  'POST /api/webhooks/:webhook_id/rotate-secret': 'webhook.secret_rotated',
  'POST /api/webhooks/:webhook_id/test': 'webhook.test_sent',
  'POST /api/webhooks/:webhook_id/deliveries/:delivery_id/retry': 'delivery.retried',
  'POST /api/users': 'user.created',
  'PATCH /api/users/:user_id': 'user.updated',
  'DELETE /api/users/:user_id': 'user.deleted',
};

/**
 * Routes whose writes record their entry in their own transaction (the score writes and single
 * metric writes, the busiest; the changes that rescore a whole account, which on SQLite the
 * writer's checkpoint may follow): the hook leaves them alone.
 */
const IN_TRANSACTION = new Set([
  'POST /api/customers/:customer_id/health-score',
  'PATCH /api/customers/:customer_id/health-score',
  'POST /api/customers/:customer_id/metrics',
  'PATCH /api/settings/health-score/weights',
  'PATCH /api/settings/health-score/thresholds',
  'PUT /api/settings/health-score/factors/:factor',
  'DELETE /api/settings/health-score/factors/:factor',
]);

/** The entry for this request's change, for a write that records it in its own transaction. */
export function auditEntry(req: FastifyRequest, objectId: string | null, at: number): AuditEntry | undefined {
  const action = ACTIONS[`${req.method} ${req.routeOptions.url}`];
  if (!action || !req.actor) return undefined;
  return { id: newId.audit(), actor: req.actor, action, objectId, at, requestId: req.id };
}

/** The object a change was about: a path id, or the id of what a create made. */
function objectOf(req: FastifyRequest, payload: unknown): string | null {
  const params = req.params as Record<string, string> | undefined;
  const id =
    params?.delivery_id ??
    params?.user_id ??
    params?.webhook_id ??
    params?.source_id ??
    params?.task_id ??
    params?.note_id ??
    params?.playbook_id ??
    params?.customer_id ??
    params?.factor;
  if (id !== undefined) return id;
  if (req.routeOptions.url?.startsWith('/api/settings/')) return null;
  if (typeof payload !== 'string' || payload.length > 1_000_000) return null;
  try {
    const body = JSON.parse(payload) as { id?: unknown; user?: { id?: unknown } };
    const made = body.id ?? body.user?.id;
    return typeof made === 'string' ? made : null;
  } catch {
    return null;
  }
}

export function registerAudit(api: FastifyInstance, store: Store, now: () => number): void {
  api.addHook('onSend', async (req: FastifyRequest, reply: FastifyReply, payload: unknown) => {
    const route = `${req.method} ${req.routeOptions.url}`;
    const action = IN_TRANSACTION.has(route) ? undefined : ACTIONS[route];
    // A replayed Idempotency-Key answer changed nothing this time.
    if (!action || reply.statusCode >= 300 || reply.getHeader('idempotent-replayed') || !req.actor) {
      return payload;
    }
    const entry = {
      id: newId.audit(),
      actor: req.actor,
      action,
      objectId: objectOf(req, payload),
      at: now(),
      requestId: req.id,
    };
    try {
      await store.appendAudit(req.accountId, entry);
    } catch (err) {
      // The change has committed: its answer must still go out (a client told 5xx would retry it).
      req.log.error(
        { err, audit: { action, objectId: entry.objectId } },
        'the audit log could not record a change',
      );
    }
    return payload;
  });
}
