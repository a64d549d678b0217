// The format of standard input, which has no file name to tell it (docs/cli.md, "Files"): NDJSON
// when its first non-blank character is `{`, CSV otherwise (a header row starts with a name).
import { Readable } from 'node:stream';
import type { Format } from './read.ts';
import { MAX_LINE } from './rows.ts';

const BLANK = new Set([0x20, 0x09, 0x0a, 0x0d]);

/**
 * Reads `input` up to its first non-blank byte and gives the format with a stream of the whole
 * input: the chunks read to decide, then the rest as it comes. The input is read once and only
 * those chunks are held (after MAX_LINE bytes of blank space it stops looking: CSV), so standard
 * input of any size can be imported.
 */
export async function detectFormat(
  input: AsyncIterable<Buffer>,
): Promise<{ format: Format; input: NodeJS.ReadableStream }> {
  const chunks = input[Symbol.asyncIterator]();
  const held: Buffer[] = [];
  let format: Format = 'csv';
  for (let size = 0; size <= MAX_LINE; ) {
    const next = await chunks.next();
    if (next.done) break;
    held.push(next.value);
    const first = next.value.findIndex((byte) => !BLANK.has(byte));
    if (first !== -1) {
      format = next.value[first] === 0x7b ? 'ndjson' : 'csv';
      break;
    }
    size += next.value.length;
  }
  async function* whole(): AsyncGenerator<Buffer> {
    try {
      yield* held.splice(0);
      for (let next = await chunks.next(); !next.done; next = await chunks.next()) yield next.value;
    } finally {
      // Destroys the input when the reader stops early, as piping it would.
      await chunks.return?.();
    }
  }
  return { format, input: Readable.from(whole(), { objectMode: false }) };
}
