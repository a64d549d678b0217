// Pieces every resource's schemas share: the error envelope, ids, instants, metadata, page sizes,
// segment filters. The schemas validate requests, serialize answers and feed /openapi.json.
import { type TLiteral, type TSchemaOptions, type TUnion, Type } from 'typebox';

export const Timestamp = Type.String({ format: 'date-time', description: 'ISO 8601 UTC with milliseconds.' });

export const CustomerId = Type.String({
  minLength: 1,
  maxLength: 255,
  // '.' and '..' are path segments every URL parser resolves away: such a customer could not be addressed.
  pattern: '^(?!\\.\\.?$)[^\\s\\u0000-\\u001f\\u007f-\\u009f/?#]+$',
  description: "1-255 characters, no whitespace, control characters, '/', '?' or '#'; not '.' or '..'.",
});

/** A customer's id in a batch item: checked as the path's would be by the write. */
export const ItemCustomerId = Type.String({ minLength: 1, maxLength: 255 });

/** The path of a customer's routes. */
export const CustomerParams = Type.Object({ customer_id: Type.String() });

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

/** The answer of a DELETE: the id and `deleted: true`. */
export const Deleted = Type.Object({ id: Type.String(), deleted: Type.Boolean() });

/** A `metadata[KEY]` query parameter: its key is the first group (docs/api.md, "Segments, trends and movers"). */
export const SEGMENT_FILTER = /^metadata\[([\s\S]{1,64})\]$/;

/**
 * Schema options a query schema spreads in: `metadata[KEY]` parameters beside its own. A key or
 * value holding NUL is refused: PostgreSQL text cannot hold it, so it could match nothing.
 */
export const segmentParams = {
  patternProperties: {
    [SEGMENT_FILTER.source]: {
      type: 'string',
      maxLength: 16384,
      pattern: '^[^\\u0000]*$',
      description:
        'metadata[KEY]=VALUE: only customers whose metadata KEY is this string, or a number or boolean with this JSON text.',
    },
  },
} as const;

/**
 * One literal per value, as a union typed as such: a union built from an array is `never` to
 * Static (and so to the routes' type provider and the typed client); one of the union is not.
 */
export const oneOf = <T extends string>(values: readonly T[], options?: TSchemaOptions) =>
  Type.Union(
    values.map((v) => Type.Literal(v)),
    options,
  ) as unknown as TUnion<[TLiteral<T>]>;

/**
 * The book's filters (docs/api.md, "Segments, trends and movers"), a query schema's properties
 * beside its own: ANDed with each other and with the `metadata[KEY]` filters.
 */
export const bookParams = {
  owner: Type.Optional(
    Type.String({
      maxLength: 320,
      description: "An owner's email (ignoring case), 'none' (no owner) or 'me' (the signed-in person).",
    }),
  ),
  renewal_after: Type.Optional(
    Type.String({
      maxLength: 64,
      description: 'Renewing at this instant or later (ISO 8601 with a time zone).',
    }),
  ),
  renewal_before: Type.Optional(
    Type.String({ maxLength: 64, description: 'Renewing before this instant (ISO 8601 with a time zone).' }),
  ),
  parent_id: Type.Optional(Type.String({ ...CustomerId, description: "This customer's direct children." })),
  lifecycle: Type.Optional(
    oneOf(['active', 'churned', 'all'] as const, {
      description: "'all' for every customer; the portfolio's reads count 'active' unless given.",
    }),
  ),
};
