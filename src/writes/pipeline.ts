// Pages of one transaction with the database and this process busy at once (docs/development.md,
// "The store"): a rescore of a whole account reads a page, computes its new versions and
// writes them, and done one after another each side waits for the other most of the time.

/** A page read, and the key the next one starts after (null: this is the last). */
export interface PageRead<P> {
  page: P;
  after: string | null;
}

/** Reads pages by key one after another, as pipelined does but for a reader alone (a preview). */
export async function* pages<P>(
  read: (after: string | null) => Promise<PageRead<P> | null>,
): AsyncGenerator<P> {
  for (let got = await read(null); got; got = got.after === null ? null : await read(got.after)) {
    yield got.page;
  }
}

/**
 * Waits for every one of these, then throws the first failure if any: unlike Promise.all, nothing
 * is left running (a statement of the transaction) when the caller goes on to roll back.
 */
export async function settleAll(sent: readonly Promise<unknown>[]): Promise<void> {
  const settled = await Promise.allSettled(sent);
  const failed = settled.find((s) => s.status === 'rejected');
  if (failed) throw failed.reason;
}

/**
 * Lets the event loop run before the next step of a page. A page's read, plan and write each take
 * this process tens of milliseconds at 1,000 customers, and chained by promises alone they would
 * run as one task: every other request of the process would wait for all three (/healthz's p99
 * during a 100,000-customer rule change on PostgreSQL: 83-85 ms with the turns, 123 ms without). docs/development.md, "The store".
 */
export const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** Pages whose writes may be in flight at once: the database writes one while this process sends the next. */
const IN_FLIGHT = 2;

/**
 * Reads pages by key, plans each one's writes and sends them, overlapped: page N+1's reads are sent
 * before page N is planned, and page N's writes go out without waiting for page N-1's, so this
 * process plans and serializes a page while the database writes the one before (the connection
 * keeps the statements in order). At most IN_FLIGHT pages' writes are pending, so memory stays
 * bounded by a few pages.
 *
 * Sound only where no page's reads depend on another page's writes: the caller holds the account
 * exclusively, and pages are disjoint sets of customers. A failure is thrown; the statements
 * queued behind it fail with the transaction, and are awaited or caught, never left unhandled.
 */
export async function pipelined<P, W>(
  read: (after: string | null) => Promise<PageRead<P> | null>,
  plan: (page: P) => W | Promise<W>,
  write: (work: W) => Promise<void>,
): Promise<void> {
  const handled = <T>(p: Promise<T>): Promise<T> => {
    p.catch(() => {});
    return p;
  };
  const writing: Promise<void>[] = [];
  try {
    for (let next = handled(read(null)); ; ) {
      const got = await next;
      if (!got) return;
      if (got.after !== null) next = handled(read(got.after));
      await turn();
      const work = await plan(got.page);
      if (writing.length >= IN_FLIGHT) await writing.shift();
      await turn();
      writing.push(handled(write(work)));
      if (got.after === null) return;
    }
  } finally {
    for (const w of writing) await w;
  }
}
