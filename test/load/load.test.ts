// A bounded mixed workload in CI (issue 7): reads, writes and score updates with a subscribed
// webhook at 50 connections, paced at 500 requests/s, for 60 s (after a 75 s warm-up) against a
// real server process. Zero 5xx, zero events lost, and the live heap (after a full collection)
// grows by less than 10% after warm-up (RELIABILITY.md, "Load"). `npm run soak` runs it for 30 minutes.
// VITALS_LOAD_SECONDS shortens or lengthens it; the backend follows VITALS_TEST_BACKEND.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { soak } from '../../bench/soak.ts';
import { appBackend } from '../helpers/stores.ts';

const SECONDS = Number(process.env.VITALS_LOAD_SECONDS ?? 60);

test(`mixed load, 50 connections, ${SECONDS} s on ${appBackend()}: no 5xx, nothing lost, no leak`, {
  // The run, the 75 s warm-up, up to 10 minutes of draining the outbox, and the set-up.
  timeout: (SECONDS + 750) * 1000,
}, async () => {
  const r = await soak({
    seconds: SECONDS,
    // 45 s was too short on SQLite once the writer thread came: across nine CI runs the warm-up
    // peak was 332-386 MB and every run ended at 389-420 MB with a shrinking heap, so 45 s
    // measured 9-22% "growth" that was the process still reaching its size (RELIABILITY.md, "Load").
    warmupSeconds: 75,
    connections: 50,
    rate: 500,
    backend: appBackend(),
    // The SQLite writer's page cache (128 MB by default) fills as the database grows, which this
    // run's writes make it do throughout: 446 → 585 MB over 180 s measured, against 460 → 494 MB
    // with 16 MB, both with a flat heap. A cache filling is no leak, so the run takes a small one
    // and what grows past it is what is measured (docs/operations.md, "Memory").
    env: { VITALS_SQLITE_CACHE_MB: '16' },
  });
  console.log(`load: ${JSON.stringify(r)}`);
  // autocannon paces the rate but the count over a timed run varies: a bound, not a number.
  assert.ok(r.requests > 0);
  assert.equal(r.status5xx, 0, '5xx answers');
  assert.equal(r.errors, 0, 'connection errors');
  assert.equal(r.non2xx, 0, 'every request of the mix is valid');
  assert.equal(r.lost, 0, `${r.lost} of ${r.events} events not delivered`);
  assert.ok(
    r.liveHeapGrowth < 0.1,
    `the live heap grew ${(r.liveHeapGrowth * 100).toFixed(1)}% after warm-up (${r.liveHeapWarmMb.toFixed(1)} → ${r.liveHeapEndMb.toFixed(1)} MB)`,
  );
  // RSS carries the garbage V8 has yet to collect (70-230 MB under this mix: 435 → 529 MB once
  // with a flat live heap), so it is bounded only against a gross native leak.
  assert.ok(
    r.rssGrowth < 0.5,
    `RSS grew ${(r.rssGrowth * 100).toFixed(1)}% after warm-up (${r.rssWarmMb.toFixed(0)} → ${r.rssEndMb.toFixed(0)} MB)`,
  );
});
