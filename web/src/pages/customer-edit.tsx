import { useState } from 'preact/hooks';
import { ApiError, api, type Customer, customerPath } from '../api.ts';
import { ErrorMessage, Field } from '../ui.tsx';
import { type BookDraft, BookInputs, bookErrors, bookPatch, draftOf } from './customer-book.tsx';

/** The API's `param` of a book field, and the draft's field it is shown at. */
const BOOK_PARAMS: Record<string, keyof BookDraft> = {
  owner: 'owner',
  arr: 'arr',
  renewal_at: 'renewal',
  lifecycle: 'lifecycle',
  parent_id: 'parent',
};

// The API's rules (src/http/customers.ts, src/http/schemas.ts), checked as the user types; the API
// has the last word (control characters in an address, say) and its message is shown then.
const EMAIL = /^[^@\s]+@[^@\s.]+(\.[^@\s.]+)+$/;
const METADATA_MAX_KEYS = 50;
const METADATA_MAX_BYTES = 16 * 1024;

type Metadata = Record<string, unknown>;

function checkName(name: string): string | undefined {
  if (name.trim() === '') return 'Enter a name.';
  if (name.length > 512) return 'A name is at most 512 characters.';
}

function checkEmail(email: string): string | undefined {
  if (email.length > 320) return 'An email address is at most 320 characters.';
  if (!EMAIL.test(email)) return 'Enter an email address with one @ and a dot in the domain.';
}

function parseMetadata(text: string): { value?: Metadata; error?: string } {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    return { error: `This is not valid JSON: ${(err as Error).message}` };
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    return { error: 'Metadata must be a JSON object, such as {"plan": "pro"}.' };
  }
  const keys = Object.keys(value);
  if (keys.length > METADATA_MAX_KEYS)
    return { error: `At most ${METADATA_MAX_KEYS} keys (this has ${keys.length}).` };
  const bad = keys.find((k) => k.length < 1 || k.length > 64);
  if (bad !== undefined) return { error: `Keys are 1 to 64 characters; “${bad.slice(0, 70)}” is not.` };
  if (new TextEncoder().encode(JSON.stringify(value)).length > METADATA_MAX_BYTES) {
    return { error: 'Metadata is at most 16 KiB as JSON.' };
  }
  return { value: value as Metadata };
}

/**
 * The API merges metadata at the top level, so the textarea (the whole object) becomes a patch:
 * changed keys are sent, and keys that were deleted from the text are sent as null.
 */
function metadataPatch(before: Metadata, after: Metadata): Metadata | undefined {
  const patch: Metadata = {};
  for (const [k, v] of Object.entries(after)) {
    if (JSON.stringify(v) !== JSON.stringify(before[k])) patch[k] = v;
  }
  for (const k of Object.keys(before)) if (!(k in after)) patch[k] = null;
  return Object.keys(patch).length > 0 ? patch : undefined;
}

export function EditCustomer(props: {
  customer: Customer;
  onSaved: (c: Customer) => void;
  onChange: () => void;
}) {
  const c = props.customer;
  const [name, setName] = useState(c.name);
  const [email, setEmail] = useState(c.email);
  const [metadata, setMetadata] = useState(() => JSON.stringify(c.metadata, null, 2));
  const [book, setBook] = useState(() => draftOf(c));
  const [error, setError] = useState<unknown>();
  const [busy, setBusy] = useState(false);
  const [touched, setTouched] = useState(false);

  const nameError = checkName(name);
  const emailError = checkEmail(email);
  const meta = parseMetadata(metadata);
  const bookError = bookErrors(book, c.id);
  const invalid = Boolean(nameError || emailError || meta.error || Object.keys(bookError).length > 0);
  // A refusal of the API that names a book field is shown at that field (a parent that does not exist).
  const refusedAt = error instanceof ApiError && error.param ? BOOK_PARAMS[error.param] : undefined;

  const edit = (set: (v: string) => void) => (e: Event) => {
    set((e.currentTarget as HTMLInputElement).value);
    setTouched(true);
    props.onChange();
  };

  const submit = async (e: Event) => {
    e.preventDefault();
    setTouched(true);
    if (invalid || !meta.value) return;
    const body: Record<string, unknown> = {};
    if (name !== c.name) body.name = name;
    if (email !== c.email) body.email = email;
    const patch = metadataPatch(c.metadata, meta.value);
    if (patch) body.metadata = patch;
    Object.assign(body, bookPatch(c, book));
    if (Object.keys(body).length === 0) {
      setError(new Error('Nothing has changed.'));
      return;
    }
    setBusy(true);
    setError(undefined);
    try {
      const updated = await api.patch<Customer>(customerPath(c.id), body);
      setMetadata(JSON.stringify(updated.metadata, null, 2));
      setBook(draftOf(updated));
      setTouched(false);
      props.onSaved(updated);
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };

  const show = (message: string | undefined) => (touched ? message : undefined);
  return (
    <form onSubmit={submit} noValidate class="form">
      <Field id="customer-name" label="Name" error={show(nameError)}>
        <input
          id="customer-name"
          value={name}
          maxLength={512}
          onInput={edit(setName)}
          aria-invalid={show(nameError) ? true : undefined}
          aria-describedby={show(nameError) ? 'customer-name-error' : undefined}
        />
      </Field>
      <Field id="customer-email" label="Email" error={show(emailError)}>
        <input
          id="customer-email"
          type="email"
          value={email}
          maxLength={320}
          onInput={edit(setEmail)}
          aria-invalid={show(emailError) ? true : undefined}
          aria-describedby={show(emailError) ? 'customer-email-error' : undefined}
        />
      </Field>
      <Field id="customer-metadata" label="Metadata (JSON object)" error={show(meta.error)}>
        <textarea
          id="customer-metadata"
          class="mono"
          rows={Math.min(14, Math.max(4, metadata.split('\n').length + 1))}
          value={metadata}
          spellcheck={false}
          onInput={edit(setMetadata)}
          aria-invalid={show(meta.error) ? true : undefined}
          aria-describedby={`customer-metadata-hint${show(meta.error) ? ' customer-metadata-error' : ''}`}
        />
        <p class="hint" id="customer-metadata-hint">
          At most 50 keys of 1–64 characters, 16 KiB in all. Remove a key to delete it.
        </p>
      </Field>
      <BookInputs
        draft={book}
        onDraft={(d) => {
          setBook(d);
          setTouched(true);
          setError(undefined);
          props.onChange();
        }}
        error={(field) =>
          show(bookError[field]) ?? (refusedAt === field ? (error as ApiError).message : undefined)
        }
      />
      {!refusedAt && <ErrorMessage error={error} title="Not saved:" />}
      <button type="submit" disabled={busy}>
        {busy ? 'Saving…' : 'Save changes'}
      </button>
    </form>
  );
}
