// A request body's JSON, read with its depth checked before anything is built (docs/api.md,
// "Nesting"). JSON.parse of a body nested millions of levels deep runs for over 2 s on the main
// thread and leaves the process at ~2 GB before it could be refused afterwards; one pass over the
// text refuses it at its 65th bracket instead. The body's size is the route's bodyLimit, checked
// by Fastify while the body arrives (1 MiB, 8 MiB for the batches).
import sjson from 'secure-json-parse';
import { ApiError } from '../domain/errors.ts';

/** Arrays and objects nest at most this deep in a request body; the top-level value is level 1. */
export const MAX_BODY_DEPTH = 64;
/**
 * A request body holds at most this many arrays and objects. JSON.parse's time grows with the
 * values it builds: 8 MiB of flat empty arrays (2.8 million) hold the event loop 320 ms where 8 MiB
 * of a real batch takes 55 ms; 250,000 is 250 per item of a full 1,000-item batch.
 */
export const MAX_BODY_CONTAINERS = 250_000;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;

const tooMany = () =>
  new ApiError(
    'invalid_json',
    `The request body holds more than ${MAX_BODY_CONTAINERS.toLocaleString('en-US')} arrays and objects.`,
  );

export const tooDeep = () =>
  new ApiError(
    'invalid_json',
    `The request body nests arrays and objects more than ${MAX_BODY_DEPTH} levels deep.`,
  );

/** After this many plain characters in a row, the rest of the run is skipped by a regular expression. */
const RUN = 16;
/** A run outside strings: numbers, literals, whitespace, commas and colons. */
const PLAIN = /[^"[\]{}]+/y;
/** A run inside a string, up to its closing quote or an escape. */
const TEXT = /[^"\\]+/y;

/**
 * Whether `text` opens more than `limit` arrays and objects inside one another, counted as JSON
 * reads them: a bracket inside a string (between unescaped quotes) is text, not nesting. One pass
 * that allocates nothing and stops at the first level too deep. Long runs without brackets or
 * quotes (numbers, whitespace, long strings) are skipped by a sticky regular expression, several
 * times faster than charCodeAt; short ones stay in the loop, where a call would cost more than
 * it saves. Text that is not JSON may be judged either way: JSON.parse refuses it afterwards.
 */
export function nestsDeeperThan(text: string, limit: number): boolean {
  return shapeRefusal(text, limit, Number.POSITIVE_INFINITY) === 'depth';
}

/**
 * The first limit `text` breaks, in one pass (nestsDeeperThan's): nesting deeper than `depthLimit`,
 * or more than `containerLimit` arrays and objects in all; null when neither.
 */
function shapeRefusal(
  text: string,
  depthLimit: number,
  containerLimit: number,
): 'depth' | 'containers' | null {
  let containers = 0;
  let depth = 0;
  let plain = 0;
  const length = text.length;
  for (let i = 0; i < length; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      plain = 0;
      let run = 0;
      for (i++; i < length; i++) {
        const s = text.charCodeAt(i);
        if (s === QUOTE) break;
        if (s === BACKSLASH) {
          i++; // an escape's next character never ends the string
          run = 0;
        } else if (++run === RUN) {
          TEXT.lastIndex = i;
          if (TEXT.test(text)) i = TEXT.lastIndex - 1;
          run = 0;
        }
      }
    } else if (c === OPEN_ARRAY || c === OPEN_OBJECT) {
      plain = 0;
      if (++depth > depthLimit) return 'depth';
      if (++containers > containerLimit) return 'containers';
    } else if (c === CLOSE_ARRAY || c === CLOSE_OBJECT) {
      plain = 0;
      depth--;
    } else if (++plain === RUN) {
      PLAIN.lastIndex = i;
      if (PLAIN.test(text)) i = PLAIN.lastIndex - 1;
      plain = 0;
    }
  }
  return null;
}

/**
 * A request body's value, or an ApiError `invalid_json`. Blank text is no body (some clients send
 * a Content-Type on DELETE). `__proto__` keys are refused so no object built from a body can be
 * prototype-polluted.
 */
export function parseJsonBody(text: string): unknown {
  if (text.trim() === '') return undefined;
  const refusal = shapeRefusal(text, MAX_BODY_DEPTH, MAX_BODY_CONTAINERS);
  if (refusal) throw refusal === 'depth' ? tooDeep() : tooMany();
  try {
    return sjson.parse(text, undefined, { protoAction: 'error', constructorAction: 'ignore' });
  } catch (err) {
    const message = /prototype/.test((err as Error).message)
      ? "JSON keys named '__proto__' are not accepted."
      : 'The request body is not valid JSON.';
    throw new ApiError('invalid_json', message);
  }
}
