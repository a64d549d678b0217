// The import's batch cutting (src/transfer/batching.ts; docs/cli.md, "Import and export"), which
// the CLI and the dashboard share: rows the server merges when they share a request (a metric
// row's customer and instant) travel in the same batch, whole, wherever they are within the
// lookahead; a batch refused whole is halved between two such groups.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { groupKeyOf, type ItemResult, type Row, Sender } from '../../src/transfer/batching.ts';

const AT = '2026-03-01T00:00:00Z';

/** Sends `items` as rows, answering each batch with 200s; the batches as their rows' `customer_id:metric`. */
async function batches(
  items: Record<string, unknown>[],
  opts: { maxItems: number; lookahead?: { rows: number; bytes: number }; refuse?: string },
): Promise<string[][]> {
  const sent: string[][] = [];
  const results: [number, ItemResult][] = [];
  const sender = new Sender({
    post: async (batch) => {
      const ids = batch.map((i) => `${i.customer_id}:${Object.keys(i.values as object).join('+')}`);
      sent.push(ids);
      if (opts.refuse && batch.length > 1 && batch.some((i) => i.customer_id === opts.refuse)) {
        throw new Error('refused whole');
      }
      return batch.map((i) => ({ customer_id: String(i.customer_id), status: 200 }));
    },
    refusedWhole: (error) =>
      error instanceof Error && error.message === 'refused whole'
        ? { status: 400, error: { code: 'invalid_json', message: 'no' } }
        : null,
    onResult: (row: Row, result) => results.push([row.line, result]),
    inFlight: 1,
    maxItems: opts.maxItems,
    groupKey: groupKeyOf('metrics'),
    lookahead: opts.lookahead,
  });
  for (const [i, item] of items.entries()) await sender.add({ line: i + 2, item });
  await sender.finish();
  assert.deepEqual(
    results.map(([line]) => line).sort((a, b) => a - b),
    items.map((_, i) => i + 2),
    'every row answered once',
  );
  return sent;
}

const row = (customer: string, metric: string, at = AT) => ({
  customer_id: customer,
  values: { [metric]: 1 },
  at,
});

describe('import batches', () => {
  test('rows of one customer and instant far apart in the file go in one batch, at the first one’s place', async () => {
    const items = [
      row('a', 'logins'),
      row('b', 'logins'),
      row('c', 'logins'),
      row('a', 'tickets'),
      row('b', 'tickets'),
      // The same instant written another way is the same instant.
      row('c', 'tickets', '2026-03-01T00:00:00.000+00:00'),
    ];
    assert.deepEqual(await batches(items, { maxItems: 3, lookahead: { rows: 10, bytes: 1e6 } }), [
      ['a:logins', 'a:tickets'],
      ['b:logins', 'b:tickets'],
      ['c:logins', 'c:tickets'],
    ]);
  });

  test('another instant, or another customer, is another group', async () => {
    const items = [row('a', 'logins'), row('a', 'tickets', '2026-03-02T00:00:00Z'), row('b', 'logins')];
    assert.deepEqual(await batches(items, { maxItems: 2, lookahead: { rows: 10, bytes: 1e6 } }), [
      ['a:logins', 'a:tickets'],
      ['b:logins'],
    ]);
  });

  test('without lookahead, a full batch still never splits the rows of one customer and instant side by side', async () => {
    const items = [
      row('a', 'logins'),
      row('a', 'tickets'),
      row('b', 'logins'),
      row('b', 'tickets'),
      row('c', 'logins'),
      row('c', 'tickets'),
    ];
    assert.deepEqual(await batches(items, { maxItems: 3 }), [
      ['a:logins', 'a:tickets'],
      ['b:logins', 'b:tickets'],
      ['c:logins', 'c:tickets'],
    ]);
  });

  test('rows further apart than the lookahead go in different batches', async () => {
    const items = [row('a', 'logins'), row('b', 'logins'), row('c', 'logins'), row('a', 'tickets')];
    assert.deepEqual(await batches(items, { maxItems: 1, lookahead: { rows: 1, bytes: 1e6 } }), [
      ['a:logins'],
      ['b:logins'],
      ['c:logins'],
      ['a:tickets'],
    ]);
  });

  test('a batch refused whole is halved between two groups, not inside one', async () => {
    const items = [row('a', 'logins'), row('a', 'tickets'), row('a', 'seats'), row('bad', 'logins')];
    assert.deepEqual(await batches(items, { maxItems: 4, refuse: 'bad' }), [
      ['a:logins', 'a:tickets', 'a:seats', 'bad:logins'],
      ['a:logins', 'a:tickets', 'a:seats'],
      ['bad:logins'],
    ]);
  });
});
