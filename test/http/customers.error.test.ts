// Every customer rule (docs/api.md, "Customers"; docs/errors.md) through HTTP. Each refused write
// also proves that the stored customers are exactly what they were before the request.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { buildTestApp, customerBody, type Response, type TestApp } from '../helpers/app.ts';
import { refusedWithoutChange } from '../helpers/refusals.ts';

let t: TestApp;
before(async () => {
  t = await buildTestApp();
  const base = await t.api.post('/api/customers', customerBody('cus_base', { metadata: { plan: 'pro' } }));
  assert.equal(base.status, 201);
});
after(() => t.close());

/** Everything the default account has stored, as the API shows it. */
async function stored(): Promise<unknown> {
  const res = await t.api.get('/api/customers?limit=100');
  assert.equal(res.status, 200);
  assert.equal(res.body.has_more, false, 'the snapshot covers every customer');
  return res.body.customers;
}

function assertError(res: Response, status: number, code: string, param: string | undefined): void {
  assert.equal(res.status, status, res.raw);
  assert.equal(res.body.error.type, 'invalid_request_error');
  assert.equal(res.body.error.code, code);
  assert.equal(res.body.error.param, param);
  assert.equal(typeof res.body.error.message, 'string');
  assert.ok(res.body.error.message.length > 0);
}

/** Sends a write, asserts it was refused as expected, and that nothing stored changed. */
const refused = (
  send: () => Promise<Response>,
  status: number,
  code: string,
  param: string | undefined,
): Promise<Response> => refusedWithoutChange(stored, send, status, code, param);

const create = (body: unknown) => () => t.api.post('/api/customers', body);
const patchBase = (body: unknown) => () => t.api.patch('/api/customers/cus_base', body);

const without = (key: string) => {
  const body: Record<string, unknown> = customerBody('cus_new');
  delete body[key];
  return body;
};
const manyKeys = (n: number, prefix = 'k') =>
  Object.fromEntries(Array.from({ length: n }, (_, i) => [`${prefix}${i}`, i]));
/** Metadata whose JSON is exactly `bytes` long: {"big":"xxx…"} has 10 bytes around the value. */
const metadataOfSize = (bytes: number) => ({ big: 'x'.repeat(bytes - 10) });

describe('create: missing parameters', () => {
  for (const field of ['customer_id', 'name', 'email']) {
    test(`without ${field}: 400 parameter_missing, param ${field}`, async () => {
      await refused(create(without(field)), 400, 'parameter_missing', field);
    });
  }

  test('an empty object names the first missing parameter', async () => {
    await refused(create({}), 400, 'parameter_missing', 'customer_id');
  });

  test('no body at all: 400 parameter_missing', async () => {
    await refused(() => t.api.request('POST', '/api/customers'), 400, 'parameter_missing', undefined);
  });

  test('a body that is JSON but not an object: 400 parameter_invalid', async () => {
    for (const body of ['[]', '"cus_x"', '42', 'true']) {
      await refused(create(body), 400, 'parameter_invalid', undefined);
    }
  });

  test('JSON null as the body is treated as no parameters', async () => {
    await refused(create('null'), 400, 'parameter_missing', undefined);
  });
});

describe('create: wrong types are refused, never coerced', () => {
  const cases: [string, string, unknown][] = [
    ['a number for name', 'name', 42],
    ['a number for customer_id', 'customer_id', 42],
    ['a boolean for email', 'email', true],
    ['an array for name', 'name', ['Ana']],
    ['an object for name', 'name', { first: 'Ana' }],
    ['null for name', 'name', null],
    ['null for customer_id', 'customer_id', null],
    ['null for email', 'email', null],
    ['a string for metadata', 'metadata', '{"plan":"pro"}'],
    ['an array for metadata', 'metadata', [{ plan: 'pro' }]],
    ['a number for metadata', 'metadata', 5],
    ['null for metadata', 'metadata', null],
  ];
  for (const [what, field, value] of cases) {
    test(`${what}: 400 parameter_invalid, param ${field}`, async () => {
      await refused(create(customerBody('cus_new', { [field]: value })), 400, 'parameter_invalid', field);
    });
  }
});

