// Every health-score, weights, thresholds, history, portfolio and events refusal through HTTP
// (docs/errors.md; docs/api.md, "Health scores", "Settings", "Events"). Each refusal also proves
// that nothing the account has stored changed.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { buildTestApp, customerBody, type Response, type TestApp } from '../helpers/app.ts';
import { refusedWithoutChange } from '../helpers/refusals.ts';

let t: TestApp;
const FIFTY = Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`f${i}`, 0.5]));

before(async () => {
  t = await buildTestApp();
  for (const id of ['cus_base', 'cus_none', 'cus_full']) {
    assert.equal((await t.api.post('/api/customers', customerBody(id))).status, 201);
  }
  const ok = async (res: Promise<Response>) => assert.equal((await res).status, 200, (await res).raw);
  await ok(t.api.patch('/api/settings/health-score/weights', { weights: { usage: 0.6, support: 0.4 } }));
  await ok(t.api.patch('/api/settings/health-score/thresholds', { healthy: 0.75, at_risk: 0.35 }));
  await ok(t.api.post('/api/customers/cus_base/health-score', { factors: { usage: 0.8, support: 0.6 } }));
  await ok(t.api.patch('/api/customers/cus_base/health-score', { factors: { billing: 0.1 } }));
  await ok(t.api.post('/api/customers/cus_full/health-score', { factors: FIFTY }));
});
after(() => t.close());

/** Everything the account has stored that these requests could touch, as the API shows it. */
async function stored(): Promise<Record<string, unknown>> {
  const urls = {
    score: '/api/customers/cus_base/health-score',
    full: '/api/customers/cus_full/health-score',
    none: '/api/customers/cus_none/health-score',
    history: '/api/customers/cus_base/health-score/history?limit=100',
    noneHistory: '/api/customers/cus_none/health-score/history?limit=100',
    weights: '/api/settings/health-score/weights',
    thresholds: '/api/settings/health-score/thresholds',
    portfolio: '/api/health-scores?limit=100',
    summary: '/api/health-scores/summary',
    events: '/api/events?limit=100',
  };
  const out: Record<string, unknown> = {};
  for (const [name, url] of Object.entries(urls)) {
    const res = await t.api.get(url);
    if (res.body?.has_more !== undefined) assert.equal(res.body.has_more, false, `${name} fits one page`);
    out[name] = { status: res.status, body: res.body };
  }
  return out;
}

/** Sends a request, asserts it was refused as expected, and that nothing stored changed. */
const refused = (
  send: () => Promise<Response>,
  status: number,
  code: string,
  param: string | undefined,
): Promise<Response> => refusedWithoutChange(stored, send, status, code, param);

const post =
  (body: unknown, id = 'cus_base') =>
  () =>
    t.api.post(`/api/customers/${id}/health-score`, body);
const patch =
  (body: unknown, id = 'cus_base') =>
  () =>
    t.api.patch(`/api/customers/${id}/health-score`, body);
const raw = (method: string, path: string, text: string) => () => t.api.request(method, path, text);
const weights = (body: unknown) => () => t.api.patch('/api/settings/health-score/weights', body);
const thresholds = (body: unknown) => () => t.api.patch('/api/settings/health-score/thresholds', body);
const get = (url: string) => () => t.api.get(url);

const NAME_65 = `a${'b'.repeat(64)}`;
const BAD_NAMES: [string, string][] = [
  ['Usage', 'uppercase'],
  ['usAge', 'uppercase inside'],
  ['1usage', 'leading digit'],
  ['_usage', 'leading underscore'],
  ['us-age', 'dash'],
  ['us age', 'space'],
  ['usage.v2', 'dot'],
  [NAME_65, '65 characters'],
];

