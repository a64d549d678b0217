// pgArray (src/store/postgres/text.ts): the array literal a bulk write sends is read back by
// PostgreSQL as the list it was made of, on the fast path and on the long one.
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import postgres from 'postgres';
import { pgArray } from '../../src/store/postgres/text.ts';
import { backendSkip, POSTGRES_URL } from '../helpers/stores.ts';

describe('pgArray on PostgreSQL', { skip: backendSkip('postgres') }, () => {
  const sql = postgres(POSTGRES_URL as string, { onnotice: () => {}, max: 1 });
  after(() => sql.end());

  // Read back as the bulk writes read it, by unnest (postgres.js's own parser of an array result
  // takes an unquoted NULL for the text 'NULL').
  const unnested = async (list: readonly (string | number | boolean | null)[], type: string) => {
    const rows = await sql.unsafe(
      `SELECT x FROM unnest($1::${type}[]) WITH ORDINALITY AS t(x, n) ORDER BY n`,
      [pgArray(list)],
    );
    return rows.map((r) => r.x as unknown);
  };
  const texts = (list: readonly (string | null)[]) => unnested(list, 'text');

  test('text: quotes, backslashes, commas, braces, NULL and null, unicode, JSON texts', async () => {
    const list = [
      'plain',
      'with "quotes"',
      'back\\slash',
      'a,b',
      '{braces}',
      'NULL',
      'null',
      '',
      ' spaced ',
      'emoji 🙂 and ü',
      null,
      JSON.stringify({ reason: 'said "no"', path: 'C:\\x' }),
    ];
    assert.deepEqual(await texts(list), list);
  });

  test('text JSON writes its own way (control characters, lone surrogates) takes the long way, unchanged', async () => {
    const list = ['line\nbreak', 'tab\there', '\u0001', JSON.stringify({ note: 'a\nb' }), '\\n'];
    assert.deepEqual(await texts(list), list);
    // A lone surrogate has no UTF-8: it arrives as U+FFFD, as in any text parameter.
    const [lone] = await sql`SELECT ${'lone \ud800'}::text AS x`;
    assert.deepEqual(await texts(['lone \ud800']), [lone?.x]);
  });

  test('numbers: integers, fractions, exponents, null; not finite ones too', async () => {
    const floats = [0, -1.5, 0.123456789012345, 1e-7, 1.7976931348623157e308, null];
    assert.deepEqual(await unnested(floats, 'float8'), floats);
    const times = [0, 1795738311344, -86400000];
    assert.deepEqual((await unnested(times, 'int8')).map(Number), times);
    const odd = [Number.NaN, Number.POSITIVE_INFINITY, 1];
    assert.deepEqual(await unnested(odd, 'float8'), odd);
  });

  test('booleans and null, on both paths (a list with a control character in it goes element by element)', async () => {
    const flags = [true, false, null, true];
    assert.deepEqual(await unnested(flags, 'bool'), flags);
    const [mixed] = await sql.unsafe('SELECT ($1::text[])[2] AS x', [pgArray(['line\nbreak', true, false])]);
    assert.equal(mixed?.x, 'true');
  });

  test('an empty list is an empty array', async () => {
    assert.deepEqual(await texts([]), []);
  });
});