describe('create: lengths', () => {
  test('customer_id of 256 characters', async () => {
    await refused(create(customerBody('c'.repeat(256))), 400, 'parameter_invalid', 'customer_id');
  });

  test('empty customer_id', async () => {
    await refused(create(customerBody('')), 400, 'parameter_invalid', 'customer_id');
  });

  test('name of 513 characters', async () => {
    await refused(
      create(customerBody('cus_new', { name: 'n'.repeat(513) })),
      400,
      'parameter_invalid',
      'name',
    );
  });

  test('email of 321 characters', async () => {
    const email = `${'e'.repeat(321 - '@example.com'.length)}@example.com`;
    assert.equal(email.length, 321);
    await refused(create(customerBody('cus_new', { email })), 400, 'parameter_invalid', 'email');
  });

  test('a metadata key of 65 characters, named in param', async () => {
    const key = 'k'.repeat(65);
    await refused(
      create(customerBody('cus_new', { metadata: { [key]: 1 } })),
      400,
      'parameter_invalid',
      `metadata.${key}`,
    );
  });

  test('an empty metadata key', async () => {
    await refused(
      create(customerBody('cus_new', { metadata: { '': 1 } })),
      400,
      'parameter_invalid',
      'metadata',
    );
  });

  test('every limit is inclusive: the largest allowed values are accepted', async () => {
    const id = 'i'.repeat(255);
    const email = `${'e'.repeat(320 - '@example.com'.length)}@example.com`;
    const metadata = { ...manyKeys(49), ['m'.repeat(64)]: true };
    const res = await t.api.post('/api/customers', {
      customer_id: id,
      name: 'n'.repeat(512),
      email,
      metadata,
    });
    assert.equal(res.status, 201, res.raw);
    assert.deepEqual((await t.api.get(`/api/customers/${id}`)).body, res.body);
    const sized = await t.api.post(
      '/api/customers',
      customerBody('cus_16k', { metadata: metadataOfSize(16 * 1024) }),
    );
    assert.equal(sized.status, 201, sized.raw);
    assert.equal((await t.api.delete(`/api/customers/${id}`)).status, 200);
    assert.equal((await t.api.delete('/api/customers/cus_16k')).status, 200);
  });
});

describe('create: blank names', () => {
  for (const [what, name] of [
    ['empty', ''],
    ['spaces', '   '],
    ['tabs and newlines', '\t\n\r'],
    ['unicode spaces', '\u00a0\u2003\u3000'],
  ]) {
    test(`${what}: 400 parameter_invalid, param name`, async () => {
      await refused(create(customerBody('cus_new', { name })), 400, 'parameter_invalid', 'name');
    });
  }
});

describe('create: characters customer_id may not contain', () => {
  const bad: [string, string][] = [
    ['a space', 'cus 1'],
    ['a leading space', ' cus1'],
    ['a tab', 'cus\t1'],
    ['a newline', 'cus\n1'],
    ["'/'", 'cus/1'],
    ["'?'", 'cus?1'],
    ["'#'", 'cus#1'],
    ['NUL', 'cus\u00001'],
    ['a control character', 'cus\u00011'],
    ['DEL', 'cus\u007f1'],
    ['a C1 control character (NEL)', 'cus\u00851'],
    ['a C1 control character (APC)', 'cus\u009f1'],
    ['a no-break space', 'cus\u00a01'],
    ['an em space', 'cus\u20031'],
    ['a line separator', 'cus\u20281'],
    ['an ideographic space', 'cus\u30001'],
    ['a byte order mark', 'cus\ufeff1'],
  ];
  for (const [what, id] of bad) {
    test(`${what}: 400 parameter_invalid, param customer_id`, async () => {
      await refused(create(customerBody(id)), 400, 'parameter_invalid', 'customer_id');
    });
  }
});

describe('create: email addresses', () => {
  const bad: [string, string][] = [
    ['empty', ''],
    ['no @', 'ana.example.com'],
    ['two @ in a row', 'ana@@example.com'],
    ['two @ apart', 'ana@team@example.com'],
    ['no dot in the domain', 'ana@localhost'],
    ['a trailing dot', 'ana@example.'],
    ['a domain starting with a dot', 'ana@.example.com'],
    ['an empty domain label', 'ana@example..com'],
    ['nothing before @', '@example.com'],
    ['a space', 'ana @example.com'],
    ['a newline', 'ana@example.com\n'],
  ];
  for (const [what, email] of bad) {
    test(`${what}: 400 parameter_invalid, param email`, async () => {
      await refused(create(customerBody('cus_new', { email })), 400, 'parameter_invalid', 'email');
    });
  }
});

