// The Vitals API as the dashboard uses it: JSON over fetch with the session's API key.
// Every failure becomes an ApiError carrying the envelope's message, which the pages show as is.
// The API's shapes are the typed client's (`vitals/client`, src/client/types.ts), which takes them
// from the route schemas: the dashboard cannot drift from what the server sends.
import type {
  AlertsSettings,
  Delivery,
  EventType,
  FactorRule,
  FactorRuleInput,
  FactorRulePreview,
  Movers,
  OutcomeKind,
  Playbook,
  PlaybookCreate,
  PlaybookTrigger,
  Status,
  ThresholdsSettings,
  Webhook as WebhookOnly,
  WebhookWithBacklog,
  WebhookWithSecret,
  WeightsPreview,
  WeightsSettings,
} from 'vitals/client';

export const STATUSES = ['critical', 'at_risk', 'healthy'] as const satisfies readonly Status[];

/** The event types of src/domain/events.ts that a webhook can subscribe to. */
export const EVENT_TYPES = [
  'customer.created',
  'customer.updated',
  'customer.deleted',
  'customer.health_score.updated',
  'customer.status.changed',
  'customer.health_score.dropped',
] as const satisfies readonly EventType[];

/** The event of POST /api/webhooks/{id}/test: sent to that webhook alone, never subscribed to. */
export const TEST_EVENT_TYPE = 'webhook.test';

export type {
  Backfill,
  Calibration,
  Customer,
  Delivery,
  Distribution,
  ExplainedFactor,
  Explanation,
  HealthScore,
  HistoryEntry,
  MetricName,
  MetricPoint,
  Note,
  Outcome,
  OutcomeCreate as OutcomeInput,
  OutcomeKind,
  Override,
  OverrideParams as OverrideInput,
  Page,
  PortfolioEntry,
  Source,
  SourceActivity,
  SourceCreate,
  SourceCreated,
  SourceLogEntry,
  Status,
  Summary,
  Task,
  TaskCreate,
  TaskUpdate,
  TimelineEntry,
  TimelineType,
} from 'vitals/client';
export type { Playbook, PlaybookCreate, PlaybookTrigger };
export type Mover = Movers['data'][number];
export type Alerts = AlertsSettings;
export type WeightsAnswer = WeightsSettings;
export type Thresholds = ThresholdsSettings;
export type Preview = WeightsPreview;
export type { FactorRule, FactorRuleInput, FactorRulePreview };
/** A webhook as any of its answers has it: the secret only from create and rotate-secret, the backlog only from retrieve. */
export type Webhook = WebhookOnly & Partial<WebhookWithSecret & WebhookWithBacklog>;
export type Attempt = Delivery['attempts'][number];

/** What happened at a renewal, in the order the outcome form offers them. */
export const OUTCOME_KINDS = ['retained', 'churned'] as const satisfies readonly OutcomeKind[];

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

/** What each key of this tab turned out to be: may it change the account (a write key) or not (a read key). */
const keyWrites = new Map<string, Promise<boolean>>();

/**
 * Whether this session may change the account (start a backfill, say), for controls that a read key
 * must not be offered. A person: their role, as can() says. A key: the dashboard is not told its
 * scope, so it asks for the audit log's first entry, which admins and write keys alone may read
 * (docs/people.md, "Roles"), the same ones who may change the account: a read key is refused it
 * with 403. Asked once per key; any other failure leaves the control shown (the API decides).
 */
export function mayAdminister(): Promise<boolean> {
  const key = session.key;
  if (key === null) return Promise.resolve(can('administer'));
  let known = keyWrites.get(key);
  if (!known) {
    known = request('GET', '/api/audit-log?limit=1').then(
      () => true,
      (err) => {
        const refused = err instanceof ApiError && err.status === 403;
        if (!refused) keyWrites.delete(key);
        return !refused;
      },
    );
    keyWrites.set(key, known);
  }
  return known;
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
  put: <T>(path: string, body: unknown) => request<T>('PUT', path, body),
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
export const factorRulePath = (factor: string) =>
  `/api/settings/health-score/factors/${encodeURIComponent(factor)}`;
export const outcomesPath = (customerId: string) => `${customerPath(customerId)}/outcomes`;
export const webhookPath = (id: string) => `/api/webhooks/${encodeURIComponent(id)}`;
export const sourcePath = (id: string) => `/api/sources/${encodeURIComponent(id)}`;
export const taskPath = (id: string) => `/api/tasks/${encodeURIComponent(id)}`;
export const notePath = (id: string) => `/api/notes/${encodeURIComponent(id)}`;
export const playbookPath = (id: string) => `/api/playbooks/${encodeURIComponent(id)}`;

/** The signed-in person as GET /api/me answers (docs/api.md, "Saved views"): with their digest choice. */
export interface Me extends User {
  digest: 'daily' | 'off';
}

/** Sends one webhook.test event to the webhook; the answer is its delivery (pending, most likely). */
export const sendTestEvent = (webhookId: string) => api.post<Delivery>(`${webhookPath(webhookId)}/test`);
