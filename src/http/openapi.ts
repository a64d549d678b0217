// The OpenAPI document (/openapi.json, /docs) as the server behaves, not only as the route
// schemas say (docs/api.md, "OpenAPI"): every operation has an operationId and the security it
// takes (a bearer key or the session cookie under /api, nothing for signing in); every answer the
// plumbing can give is declared where it can be given (401, 403, 429, 503, 413/415, the
// Idempotency-Key 409), with the headers it carries; bodies that may be left out are optional;
// the metadata[KEY] filters are a described parameter; HEAD is listed beside GET; 405 is a
// documented response. The test suites hold every answer they receive against this document.
import type { SwaggerOptions } from '@fastify/swagger';
import type { FastifySchema, RouteOptions } from 'fastify';
import { READS } from '../domain/people.ts';
import { SESSION_COOKIE } from './sessions.ts';

/** Method and path (OpenAPI spelling) → operationId. A route missing here fails the OpenAPI test. */
const OPERATION_IDS: Record<string, string> = {
  'POST /auth/login': 'signIn',
  'GET /auth/session': 'getSession',
  'POST /auth/logout': 'signOut',
  'POST /auth/password': 'setPassword',
  'POST /auth/password/link': 'inspectSignInLink',
  'GET /healthz': 'getHealth',
  'GET /readyz': 'getReadiness',
  'GET /api/customers': 'listCustomers',
  'POST /api/customers': 'createCustomer',
  'GET /api/customers/{customer_id}': 'getCustomer',
  'PATCH /api/customers/{customer_id}': 'updateCustomer',
  'DELETE /api/customers/{customer_id}': 'deleteCustomer',
  'GET /api/customers/{customer_id}/rollup': 'getCustomerRollup',
  'GET /api/customers/{customer_id}/health-score': 'getHealthScore',
  'POST /api/customers/{customer_id}/health-score': 'replaceHealthScore',
  'PATCH /api/customers/{customer_id}/health-score': 'mergeHealthScore',
  'GET /api/customers/{customer_id}/health-score/history': 'listHealthScoreHistory',
  'GET /api/customers/{customer_id}/health-score/explanation': 'explainHealthScore',
  'PUT /api/customers/{customer_id}/health-score/override': 'setHealthScoreOverride',
  'DELETE /api/customers/{customer_id}/health-score/override': 'removeHealthScoreOverride',
  'POST /api/customers/{customer_id}/outcomes': 'recordOutcome',
  'GET /api/customers/{customer_id}/outcomes': 'listOutcomes',
  'DELETE /api/customers/{customer_id}/outcomes/{outcome_id}': 'deleteOutcome',
  'POST /api/outcomes/batch': 'recordOutcomesBatch',
  'GET /api/health-scores/calibration': 'getCalibration',
  'POST /api/customers/{customer_id}/metrics': 'recordMetrics',
  'GET /api/customers/{customer_id}/metrics': 'listMetrics',
  'POST /api/metrics/batch': 'recordMetricsBatch',
  'GET /api/metrics/names': 'listMetricNames',
  'GET /api/health-scores': 'listHealthScores',
  'GET /api/health-scores/summary': 'getHealthScoreSummary',
  'GET /api/health-scores/distribution': 'getHealthScoreDistribution',
  'GET /api/health-scores/trend': 'getHealthScoreTrend',
  'GET /api/health-scores/movers': 'listMovers',
  'POST /api/health-scores/backfill': 'startBackfill',
  'GET /api/health-scores/backfill': 'listBackfills',
  'GET /api/health-scores/backfill/{backfill_id}': 'getBackfill',
  'POST /api/sources': 'createSource',
  'GET /api/sources': 'listSources',
  'GET /api/sources/{source_id}': 'getSource',
  'PATCH /api/sources/{source_id}': 'updateSource',
  'DELETE /api/sources/{source_id}': 'deleteSource',
  'GET /api/sources/{source_id}/log': 'listSourceLog',
  'GET /api/customers/{customer_id}/source-activity': 'listCustomerSourceActivity',
  'POST /api/customers/{customer_id}/tasks': 'createTask',
  'GET /api/tasks': 'listTasks',
  'GET /api/tasks/{task_id}': 'getTask',
  'PATCH /api/tasks/{task_id}': 'updateTask',
  'DELETE /api/tasks/{task_id}': 'deleteTask',
  'POST /api/customers/{customer_id}/notes': 'createNote',
  'GET /api/customers/{customer_id}/notes': 'listNotes',
  'PATCH /api/notes/{note_id}': 'updateNote',
  'DELETE /api/notes/{note_id}': 'deleteNote',
  'GET /api/customers/{customer_id}/timeline': 'listCustomerTimeline',
  'GET /api/playbooks': 'listPlaybooks',
  'POST /api/playbooks': 'createPlaybook',
  'GET /api/playbooks/{playbook_id}': 'getPlaybook',
  'PATCH /api/playbooks/{playbook_id}': 'updatePlaybook',
  'DELETE /api/playbooks/{playbook_id}': 'deletePlaybook',
  'POST /v1/batch': 'segmentBatch',
  'POST /v1/track': 'segmentTrack',
  'POST /v1/identify': 'segmentIdentify',
  'POST /v1/group': 'segmentGroup',
  'POST /v1/page': 'segmentPage',
  'POST /v1/screen': 'segmentScreen',
  'POST /v1/alias': 'segmentAlias',
  'POST /ingest/stripe/{source_id}': 'ingestStripeEvent',
  'POST /ingest/webhook/{source_id}': 'ingestSignedWebhook',
  'POST /ingest/webhook/{source_id}/{token}': 'ingestTokenWebhook',
  'POST /api/customers/batch': 'upsertCustomersBatch',
  'POST /api/health-scores/batch': 'updateHealthScoresBatch',
  'GET /api/settings/health-score/weights': 'getWeights',
  'PATCH /api/settings/health-score/weights': 'updateWeights',
  'POST /api/settings/health-score/weights/preview': 'previewWeights',
  'GET /api/settings/health-score/thresholds': 'getThresholds',
  'PATCH /api/settings/health-score/thresholds': 'updateThresholds',
  'GET /api/settings/health-score/alerts': 'getAlerts',
  'PATCH /api/settings/health-score/alerts': 'updateAlerts',
  'GET /api/settings/health-score/factors': 'listFactorRules',
  'GET /api/settings/health-score/factors/{factor}': 'getFactorRule',
  'PUT /api/settings/health-score/factors/{factor}': 'putFactorRule',
  'POST /api/settings/health-score/factors/{factor}/preview': 'previewFactorRule',
  'DELETE /api/settings/health-score/factors/{factor}': 'deleteFactorRule',
  'GET /api/events': 'listEvents',
  'GET /api/events/{event_id}': 'getEvent',
  'GET /api/webhooks': 'listWebhooks',
  'POST /api/webhooks': 'createWebhook',
  'GET /api/webhooks/{webhook_id}': 'getWebhook',
  'PATCH /api/webhooks/{webhook_id}': 'updateWebhook',
  'DELETE /api/webhooks/{webhook_id}': 'deleteWebhook',
  'POST /api/webhooks/{webhook_id}/rotate-secret': 'rotateWebhookSecret',
  'POST /api/webhooks/{webhook_id}/test': 'sendTestEvent',
  'GET /api/webhooks/{webhook_id}/deliveries': 'listDeliveries',
  'POST /api/webhooks/{webhook_id}/deliveries/{delivery_id}/retry': 'retryDelivery',
  'GET /api/users': 'listUsers',
  'POST /api/users': 'createUser',
  'PATCH /api/users/{user_id}': 'updateUser',
  'DELETE /api/users/{user_id}': 'removeUser',
  'GET /api/audit-log': 'listAuditLog',
  'GET /api/me': 'getMe',
  'PATCH /api/me': 'updateMe',
  'GET /api/views': 'listViews',
  'POST /api/views': 'createView',
  'DELETE /api/views/{view_id}': 'deleteView',
};

