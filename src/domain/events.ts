// Event types and payloads (docs/webhooks.md, "Event types and payloads"). Events are written to
// the outbox in the same transaction as the change that caused them.
import { newId } from './ids.ts';
import type { Factors, Status } from './scoring.ts';
import { iso } from './time.ts';

/** What a webhook may subscribe to. */
export const SUBSCRIBABLE_EVENT_TYPES = [
  'customer.created',
  'customer.updated',
  'customer.deleted',
  'customer.health_score.updated',
  'customer.status.changed',
  'customer.health_score.dropped',
  'task.created',
  'task.updated',
] as const;
export type SubscribableEventType = (typeof SUBSCRIBABLE_EVENT_TYPES)[number];

/** The shape of a webhook's bodies (docs/webhooks.md): `{type, data}`, or Slack's incoming-webhook JSON. */
export const WEBHOOK_FORMATS = ['standard', 'slack'] as const;
export type WebhookFormat = (typeof WEBHOOK_FORMATS)[number];

/** `webhook.test` goes only to the webhook it is sent to, never by subscription (docs/webhooks.md). */
export const TEST_EVENT_TYPE = 'webhook.test';
export const EVENT_TYPES = [...SUBSCRIBABLE_EVENT_TYPES, TEST_EVENT_TYPE] as const;
export type EventType = (typeof EVENT_TYPES)[number];

export interface ScoreChange {
  customerId: string;
  score: number;
  status: Status;
  factors: Factors;
  updatedAt: number;
  previous: { score: number; status: Status } | null;
}

export interface EventRecord {
  id: string;
  type: EventType;
  data: Record<string, unknown>;
  createdAt: number;
}

export const event = (type: EventType, data: Record<string, unknown>, createdAt: number): EventRecord => ({
  id: newId.event(),
  type,
  data,
  createdAt,
});

/**
 * customer.health_score.updated for every score update (a factor write always counts; a
 * recomputation only when the number moved); customer.status.changed only when the band moved.
 */
export function scoreEvents(c: ScoreChange, factorWrite: boolean): EventRecord[] {
  const updatedAt = iso(c.updatedAt);
  const events: EventRecord[] = [];
  if (factorWrite || c.previous?.score !== c.score) {
    events.push(
      event(
        'customer.health_score.updated',
        {
          customer_id: c.customerId,
          health_score: c.score,
          previous_score: c.previous?.score ?? null,
          factors: c.factors,
          updated_at: updatedAt,
          status: c.status,
        },
        c.updatedAt,
      ),
    );
  }
  if (c.previous?.status !== c.status) {
    events.push(
      event(
        'customer.status.changed',
        {
          customer_id: c.customerId,
          status: c.status,
          previous_status: c.previous?.status ?? null,
          health_score: c.score,
          updated_at: updatedAt,
        },
        c.updatedAt,
      ),
    );
  }
  return events;
}
