// Schemas validate requests; this turns the first schema violation into our error
// envelope with `param` naming the field as a dotted path (docs/errors.md).
import { Ajv, type ErrorObject } from 'ajv';
import type { FastifySchemaCompiler } from 'fastify';
import { ApiError } from '../domain/errors.ts';

// Bodies are taken as sent: "0.5" is not a number. Query strings are text by nature, so
// there numbers are read from their digits and only from digits (see `queryValidator`):
// "1e1", "0x10", "+5" and " 5" stay text and fail the type check.
const bodyAjv = new Ajv({
  coerceTypes: false,
  useDefaults: false,
  removeAdditional: false,
  allErrors: false,
  strict: false,
  verbose: true,
});
const queryAjv = new Ajv({
  coerceTypes: false,
  useDefaults: true,
  removeAdditional: false,
  allErrors: false,
  strict: false,
  verbose: true,
});

const DECIMAL = /^-?\d+(\.\d+)?$/;

type SchemaObject = { type?: unknown; properties?: Record<string, { type?: unknown }> };

/** Query, params and headers: strings become numbers or booleans where the schema says so, strictly. */
function queryValidator(schema: SchemaObject) {
  const validate = queryAjv.compile(schema);
  const convert = new Map<string, (raw: string) => unknown>();
  for (const [name, prop] of Object.entries(schema.properties ?? {})) {
    if (prop.type === 'integer' || prop.type === 'number') {
      convert.set(name, (raw) => (DECIMAL.test(raw) ? Number(raw) : raw));
    } else if (prop.type === 'boolean') {
      convert.set(name, (raw) => (raw === 'true' ? true : raw === 'false' ? false : raw));
    }
  }
  const check = (data: unknown): boolean => {
    if (data !== null && typeof data === 'object') {
      const values = data as Record<string, unknown>;
      for (const [name, to] of convert) {
        const raw = values[name];
        if (typeof raw === 'string') values[name] = to(raw);
      }
    }
    const valid = validate(data);
    check.errors = validate.errors;
    return valid;
  };
  check.errors = null as typeof validate.errors;
  return check;
}

export const validatorCompiler: FastifySchemaCompiler<object> = ({ schema, httpPart }) =>
  httpPart === 'body' ? bodyAjv.compile(schema) : queryValidator(schema as SchemaObject);

const join = (path: string, key: string | number): string => (path ? `${path}.${key}` : String(key));

/** `/factors/usage` → `factors.usage` (JSON Pointer escapes undone). */
function dotted(instancePath: string): string {
  return instancePath
    .split('/')
    .slice(1)
    .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'))
    .join('.');
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}

const TYPE_NAMES: Record<string, string> = {
  string: 'a string',
  number: 'a number',
  integer: 'a whole number',
  object: 'an object',
  array: 'an array',
  boolean: 'true or false',
};

const WHOLE: Record<string, string> = { body: 'The request body', item: 'The item' };

/**
 * A batch item's check (http/batch.ts): the item's first violation as an ApiError whose
 * `param` is dotted from the item (`email`, `factors.usage`), or null when it is valid.
 */
export function itemValidator(schema: object): (item: unknown) => ApiError | null {
  const validate = bodyAjv.compile(schema);
  return (item) => {
    if (validate(item)) return null;
    const first = validate.errors?.[0];
    return first ? toApiError(first, 'item') : new ApiError('parameter_invalid', 'The item is invalid.');
  };
}

export function toApiError(err: ErrorObject, part: string): ApiError {
  const path = dotted(err.instancePath);
  const name = path ? `'${path}'` : (WHOLE[part] ?? 'The query string');
  if (err.propertyName !== undefined) {
    const param = err.propertyName === '' ? path : join(path, err.propertyName);
    return new ApiError(
      'parameter_invalid',
      `'${err.propertyName}' is not an allowed name in ${name}${hint(err)}.`,
      param,
    );
  }
  return (
    shapeError(err, path, name) ??
    boundError(err, path, name) ??
    new ApiError('parameter_invalid', `${name} is invalid.`, path || undefined)
  );
}

/** A field missing, unknown, of the wrong type, or not one of the allowed values or formats. */
function shapeError(err: ErrorObject, path: string, name: string): ApiError | null {
  const data: unknown = err.data;
  const p = err.params as Record<string, unknown>;
  switch (err.keyword) {
    case 'required': {
      const param = join(path, p.missingProperty as string);
      return new ApiError('parameter_missing', `'${param}' is required.`, param);
    }
    case 'additionalProperties': {
      const param = join(path, p.additionalProperty as string);
      return new ApiError('parameter_unknown', `'${param}' is not a recognised parameter.`, param);
    }
    case 'type': {
      if (!path && name === WHOLE.body && (data === undefined || data === null)) {
        return new ApiError('parameter_missing', 'Send the parameters as a JSON object in the request body.');
      }
      const expected = String(p.type)
        .split(',')
        .map((t) => TYPE_NAMES[t] ?? t)
        .join(' or ');
      const got = data === undefined ? '' : ` (got ${describe(data)})`;
      return new ApiError('parameter_invalid', `${name} must be ${expected}${got}.`, path || undefined);
    }
    case 'enum':
      return new ApiError(
        'parameter_invalid',
        `${name} must be one of: ${(p.allowedValues as unknown[]).join(', ')}.`,
        path,
      );
    case 'pattern':
    case 'format':
      return new ApiError('parameter_invalid', `${name} is not in the accepted format${hint(err)}.`, path);
    default:
      return null;
  }
}

/** A value out of bounds: a length, a number, how many entries or items, a repeated item. */
function boundError(err: ErrorObject, path: string, name: string): ApiError | null {
  const p = err.params as Record<string, unknown>;
  switch (err.keyword) {
    case 'minLength':
      return new ApiError(
        'parameter_invalid',
        `${name} must be at least ${p.limit} character${p.limit === 1 ? '' : 's'} long.`,
        path,
      );
    case 'maxLength':
      return new ApiError('parameter_invalid', `${name} must be at most ${p.limit} characters long.`, path);
    case 'minimum':
    case 'maximum':
    case 'exclusiveMinimum':
    case 'exclusiveMaximum':
      return new ApiError('parameter_invalid', `${name} must be ${p.comparison} ${p.limit}.`, path);
    case 'minProperties':
      return path
        ? new ApiError(
            'parameter_invalid',
            `${name} must have at least ${p.limit} entr${p.limit === 1 ? 'y' : 'ies'}.`,
            path,
          )
        : new ApiError('parameter_missing', 'Supply at least one parameter to change.');
    case 'maxProperties':
      return new ApiError('parameter_invalid', `${name} may have at most ${p.limit} entries.`, path);
    case 'minItems':
      return new ApiError('parameter_invalid', `${name} must have at least ${p.limit} item(s).`, path);
    case 'maxItems':
      return new ApiError('parameter_invalid', `${name} may have at most ${p.limit} items.`, path);
    case 'uniqueItems':
      return new ApiError('parameter_invalid', `${name} must not repeat an item.`, path);
    default:
      return null;
  }
}

function hint(err: ErrorObject): string {
  const description = (err.parentSchema as { description?: string } | undefined)?.description;
  return description ? ` (${description.replace(/\.$/, '')})` : '';
}
