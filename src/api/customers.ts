// Customers (docs/api.md, "Customers"): the schemas, and the customer as the API writes it. A
// customer leaves as JSON text built by hand: the stored metadata text goes out as it is, without
// a parse and a re-serialization per customer (list pages carry a hundred).
// test/http/customer-json.test.ts proves it byte-equal to the Customer schema's serializer.
import { type TSchema, Type } from 'typebox';
import { LIFECYCLES, type Lifecycle } from '../domain/customers.ts';
import { iso } from '../domain/time.ts';
import { bookParams, CustomerId, Limit, Metadata, oneOf, segmentParams, Timestamp } from './common.ts';

export const Name = Type.String({
  minLength: 1,
  maxLength: 512,
  pattern: '\\S',
  description: '1-512 characters, not blank.',
});
export const Email = Type.String({
  maxLength: 320,
  pattern:
    '^[^@\\s\\u0000-\\u001f\\u007f]+@[^@\\s\\u0000-\\u001f\\u007f.]+(\\.[^@\\s\\u0000-\\u001f\\u007f.]+)+$',
  description: 'an address with one @ and a dot in the domain, at most 320 characters.',
});

/** The book fields (docs/api.md, "Customers"): null clears one (`lifecycle` excepted). */
const nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);
export const Owner = Type.String({
  ...Email,
  description: "the person responsible: an email address (as `email`'s rules), compared ignoring case.",
});
export const Arr = Type.Number({
  minimum: 0,
  maximum: 1e12,
  description: 'annual recurring revenue, 0 to 1e12; rounded half away from zero to 2 decimal places.',
});
export const RenewalAt = Type.String({
  maxLength: 64,
  description: 'the next renewal: ISO 8601 with a time zone, years 1970-9999.',
});
export const LifecycleSchema = oneOf(LIFECYCLES, { description: "'active' (the default) or 'churned'." });
export const ParentId = Type.String({
  ...CustomerId,
  description: 'another customer of the account; a chain holds at most 5 customers, root included.',
});
/** The book fields as a create, an update or a batch item takes them. */
export const bookFields = {
  owner: Type.Optional(nullable(Owner)),
  arr: Type.Optional(nullable(Arr)),
  renewal_at: Type.Optional(nullable(RenewalAt)),
  lifecycle: Type.Optional(LifecycleSchema),
  parent_id: Type.Optional(nullable(ParentId)),
};

export const Customer = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    email: Type.String(),
    owner: nullable(Type.String()),
    arr: nullable(Type.Number()),
    renewal_at: nullable(Timestamp),
    lifecycle: LifecycleSchema,
    parent_id: nullable(Type.String()),
    metadata: Type.Object({}, { additionalProperties: true }),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { $id: 'Customer' },
);

export const CreateBody = Type.Object(
  { customer_id: CustomerId, name: Name, email: Email, ...bookFields, metadata: Type.Optional(Metadata) },
  { additionalProperties: false },
);
export const UpdateBody = Type.Object(
  {
    name: Type.Optional(Name),
    email: Type.Optional(Email),
    ...bookFields,
    metadata: Type.Optional(Metadata),
  },
  { additionalProperties: false, minProperties: 1 },
);
export const ListQuery = Type.Object(
  {
    limit: Type.Optional(Limit),
    starting_after: Type.Optional(Type.String({ maxLength: 255 })),
    search: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 255,
        // A NUL cannot be a LIKE pattern on either backend (SQLite ends the pattern there and
        // matches everything; PostgreSQL text cannot hold it): refused, see docs/api.md.
        pattern: '^[^\\u0000]+$',
        description:
          'Only customers whose id, name or email contains this text (ignoring case); no NUL character.',
      }),
    ),
    ...bookParams,
  },
  { additionalProperties: false, ...segmentParams },
);
export const CustomerPage = Type.Object({
  customers: Type.Array(Type.Ref('Customer')),
  has_more: Type.Boolean(),
});

/** What the API writes of a customer (the store's CustomerRecord has it). */
export interface CustomerFields {
  id: string;
  name: string;
  email: string;
  /** The book fields (docs/api.md, "Customers"); `arrCents` is the ARR in integer cents. */
  owner: string | null;
  arrCents: number | null;
  renewalAt: number | null;
  lifecycle: Lifecycle;
  parentId: string | null;
  metadata: Record<string, unknown>;
  /** The stored JSON text of `metadata`, when the backend has it: answers can use it as is. */
  metadataJson?: string;
  createdAt: number;
  updatedAt: number;
}

/** A customer as the API sends it, as an object (the Customer schema's fields; events carry it). */
export const customerObject = (c: CustomerFields) => ({
  id: c.id,
  name: c.name,
  email: c.email,
  owner: c.owner,
  arr: c.arrCents === null ? null : c.arrCents / 100,
  renewal_at: c.renewalAt === null ? null : iso(c.renewalAt),
  lifecycle: c.lifecycle,
  parent_id: c.parentId,
  metadata: c.metadata,
  created_at: iso(c.createdAt),
  updated_at: iso(c.updatedAt),
});

const stringOrNull = (s: string | null): string => (s === null ? 'null' : JSON.stringify(s));

/** The customer's JSON text; the metadata as stored when the record carries its text. */
export function customerJson(c: CustomerFields): string {
  const metadata = c.metadataJson ?? JSON.stringify(c.metadata);
  // cents / 100 is the double nearest the decimal, so its shortest text is the decimal itself.
  const arr = c.arrCents === null ? 'null' : String(c.arrCents / 100);
  const renewal = c.renewalAt === null ? 'null' : `"${iso(c.renewalAt)}"`;
  return `{"id":${JSON.stringify(c.id)},"name":${JSON.stringify(c.name)},"email":${JSON.stringify(c.email)},"owner":${stringOrNull(c.owner)},"arr":${arr},"renewal_at":${renewal},"lifecycle":"${c.lifecycle}","parent_id":${stringOrNull(c.parentId)},"metadata":${metadata},"created_at":"${iso(c.createdAt)}","updated_at":"${iso(c.updatedAt)}"}`;
}

/** A page of customers as JSON text, from each customer's text. */
export const customerPageJson = (customers: string, hasMore: boolean): string =>
  `{"customers":[${customers}],"has_more":${hasMore}}`;
