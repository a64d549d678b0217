// Hostile request bodies as raw JSON text (so that they can say what JSON.stringify never
// writes: 1e309, -0, duplicate keys, 10k levels of nesting), for the property tests: random ones
// (`bodyArb`, mostly a valid body changed in one way) and a fixed corpus every route meets.
import fc from 'fast-check';

const MiB = 1024 * 1024;

/** Lone surrogates, controls, astral characters, RTL marks, BOMs, NULs: a unit for fc.string. */
const oddChar = fc.oneof(
  fc.integer({ min: 0xd800, max: 0xdfff }).map((c) => String.fromCharCode(c)),
  fc.integer({ min: 0, max: 0x1f }).map((c) => String.fromCharCode(c)),
  fc.constantFrom('\u007f', '\u0085', '\u00a0', '\u2028', '\u2029', '\u200b', '\u202e', '\ufeff', '\uffff'),
  fc.constantFrom('"', '\\', '/', '?', '#', '%', '&', '=', '+', ';', ' ', '.', '..', '\u{1f600}', '\u0301'),
);
/** Any string at all, lone surrogates included (JSON.stringify escapes them as \udxxx). */
export const anyString = fc.oneof(
  { weight: 3, arbitrary: fc.string({ unit: 'binary', maxLength: 40 }) },
  {
    weight: 3,
    arbitrary: fc.string({
      unit: fc.oneof(oddChar, fc.string({ unit: 'grapheme', maxLength: 1 })),
      maxLength: 40,
    }),
  },
  { weight: 1, arbitrary: fc.string({ unit: 'grapheme', minLength: 200, maxLength: 2000 }) },
  {
    weight: 1,
    arbitrary: fc.constantFrom('', ' ', '__proto__', 'constructor', 'prototype', 'toString', 'null'),
  },
);

const deep = (open: string, close: string, n: number) => open.repeat(n) + close.repeat(n);

const HUGE = {
  // A string value that keeps the body just under 1 MiB, and bodies just over it.
  underLimit: (key: string) => `{"${key}":"${'a'.repeat(MiB - key.length - 16)}"}`,
  overLimit: `{"name":"${'a'.repeat(MiB)}"}`,
  metadataOver16KiB: `{"metadata":{"big":"${'x'.repeat(17 * 1024)}"}}`,
  manyKeys: `{"metadata":{${Array.from({ length: 5000 }, (_, i) => `"k${i}":${i}`).join(',')}}}`,
};
const NESTED = [
  deep('[', ']', 10_000),
  `{"metadata":{"a":${deep('[', ']', 10_000)}}}`,
  `{"factors":${deep('{"a":', '}', 5_000).replace(/\{"a":\}/, '{"a":1}')}}`,
  `{"metadata":{"a":${'{"b":'.repeat(2_000)}1${'}'.repeat(2_000)}}}`,
  `{"metadata":{"a":${deep('[', ']', 65)}}}`,
  `{"metadata":{"a":${deep('[', ']', 60)}}}`,
  `{"events":${deep('[', ']', 100_000)}}`,
];

/** Values nested far deeper than any body needs, as raw JSON text. */
const deepValue = fc.oneof(
  fc.integer({ min: 60, max: 70 }).map((n) => deep('[', ']', n)),
  fc.constantFrom(
    deep('[', ']', 10_000),
    `${'{"a":'.repeat(5_000)}1${'}'.repeat(5_000)}`,
    `${'[{"a":'.repeat(3_000)}null${'}]'.repeat(3_000)}`,
  ),
);

