// Hostile requests to every customer route (harness.ts; what "hostile" means is in requests.ts
// and bodies.ts, what every answer must obey in rules.ts).
import { after, before, describe, test } from 'node:test';
import { Harness, ROUTES } from './harness.ts';

describe('fuzz: customer routes', () => {
  let h: Harness;
  before(async () => {
    h = await Harness.start();
  });
  after(() => h.close());

  for (const route of ROUTES.customers) {
    test(`${route.method} ${route.path}: never a 5xx, always the envelope, a refusal changes nothing`, () =>
      h.check(route, 40));
  }
});
