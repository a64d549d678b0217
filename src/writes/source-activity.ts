// What a source's message applied to a customer, in words, as the customer's timeline keeps it
// (source_activity, docs/api.md, "Timeline"): the intakes (segment.ts, stripe.ts,
// webhook-intake.ts) say what each applied message changed, and keep it in the same transaction.
import { type CustomerFields, customerObject } from '../api/customers.ts';
import type { SourceActivityRecord, SourceRecord, Tx } from '../store/store.ts';

const BOOK = ['name', 'email', 'owner', 'arr', 'renewal_at', 'lifecycle', 'parent_id'] as const;

const shown = (v: unknown): string => (typeof v === 'string' ? v : JSON.stringify(v));

/**
 * What a write did to a customer, as the API names the fields: "created the customer", or "set
 * owner to ana@example.com, arr to 24000 and metadata plan"; empty when nothing changed.
 */
export function describeChange(before: CustomerFields | null, after: CustomerFields): string {
  if (before === null) return 'created the customer';
  const was = customerObject(before);
  const now = customerObject(after);
  const parts: string[] = [];
  for (const field of BOOK) {
    if (was[field] === now[field]) continue;
    parts.push(now[field] === null ? `${field} to null` : `${field} to ${shown(now[field])}`);
  }
  const keys = [...new Set([...Object.keys(was.metadata), ...Object.keys(now.metadata)])].filter(
    (k) => JSON.stringify(was.metadata[k]) !== JSON.stringify(now.metadata[k]),
  );
  if (keys.length > 0) parts.push(`metadata ${keys.join(', ')}`);
  return parts.length === 0 ? '' : `set ${listed(parts)}`;
}

/** "a", "a and b", "a, b and c". */
export const listed = (parts: readonly string[]): string =>
  parts.length <= 1 ? (parts[0] ?? '') : `${parts.slice(0, -1).join(', ')} and ${parts.at(-1)}`;

/** Metric values in words: "logins 3, seats 12". */
export const valuesText = (values: Record<string, number>): string =>
  Object.entries(values)
    .map(([name, value]) => `${name} ${value}`)
    .join(', ');

/** Keeps the activity of one request's applied messages (none: nothing written). */
export async function keepActivity(
  tx: Tx,
  accountId: string,
  source: SourceRecord,
  activity: readonly SourceActivityRecord[],
): Promise<void> {
  if (activity.length === 0) return;
  await tx.insertSourceActivity(accountId, { id: source.id, name: source.name, type: source.type }, activity);
}