/** JSON values as text, including what JSON.stringify never writes: 1e309, -0, 1e-400, huge integers. */
export const jsonText: fc.Arbitrary<string> = fc.oneof(
  { weight: 1, arbitrary: deepValue },
  { weight: 4, arbitrary: fc.jsonValue({ maxDepth: 3 }).map((v) => JSON.stringify(v)) },
  { weight: 2, arbitrary: anyString.map((s) => JSON.stringify(s)) },
  {
    weight: 2,
    arbitrary: fc.constantFrom(
      '1e309',
      '-1e309',
      '-0',
      '1e-400',
      '-1e-400',
      '123456789012345678901234567890',
      '-9007199254740993',
      '0.1e1',
      '1E0',
      '0.5000000000000001',
      '1.0',
      '0',
      '1',
      '0.5',
      '"0.5"',
      'true',
      'null',
      '[]',
      '{}',
      '[0.5]',
      '{"__proto__":{"polluted":1}}',
      '{"constructor":{"prototype":{"polluted":1}}}',
      '{"prototype":{"polluted":1}}',
      '{"\\u005f_proto__":{"polluted":1}}',
      '{"a":1,"a":2}',
      '"\\ud800"',
      '"\\udc00\\ud800"',
      '"a\\u0000b"',
      `"${'x'.repeat(70_000)}"`,
    ),
  },
  { weight: 1, arbitrary: fc.double().map((d) => (Number.isFinite(d) ? JSON.stringify(d) : String(d))) },
  { weight: 1, arbitrary: fc.bigInt().map((b) => b.toString()) },
);