for (const [method, send] of [
  ['POST', post],
  ['PATCH', patch],
] as const) {
  describe(`${method} health-score: the factors object`, () => {
    test('missing → parameter_missing', async () => {
      await refused(send({}), 400, 'parameter_missing', 'factors');
    });

    for (const [label, value] of [
      ['null', null],
      ['an array', [0.5]],
      ['a string', 'usage=0.5'],
      ['a number', 0.5],
      ['true', true],
    ] as const) {
      test(`${label} → parameter_invalid factors`, async () => {
        await refused(send({ factors: value }), 400, 'parameter_invalid', 'factors');
      });
    }

    test('an empty object → parameter_invalid factors', async () => {
      await refused(send({ factors: {} }), 400, 'parameter_invalid', 'factors');
    });

    test('51 entries → parameter_invalid factors', async () => {
      await refused(send({ factors: { ...FIFTY, extra: 0.5 } }), 400, 'parameter_invalid', 'factors');
    });

    for (const [name, why] of BAD_NAMES) {
      test(`name with ${why} → parameter_invalid factors.${name.slice(0, 12)}`, async () => {
        await refused(
          send({ factors: { usage: 0.5, [name]: 0.5 } }),
          400,
          'parameter_invalid',
          `factors.${name}`,
        );
      });
    }

    test('an empty name → parameter_invalid factors', async () => {
      await refused(send({ factors: { '': 0.5 } }), 400, 'parameter_invalid', 'factors');
    });

    for (const [label, value] of [
      ['-0.1', -0.1],
      ['1.0001', 1.0001],
      ['the string "0.5"', '0.5'],
      ['the string "1"', '1'],
      ['true', true],
      ['false', false],
      ['an object', { value: 0.5 }],
      ['an array', [0.5]],
    ] as const) {
      test(`value ${label} → parameter_invalid factors.usage`, async () => {
        await refused(
          send({ factors: { support: 0.5, usage: value } }),
          400,
          'parameter_invalid',
          'factors.usage',
        );
      });
    }

    for (const text of ['1e309', '-1e309', '2']) {
      test(`value ${text} in the raw JSON → parameter_invalid factors.usage`, async () => {
        await refused(
          raw(method, '/api/customers/cus_base/health-score', `{"factors":{"usage":${text}}}`),
          400,
          'parameter_invalid',
          'factors.usage',
        );
      });
    }

    test('an unknown body field → parameter_unknown', async () => {
      await refused(send({ factors: { usage: 0.5 }, weight: 1 }), 400, 'parameter_unknown', 'weight');
      await refused(
        send({ factors: { usage: 0.5 }, customer_id: 'cus_none' }),
        400,
        'parameter_unknown',
        'customer_id',
      );
      await refused(
        send({ factors: { usage: 0.5 }, health_score: 1 }),
        400,
        'parameter_unknown',
        'health_score',
      );
    });

    test('a body that is not an object → parameter_invalid without param', async () => {
      await refused(
        raw(method, '/api/customers/cus_base/health-score', '[]'),
        400,
        'parameter_invalid',
        undefined,
      );
      await refused(
        raw(method, '/api/customers/cus_base/health-score', '"factors"'),
        400,
        'parameter_invalid',
        undefined,
      );
    });

    test('no body → parameter_missing', async () => {
      await refused(
        () => t.api.request(method, '/api/customers/cus_base/health-score'),
        400,
        'parameter_missing',
        undefined,
      );
    });

    test('malformed JSON → invalid_json', async () => {
      await refused(
        raw(method, '/api/customers/cus_base/health-score', '{"factors": {"usage": 0.5}'),
        400,
        'invalid_json',
        undefined,
      );
    });

    test('a body that is not JSON → 415 unsupported_media_type', async () => {
      await refused(
        () =>
          t.api.request(method, '/api/customers/cus_base/health-score', 'factors=usage', {
            'content-type': 'application/x-www-form-urlencoded',
          }),
        415,
        'unsupported_media_type',
        undefined,
      );
    });

    test('an unknown customer → 404 customer_not_found', async () => {
      await refused(send({ factors: { usage: 0.5 } }, 'cus_missing'), 404, 'customer_not_found', undefined);
    });
  });
}

describe('POST health-score: null values', () => {
  test('null is not a factor value on POST (only PATCH removes)', async () => {
    await refused(post({ factors: { usage: null } }), 400, 'parameter_invalid', 'factors.usage');
    await refused(
      post({ factors: { usage: 0.5, support: null } }),
      400,
      'parameter_invalid',
      'factors.support',
    );
  });
});

