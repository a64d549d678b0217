// Hostile requests to every webhook and event route and to the operational endpoints
// (see harness.ts, requests.ts and bodies.ts).
import { after, before, describe, test } from 'node:test';
import { Harness, ROUTES } from './harness.ts';

describe('fuzz: webhook, event and operational routes', () => {
  let h: Harness;
  before(async () => {
    h = await Harness.start();
  });
  after(() => h.close());

  for (const route of [...ROUTES.webhooks, ...ROUTES.events, ...ROUTES.operations]) {
    test(`${route.method} ${route.path}: never a 5xx, always the envelope, a refusal changes nothing`, () =>
      h.check(route, 25));
  }
});
