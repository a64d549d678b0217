// Customers (docs/api.md, "Customers"): the schemas, and the customer as the API writes it. A
// customer leaves as JSON text built by hand: the stored metadata text goes out as it is, without
// a parse and a re-serialization per customer (list pages carry a hundred).
// test/http/customer-json.test.ts proves it byte-equal to the Customer schema's serializer.
import { Type } from 'typebox';
import { iso } from '../domain/time.ts';
import { CustomerId, Limit, Metadata, segmentParams, Timestamp } from './common.ts';

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

export const Customer = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    email: Type.String(),
    metadata: Type.Object({}, { additionalProperties: true }),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { $id: 'Customer' },
);

export const CreateBody = Type.Object(
  { customer_id: CustomerId, name: Name, email: Email, metadata: Type.Optional(Metadata) },
  { additionalProperties: false },
);
export const UpdateBody = Type.Object(
  { name: Type.Optional(Name), email: Type.Optional(Email), metadata: Type.Optional(Metadata) },
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
  metadata: c.metadata,
  created_at: iso(c.createdAt),
  updated_at: iso(c.updatedAt),
});

export function customerJson(c: CustomerFields): string {
  const metadata = c.metadataJson ?? JSON.stringify(c.metadata);
  return customerJsonOf(c.id, c.name, c.email, metadata, c.createdAt, c.updatedAt);
}

/** The same from the stored fields (the metadata as stored JSON text). */
export function customerJsonOf(
  id: string,
  name: string,
  email: string,
  metadata: string,
  createdAt: number,
  updatedAt: number,
): string {
  return `{"id":${JSON.stringify(id)},"name":${JSON.stringify(name)},"email":${JSON.stringify(email)},"metadata":${metadata},"created_at":"${iso(createdAt)}","updated_at":"${iso(updatedAt)}"}`;
}

/** A page of customers as JSON text, from each customer's text. */
export const customerPageJson = (customers: string, hasMore: boolean): string =>
  `{"customers":[${customers}],"has_more":${hasMore}}`;