describe('PATCH health-score: merging', () => {
  test('removing every factor → parameter_invalid factors', async () => {
    await refused(
      patch({ factors: { usage: null, support: null, billing: null } }),
      400,
      'parameter_invalid',
      'factors',
    );
  });

  test('removing factors that are not there, with no score yet → parameter_invalid factors', async () => {
    await refused(patch({ factors: { usage: null } }, 'cus_none'), 400, 'parameter_invalid', 'factors');
  });

  test('a merge that would make 51 factors → parameter_invalid factors', async () => {
    await refused(patch({ factors: { f50: 0.5 } }, 'cus_full'), 400, 'parameter_invalid', 'factors');
  });

  test('an out-of-range value next to valid removals refuses the whole patch', async () => {
    await refused(
      patch({ factors: { support: null, usage: 1.5 } }),
      400,
      'parameter_invalid',
      'factors.usage',
    );
  });

  test('a bad name given as null is still a bad name', async () => {
    await refused(patch({ factors: { Usage: null } }), 400, 'parameter_invalid', 'factors.Usage');
  });
});

describe('reading scores and history of missing things', () => {
  test('GET of an unknown customer → 404 customer_not_found', async () => {
    await refused(get('/api/customers/cus_missing/health-score'), 404, 'customer_not_found', undefined);
  });

  test('GET of a customer without a score → 404 health_score_not_found', async () => {
    await refused(get('/api/customers/cus_none/health-score'), 404, 'health_score_not_found', undefined);
  });

  test('history of an unknown customer → 404 customer_not_found', async () => {
    await refused(
      get('/api/customers/cus_missing/health-score/history'),
      404,
      'customer_not_found',
      undefined,
    );
  });

  test('a deleted customer answers customer_not_found everywhere', async () => {
    assert.equal((await t.api.post('/api/customers', customerBody('cus_deleted'))).status, 201);
    const scored = await t.api.post('/api/customers/cus_deleted/health-score', { factors: { usage: 0.5 } });
    assert.equal(scored.status, 200);
    assert.equal((await t.api.delete('/api/customers/cus_deleted')).status, 200);
    await refused(get('/api/customers/cus_deleted/health-score'), 404, 'customer_not_found', undefined);
    await refused(
      get('/api/customers/cus_deleted/health-score/history'),
      404,
      'customer_not_found',
      undefined,
    );
    await refused(post({ factors: { usage: 0.5 } }, 'cus_deleted'), 404, 'customer_not_found', undefined);
    await refused(patch({ factors: { usage: 0.5 } }, 'cus_deleted'), 404, 'customer_not_found', undefined);
  });
});