/** Carries a route's segment filter from its schema to finish() (the plugin copies x- keys). */
const FILTER = 'x-metadata-filter';
const ERROR = { $ref: 'Error' };

const header = (description: string, schema: object = { type: 'string' }) => ({ ...schema, description });
const REQUEST_ID = header('The request id: the one sent (1-128 of A-Z a-z 0-9 . _ : -), or a new one.');
const RETRY_AFTER = header('Seconds to wait before trying again.', { type: 'integer', minimum: 0 });

/** The declared answer for `status`: the route's own, or the error envelope; with its headers. */
function answer(status: number, own: unknown, extra: Record<string, object> = {}): object {
  const headers: Record<string, object> = { 'X-Request-Id': REQUEST_ID, ...extra };
  if (status === 429 || status === 503) headers['Retry-After'] = RETRY_AFTER;
  if (status === 401) {
    headers['WWW-Authenticate'] = header('Bearer: how to authenticate (on /api).');
  }
  const schema = (own ?? ERROR) as Record<string, unknown>;
  return { ...schema, headers };
}

/** The statuses the plumbing gives on a route, beyond what its handler declares. */
function plumbingStatuses(method: string, url: string, route: RouteOptions): number[] {
  // 500 is the opaque envelope of a failure on our side: rare, never detailed, but it can happen anywhere.
  // So can a request Node's parser refuses before any route sees it: 400 invalid_request (not
  // well-formed HTTP/1.1) and 431 headers_too_large (docs/errors.md, "Malformed requests").
  const statuses = [400, 431, 500, 503];
  const writes = !READS.has(method);
  if (writes) statuses.push(413, 415);
  if (url.startsWith('/api/')) {
    statuses.push(401, 429);
    const area = route.config?.area;
    if (writes || area === 'people' || area === 'audit' || area === 'own') statuses.push(403);
    if (method === 'POST') statuses.push(409); // Idempotency-Key: the first request still running
  }
  return statuses;
}

