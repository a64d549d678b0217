// How errors and results cross to and from a worker thread (the SQLite writer thread, sqlite/;
// PostgreSQL's heavy-write thread, postgres/): structured clone keeps plain data, so an error goes
// as its name, message and the fields Vitals reads (`code`, node:sqlite's `errcode`/`errstr`, an
// ApiError's `param`, a cause), and is rebuilt on the other side.
import { ApiError, type ErrorCode } from '../domain/errors.ts';

export interface WireError {
  name: string;
  message: string;
  code?: unknown;
  errcode?: unknown;
  errstr?: unknown;
  param?: string | undefined;
  cause?: WireError;
}

export function toWire(error: unknown, depth = 0): WireError {
  if (!(error instanceof Error)) return { name: 'Error', message: String(error) };
  const e = error as Error & { code?: unknown; errcode?: unknown; errstr?: unknown };
  const wire: WireError = { name: e.name, message: e.message };
  if (e.code !== undefined) wire.code = e.code;
  if (e.errcode !== undefined) wire.errcode = e.errcode;
  if (e.errstr !== undefined) wire.errstr = e.errstr;
  if (error instanceof ApiError) wire.param = error.param;
  if (e.cause !== undefined && depth < 3) wire.cause = toWire(e.cause, depth + 1);
  return wire;
}

export function fromWire(wire: WireError): Error {
  if (wire.name === 'ApiError') return new ApiError(wire.code as ErrorCode, wire.message, wire.param);
  const error = new Error(wire.message, wire.cause ? { cause: fromWire(wire.cause) } : undefined);
  error.name = wire.name;
  const fields = error as Error & { code?: unknown; errcode?: unknown; errstr?: unknown };
  if (wire.code !== undefined) fields.code = wire.code;
  if (wire.errcode !== undefined) fields.errcode = wire.errcode;
  if (wire.errstr !== undefined) fields.errstr = wire.errstr;
  return error;
}

/**
 * A write's result on its way out of the thread: a result of a batch that holds an error per
 * refused item (`{ ok: false, error }`, as applyFactorUpdates answers) carries each as data.
 */
export function resultToWire(value: unknown): unknown {
  if (!Array.isArray(value)) return value;
  return value.map((r) =>
    r?.ok === false && r.error instanceof Error ? { ok: false, wireError: toWire(r.error) } : r,
  );
}

/** resultToWire undone. */
export function resultFromWire<T>(value: unknown): T {
  if (!Array.isArray(value)) return value as T;
  return value.map((r) =>
    r?.ok === false && r.wireError ? { ok: false, error: fromWire(r.wireError) } : r,
  ) as T;
}