describe('weights', () => {
  test('a sum of 0.9 → weights_sum_invalid', async () => {
    await refused(weights({ weights: { usage: 0.5, support: 0.4 } }), 400, 'weights_sum_invalid', 'weights');
  });

  test('a sum of 1.1 → weights_sum_invalid', async () => {
    await refused(weights({ weights: { usage: 0.6, support: 0.5 } }), 400, 'weights_sum_invalid', 'weights');
  });

  test('a sum just outside 1e-6 → weights_sum_invalid', async () => {
    await refused(
      weights({ weights: { usage: 0.5, support: 0.500002 } }),
      400,
      'weights_sum_invalid',
      'weights',
    );
    await refused(
      weights({ weights: { usage: 0.5, support: 0.499998 } }),
      400,
      'weights_sum_invalid',
      'weights',
    );
  });

  test('all zero → weights_sum_invalid', async () => {
    await refused(weights({ weights: { usage: 0, support: 0 } }), 400, 'weights_sum_invalid', 'weights');
  });

  test('a value above 1 → parameter_invalid weights.usage', async () => {
    await refused(
      weights({ weights: { usage: 1.5, support: -0.5 } }),
      400,
      'parameter_invalid',
      'weights.usage',
    );
    await refused(weights({ weights: { usage: 1.000001 } }), 400, 'parameter_invalid', 'weights.usage');
  });

  test('a negative value → parameter_invalid weights.support', async () => {
    await refused(
      weights({ weights: { usage: 1, support: -0.1 } }),
      400,
      'parameter_invalid',
      'weights.support',
    );
  });

  test('1e309 in the raw JSON → parameter_invalid weights.usage', async () => {
    await refused(
      raw('PATCH', '/api/settings/health-score/weights', '{"weights":{"usage":1e309}}'),
      400,
      'parameter_invalid',
      'weights.usage',
    );
  });

  for (const [name, why] of BAD_NAMES) {
    test(`a name with ${why} → parameter_invalid`, async () => {
      await refused(weights({ weights: { [name]: 1 } }), 400, 'parameter_invalid', `weights.${name}`);
    });
  }

  test('an empty name → parameter_invalid weights', async () => {
    await refused(weights({ weights: { '': 1 } }), 400, 'parameter_invalid', 'weights');
  });

  test('an empty map → parameter_invalid weights', async () => {
    await refused(weights({ weights: {} }), 400, 'parameter_invalid', 'weights');
  });

  for (const [label, value] of [
    ['the string "1"', '1'],
    ['the string "0.5"', '0.5'],
    ['true', true],
    ['null', null],
    ['an object', { w: 1 }],
  ] as const) {
    test(`a value that is ${label} → parameter_invalid weights.usage`, async () => {
      await refused(weights({ weights: { usage: value } }), 400, 'parameter_invalid', 'weights.usage');
    });
  }

  test('weights missing, null, an array or a number → 400', async () => {
    await refused(weights({}), 400, 'parameter_missing', 'weights');
    await refused(weights({ weights: null }), 400, 'parameter_invalid', 'weights');
    await refused(weights({ weights: [1] }), 400, 'parameter_invalid', 'weights');
    await refused(weights({ weights: 1 }), 400, 'parameter_invalid', 'weights');
  });

  test('an unknown body field → parameter_unknown', async () => {
    await refused(
      weights({ weights: { usage: 1 }, updated_at: null }),
      400,
      'parameter_unknown',
      'updated_at',
    );
  });

  test('more than 50 weights → parameter_invalid weights', async () => {
    const many = Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`w${i}`, i === 0 ? 1 : 0]));
    await refused(weights({ weights: many }), 400, 'parameter_invalid', 'weights');
  });
});

describe('thresholds', () => {
  test('at_risk equal to healthy → parameter_invalid at_risk', async () => {
    await refused(thresholds({ at_risk: 0.75 }), 400, 'parameter_invalid', 'at_risk');
    await refused(thresholds({ healthy: 0.5, at_risk: 0.5 }), 400, 'parameter_invalid', 'at_risk');
  });

  test('at_risk above healthy → parameter_invalid at_risk', async () => {
    await refused(thresholds({ at_risk: 0.9 }), 400, 'parameter_invalid', 'at_risk');
    await refused(thresholds({ healthy: 0.5, at_risk: 0.6 }), 400, 'parameter_invalid', 'at_risk');
  });

  test('healthy below the current at_risk → parameter_invalid healthy', async () => {
    await refused(thresholds({ healthy: 0.3 }), 400, 'parameter_invalid', 'healthy');
    await refused(thresholds({ healthy: 0.35 }), 400, 'parameter_invalid', 'healthy');
  });

  test('0 → parameter_invalid', async () => {
    await refused(thresholds({ at_risk: 0 }), 400, 'parameter_invalid', 'at_risk');
    await refused(thresholds({ healthy: 0 }), 400, 'parameter_invalid', 'healthy');
  });

  test('negative → parameter_invalid', async () => {
    await refused(thresholds({ at_risk: -0.1 }), 400, 'parameter_invalid', 'at_risk');
  });

  test('above 1 → parameter_invalid', async () => {
    await refused(thresholds({ healthy: 1.01 }), 400, 'parameter_invalid', 'healthy');
    await refused(thresholds({ healthy: 2, at_risk: 1.5 }), 400, 'parameter_invalid', 'healthy');
  });

  test('strings, booleans and null → parameter_invalid', async () => {
    await refused(thresholds({ healthy: '0.8' }), 400, 'parameter_invalid', 'healthy');
    await refused(thresholds({ at_risk: true }), 400, 'parameter_invalid', 'at_risk');
    await refused(thresholds({ at_risk: null }), 400, 'parameter_invalid', 'at_risk');
  });

  test('an unknown field → parameter_unknown', async () => {
    await refused(thresholds({ critical: 0.1 }), 400, 'parameter_unknown', 'critical');
    await refused(thresholds({ healthy: 0.8, updated_at: null }), 400, 'parameter_unknown', 'updated_at');
  });

  test('an empty body → parameter_missing', async () => {
    await refused(thresholds({}), 400, 'parameter_missing', undefined);
    await refused(
      () => t.api.request('PATCH', '/api/settings/health-score/thresholds'),
      400,
      'parameter_missing',
      undefined,
    );
  });
});

