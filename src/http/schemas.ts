// Shared TypeBox schemas: they validate requests, serialize responses and feed /openapi.json.
import { Type } from 'typebox';
import { ApiError } from '../domain/errors.ts';
import { INSTANT_RULE, parseInstant } from '../domain/time.ts';

export const Timestamp = Type.String({ format: 'date-time', description: 'ISO 8601 UTC with milliseconds.' });

export const CustomerId = Type.String({
  minLength: 1,
  maxLength: 255,
  // '.' and '..' are path segments every URL parser resolves away: such a customer could not be addressed.
  pattern: '^(?!\\.\\.?$)[^\\s\\u0000-\\u001f\\u007f-\\u009f/?#]+$',
  description: "1-255 characters, no whitespace, control characters, '/', '?' or '#'; not '.' or '..'.",
});

export const Metadata = Type.Unsafe<Record<string, unknown>>({
  type: 'object',
  maxProperties: 50,
  propertyNames: { minLength: 1, maxLength: 64, description: 'keys are 1-64 characters' },
  additionalProperties: true,
  description: 'Free-form JSON values under at most 50 keys of 1-64 characters; at most 16 KiB serialized.',
});

export const ErrorSchema = Type.Object(
  {
    error: Type.Object({
      type: Type.String(),
      code: Type.String(),
      message: Type.String(),
      param: Type.Optional(Type.String()),
    }),
  },
  { $id: 'Error', description: 'Every failure answers with this envelope.' },
);

export const Limit = Type.Integer({
  minimum: 1,
  maximum: 100,
  default: 10,
  description: 'Page size, 1-100.',
});

/** Error responses every authenticated route can give, for the OpenAPI description. */
export const errorResponses = (...statuses: number[]) =>
  Object.fromEntries(statuses.map((s) => [s, Type.Ref('Error')]));

/**
 * An instant given as text, as ms since the epoch; 400 parameter_invalid (param `param`) unless ISO 8601 with a
 * time zone and a date and time that exist (docs/api.md, "Dates and times").
 */
export function instantOf(text: string, param: string): number {
  const ms = parseInstant(text);
  if (ms === null) {
    throw new ApiError('parameter_invalid', `'${param}' must be ${INSTANT_RULE}.`, param);
  }
  return ms;
}
