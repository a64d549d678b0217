import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { iso, nextTimestamp, parseInstant } from '../../src/domain/time.ts';

test('iso formats exactly as Date#toISOString across the whole range', () => {
  fc.assert(
    fc.property(fc.integer({ min: -62198755200000, max: 253402300799999 }), (ms) => {
      assert.equal(iso(ms), new Date(ms).toISOString());
    }),
    { numRuns: 5000 },
  );
  for (const ms of [0, 1, 999, 1000, 86_399_999, 86_400_000, Date.UTC(2026, 10, 21, 23, 59, 59, 999)]) {
    assert.equal(iso(ms), new Date(ms).toISOString());
  }
});

test('nextTimestamp is strictly later than the previous value', () => {
  assert.equal(nextTimestamp(10, 5), 10);
  assert.equal(nextTimestamp(5, 5), 6);
  assert.equal(nextTimestamp(3, 5), 6);
});

test('parseInstant reads back every instant iso writes, and the same text with any offset', () => {
  fc.assert(
    fc.property(
      fc.integer({ min: 0, max: 253402300799999 }),
      fc.integer({ min: -(23 * 60 + 59), max: 23 * 60 + 59 }),
      (ms, offsetMinutes) => {
        assert.equal(parseInstant(iso(ms)), ms);
        // The same instant as local time at that offset: local = ms + offset.
        const local = new Date(ms + offsetMinutes * 60_000).toISOString().slice(0, 23);
        if (local.startsWith('+') || local.startsWith('-')) return;
        const abs = Math.abs(offsetMinutes);
        const zone = `${offsetMinutes < 0 ? '-' : '+'}${String(Math.floor(abs / 60)).padStart(2, '0')}:${String(abs % 60).padStart(2, '0')}`;
        assert.equal(parseInstant(`${local}${zone}`), ms, `${local}${zone}`);
      },
    ),
    { numRuns: 5000 },
  );
});

test('parseInstant agrees with Date.parse wherever the date and time exist, and refuses the rest', () => {
  const two = (n: number) => String(n).padStart(2, '0');
  fc.assert(
    fc.property(
      fc.integer({ min: 0, max: 9999 }),
      fc.integer({ min: 0, max: 14 }),
      fc.integer({ min: 0, max: 33 }),
      fc.integer({ min: 0, max: 25 }),
      fc.integer({ min: 0, max: 61 }),
      fc.integer({ min: 0, max: 61 }),
      (year, month, day, hour, minute, second) => {
        const text = `${String(year).padStart(4, '0')}-${two(month)}-${two(day)}T${two(hour)}:${two(minute)}:${two(second)}Z`;
        const leap = (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
        const days = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1] ?? 0;
        const real = month >= 1 && day >= 1 && day <= days && hour <= 23 && minute <= 59 && second <= 59;
        assert.equal(parseInstant(text), real ? Date.parse(text) : null, text);
      },
    ),
    { numRuns: 20000 },
  );
});

test('parseInstant: the calendar at its edges', () => {
  const accepted: [string, string][] = [
    ['2024-02-29T00:00:00Z', '2024-02-29T00:00:00.000Z'],
    ['2000-02-29T00:00:00Z', '2000-02-29T00:00:00.000Z'],
    ['2026-12-31T23:59:59.999Z', '2026-12-31T23:59:59.999Z'],
    ['2026-01-01T00:00:00+14:00', '2025-12-31T10:00:00.000Z'],
    ['2026-01-01T00:00:00-12:00', '2026-01-01T12:00:00.000Z'],
    ['2026-01-01T00:00:00+23:59', '2025-12-31T00:01:00.000Z'],
    ['2026-01-01T00:00:00-00:00', '2026-01-01T00:00:00.000Z'],
    ['2026-01-01T00:00Z', '2026-01-01T00:00:00.000Z'],
    ['2026-01-01T00:00:00.9999999Z', '2026-01-01T00:00:00.999Z'],
    ['0050-06-15T00:00:00Z', '0050-06-15T00:00:00.000Z'],
  ];
  for (const [text, instant] of accepted) assert.equal(iso(parseInstant(text) ?? Number.NaN), instant, text);
  for (const text of [
    '2026-02-31T00:00:00Z',
    '2025-02-29T00:00:00Z',
    '1900-02-29T00:00:00Z',
    '2100-02-29T00:00:00Z',
    '2026-04-31T00:00:00Z',
    '2026-01-01T24:00:00Z',
    '2026-01-01T23:60:00Z',
    '2026-01-01T23:59:60Z',
    '2026-13-01T00:00:00Z',
    '2026-00-01T00:00:00Z',
    '2026-01-00T00:00:00Z',
    '2026-01-01T00:00:00+24:00',
    '2026-01-01T00:00:00+05:60',
    '2026-01-01T00:00:00',
    '2026-01-01',
    '2026-01-01t00:00:00z',
    '2026-01-01 00:00:00Z',
    '+002026-01-01T00:00:00Z',
    '',
  ]) {
    assert.equal(parseInstant(text), null, text);
  }
});
