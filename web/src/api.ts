// The Vitals API as the dashboard uses it: JSON over fetch with the session's API key.
// Every failure becomes an ApiError carrying the envelope's message, which the pages show as is.

export const STATUSES = ['critical', 'at_risk', 'healthy'] as const;
export type Status = (typeof STATUSES)[number];

/** The event types of src/domain/events.ts that a webhook can subscribe to. */
export const EVENT_TYPES = [
  'customer.created',
  'customer.updated',
  'customer.deleted',
  'customer.health_score.updated',
  'customer.status.changed',
  'customer.health_score.dropped',
] as const;

/** The event of POST /api/webhooks/{id}/test: sent to that webhook alone, never subscribed to. */
export const TEST_EVENT_TYPE = 'webhook.test';

export interface Customer {
  id: string;
  name: string;
  email: string;
  metadata: Record<string, unknown>;
  created_at: string;
  updated_at: string;
}

export interface HealthScore {
  customer_id: string;
  health_score: number;
  factors: Record<string, number>;
  status: Status;
  updated_at: string;
}

export interface HistoryEntry {
  version: number;
  health_score: number;
  status: Status;
  factors: Record<string, number>;
  reason: 'factors_updated' | 'weights_changed' | 'thresholds_changed';
  created_at: string;
}

export interface Summary {
  total: number;
  counts: Record<Status, number>;
  average: number | null;
  groups?: { value: unknown; total: number; counts: Record<Status, number>; average: number }[];
  groups_truncated?: boolean;
}

/** GET /api/health-scores/distribution: every current score in equal bins of [0, 1]. */
export interface Distribution {
  total: number;
  bins: { from: number; to: number; total: number; counts: Record<Status, number>; average: number | null }[];
}

/** A health score on the portfolio's list: with its customer's name. */
export interface PortfolioEntry extends HealthScore {
  name: string;
}

export interface Mover {
  customer_id: string;
  name: string;
  health_score: number;
  status: Status;
  baseline_score: number;
  change: number;
}

export interface Alerts {
  drop: { delta: number; days: number } | null;
  updated_at: string | null;
}

/**
 * A segment (docs/api.md, "Segments, trends and movers"): the customers whose metadata `key` is
 * `value` (a number or boolean as its JSON text).
 */
export interface Segment {
  key: string;
  value: string;
}

/** A segment as query parameters, for query(). */
export const segmentParams = (segment: Segment | null): Record<string, string> =>
  segment ? { [`metadata[${segment.key}]`]: segment.value } : {};

export interface WeightsAnswer {
  weights: Record<string, number>;
  updated_at: string | null;
}

export interface Thresholds {
  healthy: number;
  at_risk: number;
  updated_at: string | null;
}

export interface Preview {
  customers: number;
  scores_changed: number;
  band_changes: number;
  bands: Record<Status, number>;
}

export interface Webhook {
  id: string;
  url: string;
  events: string[];
  description: string | null;
  enabled: boolean;
  disabled_reason: string | null;
  created_at: string;
  updated_at: string;
  /** Only in the answers to create and rotate-secret. */
  secret?: string;
  /** The backlog: only in GET /api/webhooks/{id} (docs/webhooks.md, "Backlog"). */
  pending?: number;
  pending_truncated?: boolean;
  oldest_pending_at?: string | null;
}

export interface Attempt {
  attempt: number;
  started_at: string;
  duration_ms: number;
  status_code: number | null;
  error: string | null;
  response_body: string | null;
}

export interface Delivery {
  id: string;
  webhook_id: string;
  event_id: string;
  event_type: string;
  status: 'pending' | 'succeeded' | 'failed';
  attempt_count: number;
  next_attempt_at: string | null;
  created_at: string;
  updated_at: string;
  attempts: Attempt[];
}

export interface Page<T> {
  data: T[];
  has_more: boolean;
}

export class ApiError extends Error {
  readonly status: number;
  readonly code: string;
  readonly param: string | undefined;

  constructor(status: number, code: string, message: string, param?: string) {
    super(message);
    this.name = 'ApiError';
    this.status = status;
    this.code = code;
    this.param = param;
  }
}