describe('create: metadata limits', () => {
  test('51 keys', async () => {
    await refused(
      create(customerBody('cus_new', { metadata: manyKeys(51) })),
      400,
      'parameter_invalid',
      'metadata',
    );
  });

  test('one byte over 16 KiB serialized', async () => {
    await refused(
      create(customerBody('cus_new', { metadata: metadataOfSize(16 * 1024 + 1) })),
      400,
      'parameter_invalid',
      'metadata',
    );
  });

  test('size counts bytes, not characters', async () => {
    const metadata = { big: 'é'.repeat(8200) }; // 8,200 characters, 16,400 bytes
    await refused(create(customerBody('cus_new', { metadata })), 400, 'parameter_invalid', 'metadata');
  });
});

describe('create: unknown fields and duplicates', () => {
  test('an unknown field: 400 parameter_unknown naming it', async () => {
    await refused(create(customerBody('cus_new', { plan: 'pro' })), 400, 'parameter_unknown', 'plan');
  });

  test('output-only fields are unknown on input', async () => {
    for (const field of ['id', 'created_at', 'updated_at']) {
      const body = customerBody('cus_new', { [field]: 'x' });
      await refused(create(body), 400, 'parameter_unknown', field);
    }
  });

  test('a second create with the same id: 409 customer_exists, param customer_id, nothing overwritten', async () => {
    const res = await refused(
      create(customerBody('cus_base', { name: 'Someone else', metadata: { plan: 'free' } })),
      409,
      'customer_exists',
      'customer_id',
    );
    assert.match(res.body.error.message, /cus_base/);
    const current = await t.api.get('/api/customers/cus_base');
    assert.equal(current.body.name, 'Customer cus_base');
    assert.deepEqual(current.body.metadata, { plan: 'pro' });
  });
});

describe('patch: refused updates', () => {
  test('an empty object: 400 parameter_missing', async () => {
    await refused(patchBase({}), 400, 'parameter_missing', undefined);
  });

  test('no body at all: 400 parameter_missing', async () => {
    await refused(
      () => t.api.request('PATCH', '/api/customers/cus_base'),
      400,
      'parameter_missing',
      undefined,
    );
  });

  const cases: [string, string, unknown][] = [
    ['a number for name', 'name', 42],
    ['null for name', 'name', null],
    ['an array for name', 'name', ['Ana']],
    ['an empty name', 'name', ''],
    ['a blank name', 'name', ' \t '],
    ['a name of 513 characters', 'name', 'n'.repeat(513)],
    ['null for email', 'email', null],
    ['an email without @', 'email', 'ana.example.com'],
    ['an email with two @', 'email', 'ana@x@example.com'],
    ['an email without a dot in the domain', 'email', 'ana@example'],
    ['an email with a trailing dot', 'email', 'ana@example.com.'],
    ['an email of 321 characters', 'email', `${'e'.repeat(309)}@example.com`],
    ['a string for metadata', 'metadata', 'plan=pro'],
    ['an array for metadata', 'metadata', ['plan']],
    ['null for metadata', 'metadata', null],
    ['51 metadata keys', 'metadata', manyKeys(51)],
    ['metadata over 16 KiB', 'metadata', metadataOfSize(16 * 1024 + 1)],
  ];
  for (const [what, field, value] of cases) {
    test(`${what}: 400 parameter_invalid, param ${field}`, async () => {
      await refused(patchBase({ [field]: value }), 400, 'parameter_invalid', field);
    });
  }

  test('a metadata key of 65 characters, named in param', async () => {
    const key = 'k'.repeat(65);
    await refused(patchBase({ metadata: { [key]: 'v' } }), 400, 'parameter_invalid', `metadata.${key}`);
  });

  test('one bad field refuses the whole update', async () => {
    await refused(patchBase({ name: 'Fine', email: 'not-an-email' }), 400, 'parameter_invalid', 'email');
  });

  for (const field of ['customer_id', 'id', 'created_at', 'plan']) {
    test(`${field} is not accepted: 400 parameter_unknown, param ${field}`, async () => {
      await refused(patchBase({ name: 'Fine', [field]: 'x' }), 400, 'parameter_unknown', field);
    });
  }
});