describe('query parameters', () => {
  const history = '/api/customers/cus_base/health-score/history';
  for (const value of ['0', '101', 'abc', '1.5', '-1', '', '1e1', '0x10']) {
    test(`history limit=${value} → parameter_invalid limit`, async () => {
      await refused(get(`${history}?limit=${value}`), 400, 'parameter_invalid', 'limit');
    });
    test(`portfolio limit=${value} → parameter_invalid limit`, async () => {
      await refused(get(`/api/health-scores?limit=${value}`), 400, 'parameter_invalid', 'limit');
    });
    test(`events limit=${value} → parameter_invalid limit`, async () => {
      await refused(get(`/api/events?limit=${value}`), 400, 'parameter_invalid', 'limit');
    });
  }

  // Any 32-bit integer is a version (a backfill numbers the past 0, −1, …); others are refused.
  for (const value of ['abc', '1.5', '', 'v2', '2147483648', '-2147483649']) {
    test(`history starting_after=${value} → parameter_invalid starting_after`, async () => {
      await refused(get(`${history}?starting_after=${value}`), 400, 'parameter_invalid', 'starting_after');
    });
  }

  for (const value of ['bogus', 'HEALTHY', 'at-risk', '']) {
    test(`portfolio status=${value} → parameter_invalid status`, async () => {
      await refused(get(`/api/health-scores?status=${value}`), 400, 'parameter_invalid', 'status');
    });
  }

  const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');
  for (const [label, cursor] of [
    ['garbage', 'garbage!!'],
    ['not base64 JSON', 'bm90IGpzb24'],
    ['JSON null', b64(null)],
    ['a number', b64(5)],
    ['a string', b64('ab')],
    ['an object', b64({ score: 0.5 })],
    ['an empty array', b64([])],
    ['a wrong shape', b64(['x', 'y', 'z'])],
  ] as const) {
    test(`portfolio cursor that is ${label} → parameter_invalid cursor`, async () => {
      await refused(
        get(`/api/health-scores?cursor=${encodeURIComponent(cursor)}`),
        400,
        'parameter_invalid',
        'cursor',
      );
    });
  }

  test('unknown query parameters → parameter_unknown', async () => {
    await refused(get(`${history}?cursor=abc`), 400, 'parameter_unknown', 'cursor');
    await refused(get('/api/health-scores?starting_after=x'), 400, 'parameter_unknown', 'starting_after');
    await refused(get('/api/events?cursor=x'), 400, 'parameter_unknown', 'cursor');
  });

  test('a repeated query parameter → parameter_invalid', async () => {
    await refused(get('/api/health-scores?limit=10&limit=20'), 400, 'parameter_invalid', 'limit');
    await refused(
      get('/api/health-scores?status=healthy&status=critical'),
      400,
      'parameter_invalid',
      'status',
    );
    await refused(
      get(`${history}?starting_after=2&starting_after=3`),
      400,
      'parameter_invalid',
      'starting_after',
    );
  });

  test('events type that is not an event type → parameter_invalid type', async () => {
    await refused(get('/api/events?type=customer.exploded'), 400, 'parameter_invalid', 'type');
    await refused(get('/api/events?type=health_score.updated'), 400, 'parameter_invalid', 'type');
  });

  test('an unknown event id → 404 event_not_found', async () => {
    await refused(get('/api/events/evt_000000000000000000000000'), 404, 'event_not_found', undefined);
  });
});
