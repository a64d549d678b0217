// Every answer the HTTP test suites receive, held against the OpenAPI document the app serves
// (docs/api.md, "OpenAPI"), by openapi-backend (a well-kept OpenAPI router and Ajv validator),
// not by hand: the operation is found by method and path; its answer's status must be declared
// for that operation, its JSON body valid against that status's schema, and its declared headers
// well-formed. An answer with no operation (an unknown path, a method a path does not serve) must
// be the documented 404 or 405 envelope. buildTestApp's inject calls checkAnswer on every answer.
import assert from 'node:assert/strict';
import ajvFormats from 'ajv-formats';
import { type Document, OpenAPIBackend, type Operation } from 'openapi-backend';

// ajv-formats is CommonJS: Node's default import is its module.exports, whose `default` is the plugin.
const addFormats = (ajvFormats as unknown as { default: typeof ajvFormats.default }).default;

/** One validator per distinct document: every test app of a run serves the same one. */
const backends = new Map<string, Promise<OpenAPIBackend>>();

/** The paths the document speaks for; the dashboard's pages, /docs and /metrics are not JSON operations. */
const DOCUMENTED = /^\/(api|auth)\/|^\/(healthz|readyz)$/;

async function backendFor(docText: string): Promise<OpenAPIBackend> {
  const known = backends.get(docText);
  if (known) return known;
  const definition = JSON.parse(docText) as Document;
  // quick: the document's own validity is plumbing.test.ts's (an OpenAPI 3.1 validator); this one reads 3.0.
  const backend = new OpenAPIBackend({
    definition,
    strict: true,
    quick: true,
    validate: true,
    // date-time and the other formats the document names are checked, not ignored with a warning.
    customizeAjv: (ajv) => {
      addFormats(ajv);
      return ajv;
    },
  }).init();
  backends.set(docText, backend);
  return backend;
}

export interface Answer {
  method: string;
  url: string;
  status: number;
  headers: Record<string, unknown>;
  raw: string;
}

/** Why this answer disagrees with the document, or null. */
export async function answerProblem(docText: string, a: Answer): Promise<string | null> {
  // As the request was sent: dot segments resolved, as inject (and every URL parser) does.
  const target = new URL(a.url, 'http://vitals.test');
  const path = target.pathname;
  const query = target.search.slice(1);
  if (!DOCUMENTED.test(path)) return null;
  const api = await backendFor(docText);
  const method = a.method.toLowerCase();
  let operation: Operation | undefined;
  try {
    operation = api.router.matchOperation({ method, path, query, headers: {} });
  } catch {
    // A path that escapes cannot be matched as written (a malformed escape): no operation.
  }
  const body = a.raw === '' ? undefined : tryJson(a.raw);
  const what = `${a.method} ${a.url} → ${a.status}`;
  if (!operation) {
    // Unrouted: not found, not allowed, or refused while the body or the URL was read.
    if (![400, 401, 404, 405, 413, 415].includes(a.status)) {
      return `${what}: no operation in the document answers it`;
    }
    if (a.status === 405 && typeof a.headers.allow !== 'string') return `${what}: a 405 without Allow`;
    return method === 'head' ? null : envelopeProblem(api, what, body);
  }
  const responses = (operation.responses ?? {}) as Record<string, { content?: Record<string, unknown> }>;
  const declared = responses[String(a.status)] ?? responses[`${String(a.status)[0]}XX`] ?? responses.default;
  if (!declared) {
    return `${what}: ${operation.operationId} declares ${Object.keys(responses).join(', ')}, not ${a.status}`;
  }
  if (method === 'head' || body === undefined || !declared.content?.['application/json']) return null;
  const result = api.validator.validateResponse(body, operation, a.status);
  if (!result.valid) {
    return `${what}: the body does not match ${operation.operationId}'s ${a.status} schema: ${JSON.stringify(result.errors)}\n${a.raw.slice(0, 500)}`;
  }
  const headers = api.validator.validateResponseHeaders(a.headers, operation, { statusCode: a.status });
  if (!headers.valid) return `${what}: headers: ${JSON.stringify(headers.errors)}`;
  return null;
}

function envelopeProblem(api: OpenAPIBackend, what: string, body: unknown): string | null {
  const error = (body as { error?: Record<string, unknown> } | undefined)?.error;
  const ok =
    error !== undefined &&
    typeof error.type === 'string' &&
    typeof error.code === 'string' &&
    typeof error.message === 'string' &&
    Object.keys(error).every((k) => ['type', 'code', 'message', 'param'].includes(k));
  void api;
  return ok ? null : `${what}: not the Error envelope: ${JSON.stringify(body)}`;
}

function tryJson(raw: string): unknown {
  try {
    return JSON.parse(raw);
  } catch {
    return raw;
  }
}

/** Throws an AssertionError naming the disagreement. */
export async function checkAnswer(docText: string, a: Answer): Promise<void> {
  const problem = await answerProblem(docText, a);
  assert.equal(problem, null, `the answer disagrees with /openapi.json: ${problem}`);
}