describe('patch: the merged metadata must obey the limits', () => {
  before(async () => {
    const res = await t.api.post('/api/customers', customerBody('cus_full', { metadata: manyKeys(30, 'a') }));
    assert.equal(res.status, 201);
  });

  test('a merge that would reach 51 keys: 400, param metadata', async () => {
    await refused(
      () => t.api.patch('/api/customers/cus_full', { metadata: manyKeys(21, 'b') }),
      400,
      'parameter_invalid',
      'metadata',
    );
  });

  test('a merge that would grow past 16 KiB: 400, param metadata', async () => {
    const half = 'x'.repeat(9000);
    const first = await t.api.patch('/api/customers/cus_full', { metadata: { one: half } });
    assert.equal(first.status, 200);
    await refused(
      () => t.api.patch('/api/customers/cus_full', { metadata: { two: half } }),
      400,
      'parameter_invalid',
      'metadata',
    );
    const undo = await t.api.patch('/api/customers/cus_full', { metadata: { one: null } });
    assert.equal(undo.status, 200);
  });

  test('removing keys in the same merge makes room (the limit applies to the result)', async () => {
    const patch = { ...manyKeys(21, 'b'), a0: null, a1: null };
    const res = await t.api.patch('/api/customers/cus_full', { metadata: patch });
    assert.equal(res.status, 200, res.raw);
    assert.equal(Object.keys(res.body.metadata).length, 49);
  });
});

describe('unknown customers', () => {
  test('get: 404 customer_not_found', async () => {
    assertError(await t.api.get('/api/customers/cus_nobody'), 404, 'customer_not_found', undefined);
  });

  test('patch: 404 customer_not_found, and nothing is created', async () => {
    await refused(
      () => t.api.patch('/api/customers/cus_nobody', { name: 'Ghost' }),
      404,
      'customer_not_found',
      undefined,
    );
  });

  test('delete: 404 customer_not_found, and nothing else is removed', async () => {
    await refused(() => t.api.delete('/api/customers/cus_nobody'), 404, 'customer_not_found', undefined);
  });

  test('a deleted customer is unknown to get, patch and delete', async () => {
    assert.equal((await t.api.post('/api/customers', customerBody('cus_gone'))).status, 201);
    assert.equal((await t.api.delete('/api/customers/cus_gone')).status, 200);
    assertError(await t.api.get('/api/customers/cus_gone'), 404, 'customer_not_found', undefined);
    await refused(
      () => t.api.patch('/api/customers/cus_gone', { name: 'Back' }),
      404,
      'customer_not_found',
      undefined,
    );
    await refused(() => t.api.delete('/api/customers/cus_gone'), 404, 'customer_not_found', undefined);
  });

  test('ids that only differ by case or encoding are different customers', async () => {
    assertError(await t.api.get('/api/customers/CUS_BASE'), 404, 'customer_not_found', undefined);
    assertError(await t.api.get('/api/customers/cus_base%2Fx'), 404, 'customer_not_found', undefined);
  });
});

describe('list: query parameters', () => {
  for (const limit of ['0', '101', '-1', '1.5', 'abc', '', '1e1', '0x10', '+5', '%205', '5%20', 'null']) {
    test(`limit=${limit}: 400 parameter_invalid, param limit`, async () => {
      assertError(await t.api.get(`/api/customers?limit=${limit}`), 400, 'parameter_invalid', 'limit');
    });
  }

  test('limit given twice: 400 parameter_invalid, param limit', async () => {
    assertError(await t.api.get('/api/customers?limit=5&limit=6'), 400, 'parameter_invalid', 'limit');
  });

  test('starting_after longer than any id: 400 parameter_invalid, param starting_after', async () => {
    const res = await t.api.get(`/api/customers?starting_after=${'s'.repeat(256)}`);
    assertError(res, 400, 'parameter_invalid', 'starting_after');
  });

  test('an unknown query parameter: 400 parameter_unknown naming it', async () => {
    assertError(await t.api.get('/api/customers?cursor=abc'), 400, 'parameter_unknown', 'cursor');
    assertError(await t.api.get('/api/customers?limit=5&Limit=5'), 400, 'parameter_unknown', 'Limit');
  });
});
