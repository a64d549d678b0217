// Every failure leaves as the error envelope: ours pass through, Fastify's own (bad JSON,
// 413, 415, bad URL, schema violations) are translated, a database that cannot be reached is a
// 503 with Retry-After (docs/postgresql.md, "When the database restarts"), anything else
// unexpected is an opaque 500. A request Node cannot parse as HTTP/1.1 never reaches Fastify:
// answerClientError writes its envelope on the socket.
import { maxHeaderSize, STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { ConnectionError, FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../domain/errors.ts';
import { newId } from '../domain/ids.ts';
import { isDatabaseUnavailable, OutageLog } from '../store/unavailable.ts';
import { sendNotFoundPage } from './dashboard.ts';
import { toApiError } from './validation.ts';

/** Retry-After on a 503 for a database that cannot be reached or cannot write: the next request tries again. */
export const RETRY_AFTER_SECONDS = 1;

/** The answer while the database cannot be reached (API requests and /readyz). */
export function sendUnavailable(reply: FastifyReply): FastifyReply {
  const err = new ApiError(
    'service_unavailable',
    'The database cannot take requests right now; retry after a moment.',
  );
  return reply.code(503).header('retry-after', String(RETRY_AFTER_SECONDS)).send(err.toBody());
}

/** The answer while the process brings the schema up to date after it started listening (main.ts). */
export function sendMigrating(reply: FastifyReply): FastifyReply {
  const err = new ApiError(
    'service_unavailable',
    'Vitals is bringing its database schema up to date; retry after a moment.',
  );
  return reply.code(503).header('retry-after', String(RETRY_AFTER_SECONDS)).send(err.toBody());
}

/** 1048576 → "1 MiB": body limits are whole MiB; anything else is told in bytes. */
const size = (bytes: number) => (bytes % 1048576 === 0 ? `${bytes / 1048576} MiB` : `${bytes} bytes`);

/** `bodyLimit`: the route's (req.routeOptions.bodyLimit), which a 413 names: batches take more. */
export function translate(err: FastifyError, bodyLimit?: number): ApiError | null {
  if (err instanceof ApiError) return err;
  if (err.validation && err.validation.length > 0) {
    return toApiError(err.validation[0] as Parameters<typeof toApiError>[0], err.validationContext ?? 'body');
  }
  switch (err.code) {
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
    case 'FST_ERR_CTP_INVALID_TYPE':
      return new ApiError(
        'unsupported_media_type',
        'Send the request body as JSON with Content-Type: application/json.',
      );
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new ApiError(
        'body_too_large',
        bodyLimit
          ? `The request body is larger than the ${size(bodyLimit)} limit of this route.`
          : 'The request body is larger than the limit of this route.',
      );
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return new ApiError('invalid_json', 'The request body is not valid JSON.');
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return new ApiError('parameter_invalid', 'The Content-Length header does not match the body.');
    case 'FST_CSRF_MISSING_SECRET':
    case 'FST_CSRF_INVALID_TOKEN':
      return new ApiError(
        'csrf_token_invalid',
        'A signed-in change needs the CSRF token from GET /auth/session in the X-CSRF-Token header.',
      );
    case 'FST_ERR_BAD_URL':
      return new ApiError('parameter_invalid', 'The request URL is not correctly percent-encoded.');
  }
  if (err instanceof SyntaxError) return new ApiError('invalid_json', 'The request body is not valid JSON.');
  const status = err.statusCode ?? 500;
  if (status >= 400 && status < 500) return new ApiError('parameter_invalid', 'The request is malformed.');
  return null;
}

/** `allowed(path)`: the methods routes serve at that path (none: it is not a known path). */
export function registerErrorHandling(app: FastifyInstance, allowed: (path: string) => string[]): void {
  // Each 503 has its own request log line; the outage itself is logged once every 10 s at most,
  // and is over at the next success of /api (every /api route reads or writes the database).
  const outage = new OutageLog(app.log, 'requests');
  app.addHook('onResponse', async (req, reply) => {
    if (outage.down && reply.statusCode < 300 && req.routeOptions.url?.startsWith('/api/'))
      outage.recovered();
  });
  app.setErrorHandler((err: FastifyError, req: FastifyRequest, reply: FastifyReply) => {
    const api = translate(err, req.routeOptions.bodyLimit);
    if (api) {
      if (api.status === 401) reply.header('www-authenticate', 'Bearer');
      return reply.code(api.status).send(api.toBody());
    }
    if (isDatabaseUnavailable(err)) {
      outage.failed(err);
      return sendUnavailable(reply);
    }
    req.log.error({ err }, 'unhandled error');
    const internal = new ApiError('internal_error', 'Something went wrong on our side; try again shortly.');
    return reply.code(500).send(internal.toBody());
  });

  app.setNotFoundHandler((req, reply) => {
    const path = req.url.split('?')[0] ?? '/';
    const methods = allowed(path);
    if (methods.length > 0) {
      const err = new ApiError(
        'method_not_allowed',
        `${req.method} is not served at ${path}; it serves ${methods.join(', ')}.`,
      );
      return reply.code(405).header('allow', methods.join(', ')).send(err.toBody());
    }
    if (sendNotFoundPage(req, reply)) return reply;
    const err = new ApiError('resource_missing', `No route ${req.method} ${path}.`);
    return reply.code(404).send(err.toBody());
  });
}

/** How long a connection refused for its framing may stay open while the client reads the answer. */
const FRAMING_LINGER_MS = 2000;
/** llhttp's reasons are fixed texts ("Invalid character in chunk size"), never the client's bytes. */
const PARSER_REASON = /^[\x20-\x7e]{1,200}$/;

/** What a request Node could not parse is told (docs/errors.md, "Malformed requests"). */
function framingError(err: ConnectionError & { reason?: unknown }): ApiError {
  if (err.code === 'HPE_HEADER_OVERFLOW') {
    const limit = maxHeaderSize % 1024 === 0 ? `${maxHeaderSize / 1024} KiB` : `${maxHeaderSize} bytes`;
    return new ApiError('headers_too_large', `The request line and headers are larger than ${limit} in all.`);
  }
  const reason = typeof err.reason === 'string' && PARSER_REASON.test(err.reason) ? ` (${err.reason})` : '';
  return new ApiError('invalid_request', `The request is not well-formed HTTP/1.1${reason}.`);
}

/**
 * Fastify's clientErrorHandler: a request Node's parser refused (conflicting Transfer-Encoding and
 * Content-Length, a bad chunk, headers over maxHeaderSize) has no request or reply object, so the
 * envelope is written on the socket as a whole HTTP/1.1 answer, with a request id of its own and
 * Connection: close. As Node's own handler does, nothing is written once an answer on the
 * connection has begun (it would corrupt it). A client too slow to send its headers
 * (headersTimeout) gets a bodiless 408, as from Node's own handler: no error code says it.
 */
export function answerClientError(this: FastifyInstance, err: ConnectionError, socket: Socket): void {
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  const inFlight = (socket as Socket & { _httpMessage?: { headersSent?: boolean } | null })._httpMessage;
  if (!socket.writable || inFlight?.headersSent) {
    socket.destroy();
    return;
  }
  const id = newId.requestId();
  if (err.code === 'ERR_HTTP_REQUEST_TIMEOUT') {
    endWith(socket, 408, id, '');
    return;
  }
  const api = framingError(err);
  this.log.info({ reqId: id, statusCode: api.status, code: err.code }, 'malformed request');
  endWith(socket, api.status, id, JSON.stringify(api.toBody()));
}

/**
 * Ended rather than destroyed: closing with the client's bytes still unread (the rest of a large
 * header) resets the connection, which can discard the answer before the client reads it.
 */
function endWith(socket: Socket, status: number, id: string, body: string): void {
  const type = body ? 'Content-Type: application/json; charset=utf-8\r\n' : '';
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\n${type}Content-Length: ${Buffer.byteLength(body)}\r\n` +
      `X-Request-Id: ${id}\r\nConnection: close\r\n\r\n${body}`,
  );
  setTimeout(() => socket.destroy(), FRAMING_LINGER_MS).unref();
}
