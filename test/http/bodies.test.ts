// Hostile JSON bodies (docs/api.md, "Nesting"): arrays and objects nest at most 64 levels, counted
// before JSON.parse builds anything, on the 1 MiB routes and the 8 MiB batches alike. A body
// nested millions of levels deep used to be parsed for over 2 s on the main thread (and left the
// process at ~2 GB) before it was refused.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import fc from 'fast-check';
import { MAX_BODY_CONTAINERS, MAX_BODY_DEPTH, nestsDeeperThan } from '../../src/http/json-body.ts';
import { buildTestApp, customerBody, type TestApp } from '../helpers/app.ts';
import { refusedWithoutChange } from '../helpers/refusals.ts';

const MiB = 1024 * 1024;
let t: TestApp;
before(async () => {
  t = await buildTestApp();
  assert.equal((await t.api.post('/api/customers', customerBody('cus_base'))).status, 201);
});
after(() => t.close());

const stored = async () => ({
  customers: (await t.api.get('/api/customers?limit=100')).body,
  scores: (await t.api.get('/api/health-scores?limit=100')).body,
});

/** `levels` arrays inside one another, innermost holding 1. */
const arrays = (levels: number) => `${'['.repeat(levels)}1${']'.repeat(levels)}`;
/** `levels` objects inside one another, innermost holding 1. */
const objects = (levels: number) => `${'{"k":'.repeat(levels - 1)}{"k":1}${'}'.repeat(levels - 1)}`;

/** Arrays and objects in turn, `levels` in all. */
const mixed = (levels: number) => {
  let open = '';
  let close = '';
  for (let level = 0; level < levels; level++) {
    open += level % 2 === 0 ? '[' : '{"k":';
    close = (level % 2 === 0 ? ']' : '}') + close;
  }
  return `${open}1${close}`;
};

/** A customer whose body nests `levels` deep in all: the body is level 1, its metadata level 2. */
const customerNesting = (id: string, levels: number, nest = arrays) =>
  `{"customer_id":"${id}","name":"N","email":"n@example.com","metadata":{"a":${nest(levels - 2)}}}`;

/** A batch of one such customer: body 1, customers 2, the item 3, its metadata 4. */
const batchNesting = (id: string, levels: number, nest = arrays) =>
  `{"customers":[{"customer_id":"${id}","name":"N","email":"n@example.com","metadata":{"a":${nest(levels - 4)}}}]}`;

/** The longest the event loop went without running a timer while `work` ran, in ms. */
async function longestStall(work: () => Promise<unknown>): Promise<number> {
  let last = performance.now();
  let longest = 0;
  const tick = () => {
    const now = performance.now();
    longest = Math.max(longest, now - last);
    last = now;
  };
  const timer = setInterval(tick, 5);
  try {
    await work();
  } finally {
    clearInterval(timer);
    tick();
  }
  return longest;
}

const tooDeep = async (url: string, body: string) => {
  const res = await refusedWithoutChange(
    stored,
    () => t.api.request('POST', url, body),
    400,
    'invalid_json',
    undefined,
  );
  assert.match(res.body.error.message, new RegExp(`more than ${MAX_BODY_DEPTH} levels deep`));
};

describe('nesting depth', () => {
  test('the limit is 64 levels', () => assert.equal(MAX_BODY_DEPTH, 64));

  for (const [name, nest] of [
    ['arrays', arrays],
    ['objects', objects],
    ['arrays and objects in turn', mixed],
  ] as const) {
    const id = (prefix: string) => `${prefix}_${name.replaceAll(' ', '_')}`;
    test(`${name} 64 levels deep are accepted on a 1 MiB route`, async () => {
      const res = await t.api.request('POST', '/api/customers', customerNesting(id('cus_64'), 64, nest));
      assert.equal(res.status, 201, res.raw);
    });

    test(`${name} 65 levels deep: 400 invalid_json naming the limit, nothing stored`, () =>
      tooDeep('/api/customers', customerNesting(id('cus_65'), 65, nest)));

    test(`${name} 64 levels deep are accepted in a batch (8 MiB route)`, async () => {
      const res = await t.api.request('POST', '/api/customers/batch', batchNesting(id('cus_b64'), 64, nest));
      assert.equal(res.status, 200, res.raw);
      assert.equal(res.body.results[0].status, 201, res.raw);
    });

    test(`${name} 65 levels deep in a batch: 400 invalid_json, nothing stored`, () =>
      tooDeep('/api/customers/batch', batchNesting(id('cus_b65'), 65, nest)));
  }

  test('brackets inside strings are text, not nesting', async () => {
    const text = `${'[{'.repeat(500)}"still text \\" [[[[ {{{{ \\\\"`;
    const body = JSON.stringify(customerBody('cus_strings', { metadata: { a: '[[[[', b: text } }));
    const res = await t.api.request('POST', '/api/customers', body);
    assert.equal(res.status, 201, res.raw);
    assert.equal(res.body.metadata.b, text);
  });

  test('an escaped backslash ends its string: the brackets after it are counted', () =>
    tooDeep(
      '/api/customers',
      `{"customer_id":"cus_esc","name":"N","email":"n@example.com","metadata":{"a":"ends with \\\\","b":${arrays(63)}}}`,
    ));
});

