// A customer as the API sends it, as JSON text built by hand: the stored metadata text goes out
// as it is, without a parse and a re-serialization per customer (list pages carry a hundred).
// test/http/customer-json.test.ts proves it byte-equal to the Customer schema's serializer.
import { iso } from '../domain/time.ts';
import type { CustomerRecord } from './store.ts';

/** A customer as the API sends it, as an object (the Customer schema's fields; events carry it). */
export const customerObject = (c: CustomerRecord) => ({
  id: c.id,
  name: c.name,
  email: c.email,
  metadata: c.metadata,
  created_at: iso(c.createdAt),
  updated_at: iso(c.updatedAt),
});

export function customerJson(c: CustomerRecord): string {
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
