// The typed client (dist/client, `npm run build:client`) against a Vitals in a container
// (test/image/run.sh), as README.md's "Typed client" uses it: a customer created, a score posted
// in a batch, the list walked. Exits 1 on any difference.
import assert from 'node:assert/strict';
import { VitalsClient } from 'vitals/client';

const { VITALS, KEY } = process.env;
const vitals = new VitalsClient({ url: VITALS as string, key: KEY as string });
await vitals.customers.create({
  customer_id: 'piedpiper',
  name: 'Pied Piper',
  email: 'ops@piedpiper.example',
});
await vitals.healthScores.batch([{ customer_id: 'piedpiper', factors: { usage: 0.4, support: 0.9 } }]);
const found: string[] = [];
for await (const customer of vitals.customers.list({ search: 'pied' })) found.push(customer.id);
assert.deepEqual(found, ['piedpiper']);
console.log('typed client: created piedpiper, posted its score, listed it');
