// Hostile requests to every health-score and settings route (see harness.ts, requests.ts and bodies.ts).
import { after, before, describe, test } from 'node:test';
import { Harness, ROUTES } from './harness.ts';

describe('fuzz: health-score and settings routes', () => {
  let h: Harness;
  before(async () => {
    h = await Harness.start();
  });
  after(() => h.close());

  for (const route of [...ROUTES.scores, ...ROUTES.settings]) {
    test(`${route.method} ${route.path}: never a 5xx, always the envelope, a refusal changes nothing`, () =>
      h.check(route, 30));
  }
});