const object = (entries: [string, string][]) =>
  `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${v}`).join(',')}}`;

/** `{"a":1}` with one more entry: `{"a":1,"k":v}` (an existing key becomes a duplicate). */
const withEntry = (objectText: string, key: string, value: string) =>
  `${objectText.slice(0, -1)}${objectText === '{}' ? '' : ','}${JSON.stringify(key)}:${value}}`;

/** A valid body (as [key, JSON text] pairs), changed in one hostile way. */
function mutated(valid: [string, string][]): fc.Arbitrary<string> {
  const keys = valid.map(([k]) => k);
  const someKey = keys.length > 0 ? fc.constantFrom(...keys) : fc.constant('name');
  const objectKeys = valid.filter(([, v]) => v.startsWith('{')).map(([k]) => k);
  const extraKey = fc.oneof(
    fc.constantFrom('__proto__', 'constructor', 'prototype', 'id', 'account_id', 'created_at', 'secret', ''),
    anyString,
  );
  const innerKey = fc.oneof(
    fc.constantFrom('usage', 'support', 'plan', '__proto__', 'constructor', 'prototype', '', 'a'.repeat(65)),
    anyString,
  );
  const mutations: fc.WeightedArbitrary<string>[] = [
    // One field replaced by any value.
    {
      weight: 4,
      arbitrary: fc
        .tuple(someKey, jsonText)
        .map(([key, v]) => object(valid.map(([k, old]) => [k, k === key ? v : old]))),
    },
    // One field dropped.
    { weight: 1, arbitrary: someKey.map((key) => object(valid.filter(([k]) => k !== key))) },
    // An extra key.
    { weight: 1, arbitrary: fc.tuple(extraKey, jsonText).map(([k, v]) => object([...valid, [k, v]])) },
    // A duplicate key: JSON.parse keeps the last one.
    {
      weight: 1,
      arbitrary: fc.tuple(someKey, jsonText, fc.boolean()).map(([key, v, first]) => {
        const dup: [string, string] = [key, v];
        return object(first ? [dup, ...valid] : [...valid, dup]);
      }),
    },
    // The whole body wrapped in an array, or sent as a JSON string.
    { weight: 1, arbitrary: fc.constantFrom(`[${object(valid)}]`, JSON.stringify(object(valid))) },
  ];
  if (objectKeys.length > 0) {
    // One entry more inside an object field (factors.x, metadata.x, weights.x): the rest stays valid.
    mutations.push({
      weight: 5,
      arbitrary: fc
        .tuple(fc.constantFrom(...objectKeys), innerKey, jsonText)
        .map(([key, inner, v]) =>
          object(valid.map(([k, old]) => [k, k === key ? withEntry(old, inner, v) : old])),
        ),
    });
  }
  return fc.oneof(...mutations);
}

const brokenJson = fc.oneof(
  fc.constantFrom(
    '{',
    '}',
    '{"a":}',
    '{"a":1,}',
    "{'a':1}",
    '{"a":NaN}',
    '{"a":Infinity}',
    '{"a":undefined}',
    '{"a":1}{"b":2}',
    '{"a":1} trailing',
    '/* comment */{}',
    '\ufeff{}',
    '{"a":"\u0001"}',
    '{"a":"\n"}',
    '{"a":"\\x41"}',
    '{"a":01}',
    '{"a":.5}',
    '{"a":+1}',
    '{"a":0x10}',
    'null',
    'true',
    '0',
    '"str"',
    '[]',
    '[{}]',
    '   ',
    '\u0000',
  ),
  fc.string({ unit: 'binary', maxLength: 200 }),
);

export const MULTIPART =
  '--x\r\nContent-Disposition: form-data; name="name"\r\n\r\nAna\r\n--x\r\nContent-Disposition: form-data; name="f"; filename="a.json"\r\nContent-Type: application/json\r\n\r\n{"name":"Ana"}\r\n--x--\r\n';
const multipart = fc.constant(MULTIPART);

/** A hostile body for a route whose valid body is `valid` (or that takes no body, when null). */
export function bodyArb(valid: [string, string][] | null): fc.Arbitrary<string | undefined> {
  const base = valid ?? [['name', '"x"']];
  return fc.oneof(
    { weight: 3, arbitrary: fc.constant(undefined) },
    { weight: 1, arbitrary: fc.constant('') },
    { weight: 8, arbitrary: mutated(base) },
    { weight: 3, arbitrary: jsonText },
    { weight: 2, arbitrary: brokenJson },
    { weight: 1, arbitrary: fc.constantFrom(...NESTED) },
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        HUGE.underLimit('name'),
        HUGE.underLimit(base[0]?.[0] ?? 'name'),
        HUGE.overLimit,
        HUGE.metadataOver16KiB,
        HUGE.manyKeys,
      ),
    },
    { weight: 1, arbitrary: multipart },
    { weight: 1, arbitrary: fc.constant(object(base)) },
  );
}

/** Values every route meets at least once, in every field of its body (see `corpus`). */
const SPECIAL_VALUES = [
  deep('[', ']', 10_000),
  `${'{"a":'.repeat(5_000)}1${'}'.repeat(5_000)}`,
  deep('[', ']', 65),
  `"${'é'.repeat(MiB / 2 - 100)}"`,
  `"${'x'.repeat(70_000)}"`,
  '1e309',
  '-0',
  '1e-400',
  '123456789012345678901234567890',
  '"\\ud800"',
  '"a\\u0000\\u001f\\u202e"',
  '{"__proto__":{"polluted":1}}',
  '{"constructor":{"prototype":{"polluted":1}}}',
  '"0.5"',
  'null',
  '[]',
];

/**
 * Bodies sent to every route whatever the random runs pick: each special value in each field
 * (and inside each object field), duplicate keys, every deep and huge body, broken JSON.
 */
export function corpus(valid: [string, string][] | null): string[] {
  const base = valid ?? [['name', '"x"']];
  const bodies: string[] = [];
  for (const [key, old] of base) {
    for (const v of SPECIAL_VALUES) {
      bodies.push(object(base.map(([k, o]) => [k, k === key ? v : o])));
      if (old.startsWith('{'))
        bodies.push(object(base.map(([k, o]) => [k, k === key ? withEntry(o, 'x', v) : o])));
    }
    bodies.push(object([...base, [key, '"dup"']]), object([[key, '"dup"'], ...base]));
  }
  bodies.push(
    ...NESTED,
    HUGE.underLimit(base[0]?.[0] ?? 'name'),
    HUGE.overLimit,
    HUGE.metadataOver16KiB,
    HUGE.manyKeys,
    '{"__proto__":{"polluted":1}}',
    '{"constructor":{"prototype":{"polluted":1}}}',
    '{"\\u005f_proto__":{"polluted":1}}',
    `[${object(base)}]`,
    '{',
    '\ufeff{}',
    '',
    'null',
  );
  return bodies;
}
