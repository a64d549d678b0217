// Answers held to the OpenAPI document the app serves (/openapi.json): a 2xx must be a status
// the document gives for that operation, with a body its response schema accepts (Ajv, every
// error listed); any other answer must be the error envelope of #/components/schemas/Error.
// Requests are matched to operations by find-my-way with the app's router options, as Fastify
// matches them (so /api/customers/ is the list, a trailing slash being ignored).
import assert from 'node:assert/strict';
import { Ajv, type ValidateFunction } from 'ajv';
import FindMyWay from 'find-my-way';
import type { Response, TestApp } from '../helpers/app.ts';

/** src/http/app.ts's ROUTER_OPTIONS (not exported): how Fastify matches a path to a route. */
const ROUTER_OPTIONS = { ignoreTrailingSlash: true, maxParamLength: 1000 };

const DOC = 'openapi.json';
const METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const;

interface Operation {
  /** `GET /api/customers/{customer_id}`, for messages. */
  name: string;
  /** `#/paths/~1api~1customers/get`: where the operation is in the document. */
  pointer: string;
  responses: Record<string, { content?: Record<string, { schema?: unknown }> }>;
}

type Doc = { paths: Record<string, Partial<Record<(typeof METHODS)[number], Operation>>> };

/** RFC 3339 date-time (the only format the document uses), checked as ajv-formats would. */
const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+-](\d{2}):(\d{2}))$/;
function isDateTime(s: string): boolean {
  const m = DATE_TIME.exec(s);
  if (!m) return false;
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map(Number) as number[];
  const days = new Date(Date.UTC(year as number, month as number, 0)).getUTCDate();
  return (
    (month as number) >= 1 &&
    (month as number) <= 12 &&
    (day as number) >= 1 &&
    (day as number) <= days &&
    (hour as number) <= 23 &&
    (minute as number) <= 59 &&
    (second as number) <= 60 &&
    (m[9] === undefined || (Number(m[9]) <= 23 && Number(m[10]) <= 59))
  );
}

/**
 * The path the app is asked for: app.inject parses the URL as WHATWG URL does, as any client
 * would, so '.' and '..' segments (%2e too) are resolved before the router sees them
 * (/api/customers/. is the list).
 */
const served = (url: string) => new URL(url, 'http://vitals.test').pathname;

const pointerSegment = (segment: string) =>
  encodeURIComponent(segment.replace(/~/g, '~0').replace(/\//g, '~1'));

export class Contract {
  readonly #ajv: Ajv;
  readonly #router = FindMyWay<FindMyWay.HTTPVersion.V1>(ROUTER_OPTIONS);
  readonly #validators = new Map<string, ValidateFunction>();

  private constructor(doc: Doc) {
    this.#ajv = new Ajv({ strict: false, allErrors: true });
    this.#ajv.addFormat('date-time', isDateTime);
    this.#ajv.addSchema(doc as object, DOC);
    for (const [path, item] of Object.entries(doc.paths)) {
      for (const method of METHODS) {
        const op = item[method];
        if (!op) continue;
        const store: Operation = {
          name: `${method.toUpperCase()} ${path}`,
          pointer: `#/paths/${pointerSegment(path)}/${method}`,
          responses: op.responses,
        };
        this.#router.on(method.toUpperCase() as 'GET', path.replace(/\{(\w+)\}/g, ':$1'), () => {}, store);
      }
    }
  }

  /** The document as the app serves it. */
  static async load(t: TestApp): Promise<Contract> {
    const res = await t.inject({ method: 'GET', url: '/openapi.json' });
    assert.equal(res.status, 200, res.raw.slice(0, 300));
    return new Contract(res.body as Doc);
  }

  /** The documented operation a request reaches, or undefined (a path the document leaves out). */
  operation(method: string, url: string): Operation | undefined {
    const path = served(url);
    const m = method === 'HEAD' ? 'GET' : method;
    if (!(METHODS as readonly string[]).includes(m.toLowerCase())) return undefined;
    try {
      return this.#router.find(m as 'GET', path)?.store as Operation | undefined;
    } catch {
      return undefined; // a path find-my-way cannot decode: Fastify refuses it before any route
    }
  }

  #validator(pointer: string): ValidateFunction {
    let v = this.#validators.get(pointer);
    if (!v) {
      v = this.#ajv.compile({ $ref: `${DOC}${pointer}` });
      this.#validators.set(pointer, v);
    }
    return v;
  }

  #assertValid(pointer: string, schemaName: string, body: unknown, what: string): void {
    const validate = this.#validator(pointer);
    if (validate(body)) return;
    const errors = (validate.errors ?? [])
      .slice(0, 10)
      .map((e) => `${e.instancePath || '(root)'} ${e.message} ${JSON.stringify(e.params)}`)
      .join('; ');
    assert.fail(`${what}: the body does not match ${schemaName}: ${errors}`);
  }

  /**
   * A 2xx: the operation documents the status, and the body matches its schema (HEAD has no
   * body to check). Anything else: the error envelope. Paths outside /api/ that the document
   * leaves out (/healthz, /readyz, /openapi.json) are not held to it.
   */
  check(method: string, url: string, res: Response, what: string): void {
    const op = this.operation(method, url);
    const path = served(url);
    if (res.status >= 200 && res.status < 300) {
      if (!op) {
        assert.ok(
          !path.startsWith('/api/'),
          `${what}: ${res.status} from an operation /openapi.json leaves out`,
        );
        return;
      }
      const documented = op.responses[String(res.status)];
      assert.ok(documented, `${what}: ${res.status} is not a documented answer of ${op.name}`);
      if (method === 'HEAD') return;
      const schema = documented.content?.['application/json']?.schema;
      if (schema === undefined) {
        assert.equal(res.raw, '', `${what}: ${op.name} answers ${res.status} with no body`);
        return;
      }
      assert.match(String(res.headers['content-type']), /^application\/json/, `${what}: content-type`);
      this.#assertValid(
        `${op.pointer}/responses/${res.status}/content/${pointerSegment('application/json')}/schema`,
        `the ${res.status} response schema of ${op.name}`,
        res.body,
        `${what}: ${res.status}`,
      );
      return;
    }
    if (method === 'HEAD' && res.raw === '') return;
    const documented = op?.responses[String(res.status)]?.content?.['application/json']?.schema;
    if (op && documented !== undefined) {
      this.#assertValid(
        `${op.pointer}/responses/${res.status}/content/${pointerSegment('application/json')}/schema`,
        `the ${res.status} response schema of ${op.name}`,
        res.body,
        `${what}: ${res.status}`,
      );
    }
    // Documented or not (a 405, a 413 on a GET), every failure is the envelope.
    this.#assertValid('#/components/schemas/Error', 'the error envelope', res.body, `${what}: ${res.status}`);
  }
}
