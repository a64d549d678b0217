// Who gets a dispatcher's free slots (docs/webhooks.md, "Throughput and fairness"): round-robin
// across the accounts with due work, then across each account's webhooks, within the limits on
// deliveries in flight per account and per webhook. Pure, so both stores share it and a test can
// take it apart.
import type { ClaimOptions } from '../store/store.ts';

/** A webhook, by its account, with due work waiting. */
export interface Ready {
  accountId: string;
  webhookId: string;
}

/** Deliveries in flight (leased, lease not run out) of one webhook, over every dispatcher; a webhook may appear more than once. */
export interface InFlight extends Ready {
  n: number;
}

const key = (accountId: string, webhookId: string) => `${accountId}\u0000${webhookId}`;

/** `list` rotated to begin with the first item whose id sorts after `after` (the one served last). */
function rotate<T>(list: T[], id: (t: T) => string, after: string | undefined): T[] {
  if (after === undefined) return list;
  const i = list.findIndex((t) => id(t) > after);
  return i <= 0 ? list : [...list.slice(i), ...list.slice(0, i)];
}

/**
 * The slots of one claim, in the order they are served: one per account per turn, each account's
 * turn going to its next webhook with room. A webhook is in the answer as often as it may take a
 * delivery; an account or webhook at its limit is passed over, so what is left goes to the others.
 */
export function shareSlots(
  ready: Ready[],
  inFlight: InFlight[],
  opts: Pick<ClaimOptions, 'limit' | 'perWebhook' | 'perAccount' | 'after'>,
): Ready[] {
  const busyWebhook = new Map<string, number>();
  const busyAccount = new Map<string, number>();
  for (const f of inFlight) {
    const k = key(f.accountId, f.webhookId);
    busyWebhook.set(k, (busyWebhook.get(k) ?? 0) + f.n);
    busyAccount.set(f.accountId, (busyAccount.get(f.accountId) ?? 0) + f.n);
  }
  const byAccount = new Map<string, Ready[]>();
  for (const r of [...ready].sort((a, b) =>
    a.webhookId < b.webhookId ? -1 : a.webhookId > b.webhookId ? 1 : 0,
  )) {
    const list = byAccount.get(r.accountId) ?? [];
    list.push(r);
    byAccount.set(r.accountId, list);
  }
  const accounts = rotate([...byAccount.keys()].sort(), (a) => a, opts.after?.account).map((accountId) => ({
    accountId,
    webhooks: rotate(byAccount.get(accountId) ?? [], (r) => r.webhookId, opts.after?.webhooks?.[accountId]),
    next: 0,
  }));
  const roomOf = (r: Ready) =>
    (opts.perWebhook.byWebhook?.[r.webhookId] ?? opts.perWebhook.default) -
    (busyWebhook.get(key(r.accountId, r.webhookId)) ?? 0);
  const served: Ready[] = [];
  let turns = accounts;
  while (served.length < opts.limit && turns.length > 0) {
    const stillServing: typeof accounts = [];
    for (const a of turns) {
      if (served.length === opts.limit) break;
      if ((busyAccount.get(a.accountId) ?? 0) >= opts.perAccount) continue;
      // The account's next webhook with room, in turn after the last one served.
      let pick: Ready | undefined;
      for (let k = 0; k < a.webhooks.length && !pick; k++) {
        const r = a.webhooks[(a.next + k) % a.webhooks.length] as Ready;
        if (roomOf(r) > 0) {
          pick = r;
          a.next = (a.next + k + 1) % a.webhooks.length;
        }
      }
      if (!pick) continue;
      served.push(pick);
      busyAccount.set(a.accountId, (busyAccount.get(a.accountId) ?? 0) + 1);
      const k = key(pick.accountId, pick.webhookId);
      busyWebhook.set(k, (busyWebhook.get(k) ?? 0) + 1);
      stillServing.push(a);
    }
    turns = stillServing;
  }
  return served;
}

/** How many of `served` each webhook has, in the order each first appears. */
export function quotas(served: Ready[]): (Ready & { quota: number })[] {
  const out = new Map<string, Ready & { quota: number }>();
  for (const r of served) {
    const k = key(r.accountId, r.webhookId);
    const q = out.get(k);
    if (q) q.quota++;
    else out.set(k, { ...r, quota: 1 });
  }
  return [...out.values()];
}

/**
 * After a round of a claim: what each webhook took is in flight now (added to `inFlight`); one
 * that took fewer than its quota has nothing more due. Answers the webhooks that took all of
 * theirs: they may share what the others left (all of `wanted` when nothing was left over).
 */
export function settleRound(
  wanted: (Ready & { quota: number })[],
  taken: Ready[],
  inFlight: InFlight[],
): Ready[] {
  const got = new Map<string, number>();
  for (const t of taken)
    got.set(key(t.accountId, t.webhookId), (got.get(key(t.accountId, t.webhookId)) ?? 0) + 1);
  const full: Ready[] = [];
  for (const q of wanted) {
    const n = got.get(key(q.accountId, q.webhookId)) ?? 0;
    if (n > 0) inFlight.push({ accountId: q.accountId, webhookId: q.webhookId, n });
    if (n === q.quota) full.push(q);
  }
  return full;
}

/**
 * The chosen deliveries in serving order: the first of each webhook's in the order its turns came,
 * so the dispatcher sends (and learns where round-robin stopped) in the order the slots were shared.
 */
export function inServingOrder<T extends Ready>(served: Ready[], chosen: T[]): T[] {
  const queues = new Map<string, T[]>();
  for (const c of chosen) {
    const k = key(c.accountId, c.webhookId);
    const q = queues.get(k) ?? [];
    q.push(c);
    queues.set(k, q);
  }
  const out: T[] = [];
  for (const r of served) {
    const next = queues.get(key(r.accountId, r.webhookId))?.shift();
    if (next) out.push(next);
  }
  return out;
}