describe('8 MiB nested bodies', () => {
  /** 8 MiB of `open` nested inside one another and closed again: over four million levels. */
  const hostile = (open: string, close: string) => {
    const levels = Math.floor((8 * MiB - 6) / (open.length + close.length));
    return `{"a":${open.repeat(levels)}${close.repeat(levels)}}`;
  };

  for (const url of [
    '/api/customers/batch',
    '/api/health-scores/batch',
    '/api/metrics/batch',
    '/api/outcomes/batch',
  ]) {
    test(`${url}: 400 invalid_json without parsing, nothing stored, the event loop never held`, async () => {
      const body = hostile('[', ']');
      assert.ok(Buffer.byteLength(body) > 8 * MiB - 8);
      const stall = await longestStall(() => tooDeep(url, body));
      // Parsing it took 2.2-3.6 s; the scan stops at the 65th bracket. The bound is loose on purpose:
      // a loaded machine may pause, but never for the seconds a parse of millions of levels takes.
      assert.ok(stall < 1000, `the event loop was held ${Math.round(stall)} ms`);
    });
  }

  test('objects nested 8 MiB deep: refused the same way', async () => {
    const stall = await longestStall(() => tooDeep('/api/customers/batch', hostile('{"k":', '}')));
    assert.ok(stall < 1000, `the event loop was held ${Math.round(stall)} ms`);
  });

  test('a 1 MiB route refuses a nested body of 1 MiB the same way', async () => {
    await tooDeep('/api/customers', '['.repeat(MiB));
  });
});

describe('flat bodies of many arrays and objects', () => {
  /** A metric batch whose one item holds `n` empty arrays in one metadata-like list. */
  const flat = (n: number) =>
    `{"metrics":[{"customer_id":"cus_base","values":{"x":1},"at":[${'[],'.repeat(n - 1)}[]]}]}`;

  test(`more than ${MAX_BODY_CONTAINERS.toLocaleString('en-US')}: 400 invalid_json before parsing, nothing stored`, async () => {
    // 8 MiB of `[],` is 2.8 million arrays: JSON.parse held the event loop 150 ms to 1 s for it.
    const body = flat(Math.floor((8 * MiB - 100) / 3));
    const stall = await longestStall(async () => {
      const res = await refusedWithoutChange(
        stored,
        () => t.api.request('POST', '/api/metrics/batch', body),
        400,
        'invalid_json',
        undefined,
      );
      assert.match(res.body.error.message, /more than 250,000 arrays and objects/);
    });
    assert.ok(stall < 1000, `the event loop was held ${Math.round(stall)} ms`);
  });

  test('exactly the limit is parsed, then judged for what it says', async () => {
    // Besides the flat list: the top-level object, the metrics array, the item, its values and `at`.
    const res = await t.api.request('POST', '/api/metrics/batch', flat(MAX_BODY_CONTAINERS - 5));
    assert.equal(res.status, 200, res.raw);
    assert.equal(res.body.results[0].error.param, 'at', res.raw);
  });
});

describe('the depth scan agrees with JSON.parse', () => {
  /** How deep a parsed value nests arrays and objects (a scalar is 0). */
  const depthOf = (value: unknown): number =>
    value !== null && typeof value === 'object' ? 1 + Math.max(0, ...Object.values(value).map(depthOf)) : 0;
  // Strings full of what the scan must not count or must skip: brackets, quotes, backslashes, long runs.
  const tricky = fc.oneof(
    fc.string({ unit: fc.constantFrom('[', ']', '{', '}', '"', '\\', 'a', ' ', 'é', '\u2028') }),
    fc.string({ minLength: 15, maxLength: 60 }),
  );
  const value = fc.letrec((tie) => ({
    json: fc.oneof(
      { depthSize: 'small' },
      tricky,
      fc.double({ noNaN: true, noDefaultInfinity: true }),
      fc.constantFrom(true, false, null),
      fc.array(tie('json'), { maxLength: 4 }),
      fc.dictionary(tricky, tie('json'), { maxKeys: 4 }),
    ),
  })).json;

  test('for any JSON text and any limit: deeper than the limit exactly when the parsed value is', () => {
    fc.assert(
      fc.property(value, fc.integer({ min: 0, max: 8 }), fc.boolean(), (v, limit, pretty) => {
        const text = JSON.stringify(v, null, pretty ? 2 : undefined);
        assert.equal(nestsDeeperThan(text, limit), depthOf(JSON.parse(text)) > limit, text);
      }),
      { numRuns: 2000 },
    );
  });
});
