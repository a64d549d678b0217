// Sources' own writes, for their routes (http/sources.ts): a new source within the account's
// limit, a change made to the stored one in the same transaction, a deletion. Sent whole with
// store.run (docs/architecture.md, "A write"). The create answer carries the source's key, token
// or generated secret once; it is not stored for an Idempotency-Key's replay (the route's
// `shownOnce`), so these writes record no answer. docs/api.md, "Sources".
import jsonata from 'jsonata';
import { ApiError, notFound } from '../domain/errors.ts';
import { hashApiKey } from '../domain/ids.ts';
import {
  MAX_SOURCES,
  type SourceConfig,
  type SourceType,
  type WebhookMapping,
  type WebhookSignature,
} from '../domain/sources.ts';
import type { SourceRecord, Tx } from '../store/store.ts';
import { write } from '../store/write.ts';

/** A source's fields as a request gives them (POST's, or PATCH's, all optional). */
export interface SourceInput {
  name?: string;
  enabled?: boolean;
  trusted?: boolean;
  events?: Record<string, string | null>;
  signing_secret?: string;
  mapping?: WebhookMapping;
  signature?: (Omit<WebhookSignature, 'prefix'> & { prefix?: string; secret?: string }) | null;
}

/** Secrets made by the route, for the write to take if the source needs them (plain data: it may cross threads). */
export interface Fresh {
  /** A Segment write key (sk_…) or a webhook's URL token. */
  key: string;
  /** A webhook signature's secret, when the request gives none. */
  secret: string;
}

/** What the create or change shows once: the key or token, the generated secret. */
export interface Shown {
  writeKey?: string;
  token?: string;
  signatureSecret?: string;
}

const SETTINGS: Record<SourceType, readonly (keyof SourceInput)[]> = {
  segment: ['trusted', 'events'],
  stripe: ['signing_secret'],
  webhook: ['mapping', 'signature'],
};
const TYPED = ['trusted', 'events', 'signing_secret', 'mapping', 'signature'] as const;

/** Each expression of the mapping parses (400 naming the one that does not). */
export function checkMapping(mapping: WebhookMapping): void {
  for (const [field, expression] of Object.entries(mapping)) {
    try {
      jsonata(expression as string);
    } catch (err) {
      // JSONata throws a plain object with a message (and a code and position), not an Error.
      const message = (err as { message?: unknown } | null)?.message;
      const why = typeof message === 'string' ? message : String(err);
      throw new ApiError(
        'parameter_invalid',
        `The JSONata expression of ${field} does not parse: ${why}`,
        `mapping.${field}`,
      );
    }
  }
}

/**
 * The source `stored` (null: a new one of `type`) with `input` applied: a type's settings only on
 * its type (400 naming the field otherwise), what a new one of the type needs (400 when missing),
 * and the key, token or secret it then needs taken from `fresh` and reported in `shown`.
 */
export function applyInput(
  stored: SourceRecord | null,
  type: SourceType,
  input: SourceInput,
  fresh: Fresh,
  base: { id: string; now: number },
): { record: SourceRecord; shown: Shown } {
  for (const field of TYPED) {
    if (input[field] !== undefined && !SETTINGS[type].includes(field)) {
      const owner = (Object.keys(SETTINGS) as SourceType[]).find((t) => SETTINGS[t].includes(field));
      throw new ApiError(
        'parameter_invalid',
        `'${field}' is a setting of ${owner} sources; this one is a ${type} source.`,
        field,
      );
    }
  }
  const shown: Shown = {};
  let keyHash = stored?.keyHash ?? null;
  let secret = stored?.secret ?? null;
  let config: SourceConfig;
  if (type === 'segment') {
    const was = stored?.config.type === 'segment' ? stored.config.segment : { trusted: false, events: {} };
    config = {
      type,
      segment: { trusted: input.trusted ?? was.trusted, events: input.events ?? was.events },
    };
    if (!stored) {
      shown.writeKey = `sk_${fresh.key}`;
      keyHash = hashApiKey(shown.writeKey);
    }
  } else if (type === 'stripe') {
    if (!stored && input.signing_secret === undefined) {
      throw new ApiError(
        'parameter_missing',
        "A stripe source needs 'signing_secret', the endpoint's secret Stripe shows.",
        'signing_secret',
      );
    }
    config = { type };
    secret = input.signing_secret ?? secret;
  } else {
    const was = stored?.config.type === 'webhook' ? stored.config.webhook : null;
    const mapping = input.mapping ?? was?.mapping;
    if (!mapping) {
      throw new ApiError(
        'parameter_missing',
        "A webhook source needs 'mapping', with at least customer_id.",
        'mapping',
      );
    }
    if (input.mapping) checkMapping(input.mapping);
    let signature = was?.signature ?? null;
    if (input.signature !== undefined) {
      if (input.signature === null) {
        signature = null;
        secret = null;
      } else {
        const { secret: given, prefix, ...rest } = input.signature;
        signature = { ...rest, prefix: prefix ?? null };
        secret = given ?? fresh.secret;
        if (!given) shown.signatureSecret = fresh.secret;
      }
    }
    // Without a signature the URL carries a token (a new one when it had none); with one, none.
    if (signature !== null) keyHash = null;
    else if (keyHash === null) {
      shown.token = fresh.key;
      keyHash = hashApiKey(fresh.key);
    }
    config = { type, webhook: { mapping: { ...mapping }, signature } };
  }
  const record: SourceRecord = {
    id: base.id,
    type,
    name: input.name ?? stored?.name ?? '',
    enabled: input.enabled ?? stored?.enabled ?? true,
    config,
    keyHash,
    secret,
    stats: stored?.stats ?? { received: 0, applied: 0, ignored: 0, refused: 0, lastReceivedAt: null },
    createdAt: stored?.createdAt ?? base.now,
    updatedAt: base.now,
  };
  return { record, shown };
}

/** POST /api/sources: the new source and what it shows once; 400 when the account has MAX_SOURCES already. */
export const createSource = write(async function createSource(
  tx: Tx,
  accountId: string,
  id: string,
  type: SourceType,
  input: SourceInput,
  fresh: Fresh,
  now: number,
): Promise<{ source: SourceRecord; shown: Shown }> {
  const { record, shown } = applyInput(null, type, input, fresh, { id, now });
  if (!(await tx.insertSource(accountId, record, MAX_SOURCES))) {
    throw new ApiError(
      'parameter_invalid',
      `An account may have at most ${MAX_SOURCES} sources; delete one to add another.`,
    );
  }
  return { source: record, shown };
});

/** PATCH /api/sources/{id}: `input` applied to the stored source in this transaction; 404 for another account's. */
export const updateSource = write(async function updateSource(
  tx: Tx,
  accountId: string,
  id: string,
  input: SourceInput,
  fresh: Fresh,
  now: number,
): Promise<{ source: SourceRecord; shown: Shown }> {
  const stored = await tx.getSourceForUpdate(accountId, id);
  if (!stored) throw notFound.source(id);
  const { record, shown } = applyInput(stored, stored.type, input, fresh, { id, now });
  await tx.updateSource(accountId, record);
  return { source: record, shown };
});

/** DELETE /api/sources/{id}: with its log and what its intake remembered. */
export const deleteSource = write(async function deleteSource(
  tx: Tx,
  accountId: string,
  id: string,
): Promise<{ id: string; deleted: true }> {
  if (!(await tx.deleteSource(accountId, id))) throw notFound.source(id);
  return { id, deleted: true };
});
