// Instants given as text in a request (docs/api.md, "Dates and times").
import { ApiError } from '../domain/errors.ts';
import { INSTANT_RULE, parseInstant } from '../domain/time.ts';

/**
 * An instant given as text, as ms since the epoch; 400 parameter_invalid (param `param`) unless ISO 8601 with a
 * time zone and a date and time that exist.
 */
export function instantOf(text: string, param: string): number {
  const ms = parseInstant(text);
  if (ms === null) {
    throw new ApiError('parameter_invalid', `'${param}' must be ${INSTANT_RULE}.`, param);
  }
  return ms;
}
