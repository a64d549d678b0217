// The one error the client throws for anything that went wrong with a request (docs/client.md,
// "Errors"): Vitals' own error envelope when there is one, and an envelope of the same shape made
// here when there is none (a proxy's HTML page, a dropped connection), so callers branch on
// `code` alike in every case.
import type { ErrorEnvelope } from './types.ts';

/** `status` 0: no HTTP answer arrived (after the retries). */
const NO_ANSWER = 0;

export class VitalsError extends Error {
  /** The HTTP status, or 0 when no answer arrived. */
  readonly status: number;
  readonly type: string;
  /** Vitals' error code (docs/errors.md), or `connection_error`, `timeout`, `unexpected_response`. */
  readonly code: string;
  /** The offending field as a dotted path, or the header (`Idempotency-Key`). */
  readonly param: string | undefined;
  /** The answer's X-Request-Id: the key to the server's log line of the request. */
  readonly requestId: string | undefined;
  readonly envelope: ErrorEnvelope;

  constructor(status: number, envelope: ErrorEnvelope, requestId?: string, options?: ErrorOptions) {
    super(envelope.error.message, options);
    this.name = 'VitalsError';
    this.status = status;
    this.type = envelope.error.type;
    this.code = envelope.error.code;
    this.param = envelope.error.param;
    this.requestId = requestId;
    this.envelope = envelope;
  }
}

/** An error answer that is not Vitals' envelope: what came is in the message, for a person to read. */
export function unexpectedResponse(status: number, contentType: string, text: string, requestId?: string) {
  const excerpt = text.length > 200 ? `${text.slice(0, 200)}…` : text;
  const message = `Vitals answered ${status} with ${contentType || 'no content type'}, not a Vitals JSON answer: ${JSON.stringify(excerpt)}`;
  return new VitalsError(
    status,
    { error: { type: 'api_error', code: 'unexpected_response', message } },
    requestId,
  );
}

/** No answer: the connection failed or the time ran out, `cause` being what fetch threw. */
export function noAnswer(code: 'connection_error' | 'timeout', message: string, cause: unknown) {
  return new VitalsError(NO_ANSWER, { error: { type: 'connection_error', code, message } }, undefined, {
    cause,
  });
}

/** True when `body` is Vitals' error envelope. */
export function isEnvelope(body: unknown): body is ErrorEnvelope {
  const error = (body as { error?: Record<string, unknown> } | null)?.error;
  return (
    typeof error === 'object' &&
    error !== null &&
    typeof error.type === 'string' &&
    typeof error.code === 'string' &&
    typeof error.message === 'string'
  );
}
