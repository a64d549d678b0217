// One table from error code to HTTP status and error type (docs/errors.md). Everything the
// API refuses is an ApiError; anything else that escapes becomes an opaque 500.

export const ERRORS = {
  invalid_json: { status: 400, type: 'invalid_request_error' },
  invalid_request: { status: 400, type: 'invalid_request_error' },
  parameter_missing: { status: 400, type: 'invalid_request_error' },
  parameter_invalid: { status: 400, type: 'invalid_request_error' },
  parameter_unknown: { status: 400, type: 'invalid_request_error' },
  weights_sum_invalid: { status: 400, type: 'invalid_request_error' },
  factor_derived: { status: 400, type: 'invalid_request_error' },
  idempotency_key_reused: { status: 400, type: 'invalid_request_error' },
  signature_invalid: { status: 400, type: 'invalid_request_error' },
  api_key_missing: { status: 401, type: 'authentication_error' },
  api_key_invalid: { status: 401, type: 'authentication_error' },
  credentials_invalid: { status: 401, type: 'authentication_error' },
  write_key_missing: { status: 401, type: 'authentication_error' },
  write_key_invalid: { status: 401, type: 'authentication_error' },
  webhook_signature_invalid: { status: 401, type: 'authentication_error' },
  webhook_token_invalid: { status: 401, type: 'authentication_error' },
  source_disabled: { status: 401, type: 'authentication_error' },
  session_missing: { status: 401, type: 'authentication_error' },
  permission_denied: { status: 403, type: 'permission_error' },
  csrf_token_invalid: { status: 403, type: 'permission_error' },
  link_invalid: { status: 400, type: 'invalid_request_error' },
  sign_in_locked: { status: 429, type: 'rate_limit_error' },
  resource_missing: { status: 404, type: 'invalid_request_error' },
  customer_not_found: { status: 404, type: 'invalid_request_error' },
  health_score_not_found: { status: 404, type: 'invalid_request_error' },
  webhook_not_found: { status: 404, type: 'invalid_request_error' },
  delivery_not_found: { status: 404, type: 'invalid_request_error' },
  event_not_found: { status: 404, type: 'invalid_request_error' },
  user_not_found: { status: 404, type: 'invalid_request_error' },
  factor_rule_not_found: { status: 404, type: 'invalid_request_error' },
  override_not_found: { status: 404, type: 'invalid_request_error' },
  outcome_not_found: { status: 404, type: 'invalid_request_error' },
  version_not_found: { status: 404, type: 'invalid_request_error' },
  view_not_found: { status: 404, type: 'invalid_request_error' },
  backfill_not_found: { status: 404, type: 'invalid_request_error' },
  source_not_found: { status: 404, type: 'invalid_request_error' },
  task_not_found: { status: 404, type: 'invalid_request_error' },
  note_not_found: { status: 404, type: 'invalid_request_error' },
  playbook_not_found: { status: 404, type: 'invalid_request_error' },
  method_not_allowed: { status: 405, type: 'invalid_request_error' },
  customer_exists: { status: 409, type: 'invalid_request_error' },
  user_exists: { status: 409, type: 'invalid_request_error' },
  delivery_in_progress: { status: 409, type: 'invalid_request_error' },
  webhook_disabled: { status: 409, type: 'invalid_request_error' },
  backfill_running: { status: 409, type: 'invalid_request_error' },
  task_open_exists: { status: 409, type: 'invalid_request_error' },
  idempotency_request_in_progress: { status: 409, type: 'invalid_request_error' },
  body_too_large: { status: 413, type: 'invalid_request_error' },
  unsupported_media_type: { status: 415, type: 'invalid_request_error' },
  rate_limited: { status: 429, type: 'rate_limit_error' },
  headers_too_large: { status: 431, type: 'invalid_request_error' },
  internal_error: { status: 500, type: 'api_error' },
  service_unavailable: { status: 503, type: 'api_error' },
} as const;

export type ErrorCode = keyof typeof ERRORS;

export interface ErrorBody {
  error: { type: string; code: ErrorCode; message: string; param?: string };
}

export class ApiError extends Error {
  readonly code: ErrorCode;
  readonly param: string | undefined;
  readonly status: number;
  readonly type: string;

  constructor(code: ErrorCode, message: string, param?: string) {
    super(message);
    this.name = 'ApiError';
    this.code = code;
    this.param = param;
    this.status = ERRORS[code].status;
    this.type = ERRORS[code].type;
  }

  toBody(): ErrorBody {
    const error: ErrorBody['error'] = { type: this.type, code: this.code, message: this.message };
    if (this.param !== undefined) error.param = this.param;
    return { error };
  }
}

/** A retry took the request's Idempotency-Key over, or it is still running (docs/api.md, "Idempotency keys"). */
export const idempotencyInProgress = () =>
  new ApiError(
    'idempotency_request_in_progress',
    'A request with this Idempotency-Key is still being processed; retry in a moment.',
  );

export const notFound = {
  customer: (id: string) => new ApiError('customer_not_found', `No customer with id '${id}'.`),
  factorRule: (factor: string) => new ApiError('factor_rule_not_found', `No factor rule for '${factor}'.`),
  healthScore: (id: string) =>
    new ApiError('health_score_not_found', `Customer '${id}' has no health score yet.`),
  webhook: (id: string) => new ApiError('webhook_not_found', `No webhook with id '${id}'.`),
  user: (id: string) => new ApiError('user_not_found', `No user with id '${id}'.`),
  override: (id: string) =>
    new ApiError('override_not_found', `Customer '${id}' has no override on its health score.`),
  outcome: (id: string) => new ApiError('outcome_not_found', `No outcome with id '${id}'.`),
  view: (id: string) => new ApiError('view_not_found', `No saved view with id '${id}'.`),
  backfill: (id: string) => new ApiError('backfill_not_found', `No backfill with id '${id}'.`),
  source: (id: string) => new ApiError('source_not_found', `No source with id '${id}'.`),
  task: (id: string) => new ApiError('task_not_found', `No task with id '${id}'.`),
  note: (id: string) => new ApiError('note_not_found', `No note with id '${id}'.`),
  playbook: (id: string) => new ApiError('playbook_not_found', `No playbook with id '${id}'.`),
  version: (id: string, version: number) =>
    new ApiError('version_not_found', `Customer '${id}' has no health score version ${version}.`, 'version'),
};