const openapiPath = (url: string) => url.replace(/:(\w+)/g, '{$1}');

/** The route's schema as the document shows it. */
function documented(method: string, url: string, route: RouteOptions): FastifySchema {
  const schema = { ...(route.schema as Record<string, unknown>) } as Record<string, unknown>;
  const path = openapiPath(url);
  const id = OPERATION_IDS[`${method === 'HEAD' ? 'GET' : method} ${path}`];
  if (id) schema.operationId = method === 'HEAD' ? `${id}Head` : id;
  const own = (schema.response ?? {}) as Record<string, unknown>;
  const replayed: Record<string, object> =
    method === 'POST' && url.startsWith('/api/')
      ? {
          'Idempotent-Replayed': header('true when this is the stored answer to a repeated Idempotency-Key.'),
        }
      : {};
  const response: Record<string, object> = {};
  for (const [status, schema] of Object.entries(own))
    response[status] = answer(Number(status), schema, replayed);
  for (const status of plumbingStatuses(method, url, route)) {
    response[status] ??= answer(status, undefined, status < 500 ? replayed : {});
  }
  schema.response = response;
  const query = schema.querystring as
    | { patternProperties?: Record<string, { description?: string }> }
    | undefined;
  const filter = Object.entries(query?.patternProperties ?? {}).find(([pattern]) =>
    pattern.startsWith('^metadata\\['),
  );
  if (filter) schema[FILTER] = filter[1].description ?? 'metadata[KEY]=VALUE filters';
  if (url.startsWith('/api/') && method === 'POST') {
    schema.headers = {
      type: 'object',
      properties: {
        'Idempotency-Key': {
          type: 'string',
          minLength: 1,
          maxLength: 255,
          pattern: '^[\\x21-\\x7e]+$',
          description: 'Makes a retry safe: the first answer is kept 24 hours and replayed (docs/api.md).',
        },
      },
      ...((schema.headers as object | undefined) ?? {}),
    };
  }
  if (['/auth/login', '/auth/password', '/auth/password/link'].includes(url) || !url.match(/^\/(api|auth)\//))
    schema.security = [];
  // A person's own routes take the session alone: a key is refused (domain/people.ts, `own`).
  else if (url.startsWith('/auth/') || route.config?.area === 'own') schema.security = [{ session: [] }];
  return schema as FastifySchema;
}

/** The parts of the document the plugin writes as plain JSON: read and changed as such. */
type Json = Record<string, unknown>;
interface Op {
  requestBody?: { required?: boolean; content?: Record<string, { schema?: Json }> };
  parameters?: Json[];
  [FILTER]?: string;
}

/** Whole-document fixes the route schemas cannot say. */
function finish(doc: Json): Json {
  for (const item of Object.values((doc.paths ?? {}) as Record<string, Record<string, Op>>)) {
    for (const op of Object.values(item)) {
      // A body whose schema takes null takes no body at all (rotate-secret, test, retry).
      const body = op.requestBody?.content?.['application/json']?.schema;
      if (op.requestBody && Array.isArray(body?.type) && body.type.includes('null'))
        op.requestBody.required = false;
      // `metadata[KEY]=VALUE`: the plugin drops patternProperties, so the filter is described as the
      // deepObject parameter it is.
      const filter = op[FILTER];
      if (filter !== undefined) {
        delete op[FILTER];
        op.parameters = [
          ...(op.parameters ?? []),
          {
            name: 'metadata',
            in: 'query',
            style: 'deepObject',
            explode: true,
            required: false,
            description: filter,
            schema: { type: 'object', additionalProperties: { type: 'string' } },
          },
        ];
      }
    }
  }
  return doc;
}

export const SWAGGER_OPTIONS: SwaggerOptions = {
  openapi: {
    openapi: '3.1.0',
    info: {
      title: 'Vitals API',
      version: '1',
      description:
        'Customer records, health scores with status bands and history, and signed webhooks. Every answer carries X-Request-Id. ' +
        'A known path asked with a method it does not serve answers 405 method_not_allowed with an Allow header (components.responses.MethodNotAllowed); ' +
        'an unknown path 404 resource_missing. A request that is not well-formed HTTP/1.1 (conflicting Transfer-Encoding and Content-Length, a bad chunk) ' +
        'answers 400 invalid_request, and one whose headers exceed 16 KiB 431 headers_too_large, at any path, and the connection is closed. ' +
        'Every failure is the Error envelope.',
    },
    components: {
      securitySchemes: {
        bearer: { type: 'http', scheme: 'bearer', description: 'vk_… API key' },
        session: {
          type: 'apiKey',
          in: 'cookie',
          name: SESSION_COOKIE,
          description:
            'The dashboard session set by POST /auth/login; a change made with it needs the X-CSRF-Token header.',
        },
      },
      responses: {
        MethodNotAllowed: {
          description: 'The path is served, but not with this method.',
          headers: {
            Allow: { description: 'The methods the path serves.', schema: { type: 'string' } },
            'X-Request-Id': { description: REQUEST_ID.description, schema: { type: 'string' } },
          },
          content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
        },
      },
    },
    security: [{ bearer: [] }, { session: [] }],
  },
  exposeHeadRoutes: true,
  transform: ({ url, route }) => ({
    schema: documented(String(route.method), url, route as RouteOptions),
    url,
  }),
  transformObject: (doc) => finish((doc as { openapiObject: Json }).openapiObject),
  refResolver: {
    buildLocalReference: (json, _baseUri, _fragment, i) => (json.$id as string) ?? `def-${i}`,
  },
};
