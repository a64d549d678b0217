// A mapping thread (docs/sources.md, "Webhooks"): evaluates a webhook source's JSONata
// expressions against one message, away from the main thread. JSONata's evaluation never yields
// to the event loop, so a hostile expression (a recursion with no end) would hold the thread it
// runs on for good; here it holds only this thread, which mapping-threads.ts ends when the
// message's budget is spent. Each source's expressions are compiled once, cached by the source's
// id and updated_at (a change of mapping is a new key).
import { type MessagePort, parentPort, workerData } from 'node:worker_threads';
import jsonata from 'jsonata';
import type { WebhookMapping } from '../domain/sources.ts';
import type { MappingReply, MappingRequest } from './mapping-threads.ts';

const replies = (workerData as { port?: MessagePort } | undefined)?.port;
if (!parentPort || !replies) throw new Error('mapping-thread.ts runs as a worker thread');

/** Sources whose compiled expressions are kept (the least recently used leave first). */
const CACHE_MAX = 200;
/** Values a mapping's result may hold in all: past it the message is refused, not copied out. */
const RESULT_MAX_VALUES = 10_000;

type Compiled = [field: string, expression: jsonata.Expression][];
const compiled = new Map<string, Compiled>();

function compile(key: string, mapping: WebhookMapping): Compiled {
  const cached = compiled.get(key);
  if (cached) {
    compiled.delete(key);
    compiled.set(key, cached);
    return cached;
  }
  const made: Compiled = Object.entries(mapping).map(([field, text]) => [field, jsonata(text as string)]);
  compiled.set(key, made);
  if (compiled.size > CACHE_MAX) compiled.delete(compiled.keys().next().value as string);
  return made;
}

class TooLarge extends Error {}

/**
 * A result as plain data that may cross to the main thread: JSONata's sequences become arrays, a
 * function (a lambda the expression returned) is left out, and a result of more than
 * RESULT_MAX_VALUES values is refused.
 */
function plain(value: unknown, left: { n: number }): unknown {
  if (--left.n < 0) throw new TooLarge();
  if (value === null || ['string', 'number', 'boolean'].includes(typeof value)) return value;
  if (Array.isArray(value)) return value.map((v) => plain(v, left) ?? null);
  if (typeof value !== 'object') return undefined;
  const out: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(value)) {
    const p = plain(v, left);
    if (p !== undefined) out[key] = p;
  }
  return out;
}

/** This thread's CPU time in ms (process.threadCpuUsage, Node 24), else the clock's: what the budget counts. */
const threadMs = (): number => {
  const usage = (process as { threadCpuUsage?: () => { user: number; system: number } }).threadCpuUsage;
  if (typeof usage !== 'function') return performance.now();
  const { user, system } = usage.call(process);
  return (user + system) / 1000;
};

async function evaluate(m: MappingRequest): Promise<MappingReply> {
  const started = threadMs();
  let field = 'mapping';
  try {
    const values: Record<string, unknown> = {};
    const left = { n: RESULT_MAX_VALUES };
    for (const [name, expression] of compile(m.key, m.mapping)) {
      field = name;
      const value = plain(await expression.evaluate(m.input), left);
      if (value !== undefined) values[name] = value;
    }
    return { id: m.id, ok: true, values, ms: threadMs() - started };
  } catch (error) {
    const message =
      error instanceof TooLarge
        ? `the results hold more than ${RESULT_MAX_VALUES} values`
        : error instanceof Error
          ? error.message
          : String((error as { message?: unknown })?.message ?? error);
    return { id: m.id, ok: false, field, message, ms: threadMs() - started };
  }
}

parentPort.on('message', (m: MappingRequest) => {
  void evaluate(m).then((reply) => replies.postMessage(reply));
});
// JSONata's parser and evaluator run once before the thread says it is ready: their first run
// compiles them (tens of ms on a busy machine), which no message's budget should pay.
await evaluate({
  id: 0,
  key: '',
  mapping: {
    customer_id: "$lowercase($substringAfter(body.email, '@'))",
    at: '$fromMillis(body.ms)',
    counts: "body.type = 'a' and body.n > 1 ? {'x': 1, 'y': body.n * 2}",
    customer: "{'metadata': {'tags': $join(body.tags, ',')}, 'name': $string(body.n)}",
  },
  input: { body: { email: 'a@b.c', ms: 0, type: 'a', n: 2, tags: ['t'] }, headers: {} },
});
compiled.clear();
replies.postMessage({ ready: true });