const KEY = 'vitals.apiKey';

/** A person signed in with email and password (docs/people.md). */
export interface User {
  id: string;
  email: string;
  role: 'admin' | 'editor' | 'viewer';
  account: string;
}

let person: { user: User; csrf: string } | null = null;

/**
 * Who this tab is: an API key (sessionStorage, so it goes when the tab closes) or a person,
 * whose session is an HTTP-only cookie the page never sees; only its CSRF token is kept, in memory.
 */
export const session = {
  get key(): string | null {
    return sessionStorage.getItem(KEY);
  },
  get user(): User | null {
    return person?.user ?? null;
  },
  signIn(key: string): void {
    sessionStorage.setItem(KEY, key);
  },
  signedIn(user: User, csrf: string): void {
    person = { user, csrf };
  },
  signOut(): void {
    sessionStorage.removeItem(KEY);
    person = null;
  },
};

/**
 * What the signed-in role may do (the API refuses the rest anyway): customers and scores need
 * an editor, settings and webhooks an admin. A key may do what it may; the API says if not.
 */
export function can(what: 'edit customers' | 'administer'): boolean {
  const role = session.user?.role;
  if (!role) return true;
  return what === 'edit customers' ? role !== 'viewer' : role === 'admin';
}

let unauthorized: (err: ApiError) => void = () => {};
/** Called when the API refuses the session's key (revoked while signed in, say). */
export function onUnauthorized(handler: (err: ApiError) => void): void {
  unauthorized = handler;
}

export async function request<T>(
  method: string,
  path: string,
  body?: unknown,
  opts: { key?: string; signal?: AbortSignal; headers?: Record<string, string> } = {},
): Promise<T> {
  const key = opts.key ?? session.key;
  const headers: Record<string, string> = { ...opts.headers, accept: 'application/json' };
  // A person's requests ride on the session cookie; their changes carry its CSRF token.
  if (key !== null) headers.authorization = `Bearer ${key}`;
  else if (person && method !== 'GET') headers['x-csrf-token'] = person.csrf;
  if (body !== undefined) headers['content-type'] = 'application/json';
  let res: Response;
  try {
    res = await fetch(path, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: opts.signal,
    });
  } catch (err) {
    if ((err as Error).name === 'AbortError') throw err;
    throw new ApiError(
      0,
      'network_error',
      'Vitals could not be reached. Check your connection and try again.',
    );
  }
  const text = await res.text();
  let json: unknown;
  try {
    json = text === '' ? undefined : JSON.parse(text);
  } catch {
    json = undefined;
  }
  if (res.ok) return json as T;
  const envelope = (json as { error?: { code?: string; message?: string; param?: string } })?.error;
  const err = new ApiError(
    res.status,
    envelope?.code ?? 'unexpected_answer',
    envelope?.message ?? `Vitals answered ${res.status} ${res.statusText}.`,
    envelope?.param,
  );
  if (res.status === 401 && opts.key === undefined && path.startsWith('/api/')) unauthorized(err);
  throw err;
}

export const api = {
  get: <T>(path: string, signal?: AbortSignal) => request<T>('GET', path, undefined, { signal }),
  post: <T>(path: string, body?: unknown) => request<T>('POST', path, body),
  patch: <T>(path: string, body: unknown) => request<T>('PATCH', path, body),
  delete: <T>(path: string) => request<T>('DELETE', path),
};

/** "?a=1&b=x" from the defined values, or "". */
export function query(params: Record<string, string | number | null | undefined>): string {
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(params)) {
    if (value !== undefined && value !== null && value !== '') search.set(name, String(value));
  }
  const text = search.toString();
  return text ? `?${text}` : '';
}

export const customerPath = (id: string) => `/api/customers/${encodeURIComponent(id)}`;
export const webhookPath = (id: string) => `/api/webhooks/${encodeURIComponent(id)}`;

/** Sends one webhook.test event to the webhook; the answer is its delivery (pending, most likely). */
export const sendTestEvent = (webhookId: string) => api.post<Delivery>(`${webhookPath(webhookId)}/test`);
