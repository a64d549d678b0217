// Notes on the customer page (docs/dashboard.md, "Customer"; docs/api.md, "Notes"): what people know
// that no signal carries, newest first, older ones a page at a time. Editors and admins add them; a
// note is edited or deleted by its author, or by an admin (a write key counts as one), as the API
// allows: the others see no button for it.
import { useLayoutEffect, useState } from 'preact/hooks';
import { ApiError, api, can, customerPath, type Note, notePath, query, session } from '../api.ts';
import { when } from '../format.ts';
import { ErrorMessage, Field, LiveNotice, Loading, useLoad, useMayEdit } from '../ui.tsx';

const PAGE = 20;

/** Fired on window when this tab added, changed or deleted a note: the customer's timeline reads again. */
export const NOTES_CHANGED = 'vitals:notes-changed';
const notesChanged = () => window.dispatchEvent(new Event(NOTES_CHANGED));
const BODY_MAX = 10_000;

type Notes = { data: Note[]; has_more: boolean };

/** Who wrote it: a person by their email, a key by its prefix ("API key vk_1a2b…"). */
const authorWords = (a: Note['author']) =>
  a.type === 'user' ? a.label : a.type === 'key' ? `API key ${a.label}` : `${a.type} ${a.label}`;

/** Whether this session may change the note: an admin or a write key any, an editor their own. */
function mayChange(note: Note, may: boolean): boolean {
  if (!may) return false;
  const user = session.user;
  if (!user || can('administer')) return true;
  return note.author.type === 'user' && note.author.id === user.id;
}

export function NotesCard({ customerId }: { customerId: string }) {
  const may = useMayEdit() === true;
  const first = useLoad(
    (signal) => api.get<Notes>(`${customerPath(customerId)}/notes${query({ limit: PAGE })}`, signal),
    [customerId],
  );
  // The notes shown: the first page, then older pages as asked for, changed in place by this tab.
  const [older, setOlder] = useState<Notes>({ data: [], has_more: false });
  const [loadingOlder, setLoadingOlder] = useState(false);
  const [error, setError] = useState<unknown>();
  const [notice, setNotice] = useState<string>();
  const notes = first.data ? [...first.data.data, ...older.data] : undefined;
  const hasMore = older.data.length > 0 ? older.has_more : first.data?.has_more === true;

  const replace = (changed: Note) => {
    if (!first.data) return;
    const swap = (list: Note[]) => list.map((n) => (n.id === changed.id ? changed : n));
    first.set({ ...first.data, data: swap(first.data.data) });
    setOlder({ ...older, data: swap(older.data) });
  };
  const drop = (id: string) => {
    if (!first.data) return;
    first.set({ ...first.data, data: first.data.data.filter((n) => n.id !== id) });
    setOlder({ ...older, data: older.data.filter((n) => n.id !== id) });
  };

  const showOlder = async () => {
    setLoadingOlder(true);
    setError(undefined);
    try {
      const page = await api.get<Notes>(
        `${customerPath(customerId)}/notes${query({ limit: PAGE, starting_after: notes?.at(-1)?.id })}`,
      );
      setOlder({ data: [...older.data, ...page.data], has_more: page.has_more });
    } catch (err) {
      setError(err);
    } finally {
      setLoadingOlder(false);
    }
  };

  return (
    <section aria-labelledby="notes-title" class="card" data-testid="customer-notes">
      <h2 id="notes-title">Notes</h2>
      <LiveNotice notice={notice} />
      {may && (
        <AddNote
          customerId={customerId}
          onAdded={(note) => {
            if (first.data) first.set({ ...first.data, data: [note, ...first.data.data] });
            setNotice('Note added.');
            notesChanged();
          }}
        />
      )}
      <ErrorMessage error={first.error ?? error} />
      {first.loading && !notes && <Loading what="the notes" />}
      {notes && notes.length === 0 && <p data-testid="no-notes">No notes yet.</p>}
      {notes && notes.length > 0 && (
        <ul class="notes" aria-label="Notes, newest first">
          {notes.map((n) => (
            <NoteItem
              key={n.id}
              note={n}
              may={mayChange(n, may)}
              onSaved={(note) => {
                replace(note);
                setNotice('Note saved.');
                notesChanged();
              }}
              onDeleted={() => {
                drop(n.id);
                setNotice('Note deleted.');
                notesChanged();
              }}
            />
          ))}
        </ul>
      )}
      {hasMore && (
        <button type="button" class="secondary small" onClick={showOlder} disabled={loadingOlder}>
          {loadingOlder ? 'Loading…' : 'Show older notes'}
        </button>
      )}
    </section>
  );
}

/** The note's text field and its error (the API's `param` is `body`), for adding and editing. */
function BodyField(props: {
  id: string;
  label: string;
  value: string;
  refused: unknown;
  onValue: (v: string) => void;
}) {
  const error =
    props.refused instanceof ApiError && props.refused.param === 'body' ? props.refused.message : undefined;
  return (
    <Field id={props.id} label={props.label} error={error}>
      <textarea
        id={props.id}
        rows={3}
        maxLength={BODY_MAX}
        value={props.value}
        onInput={(e) => props.onValue(e.currentTarget.value)}
        aria-invalid={error ? true : undefined}
        aria-describedby={error ? `${props.id}-error` : undefined}
      />
    </Field>
  );
}

const placedAtBody = (e: unknown) => e instanceof ApiError && e.param === 'body';

function AddNote(props: { customerId: string; onAdded: (note: Note) => void }) {
  const [body, setBody] = useState('');
  const [refused, setRefused] = useState<unknown>();
  const [busy, setBusy] = useState(false);
  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setRefused(undefined);
    try {
      props.onAdded(await api.post<Note>(`${customerPath(props.customerId)}/notes`, { body }));
      setBody('');
    } catch (err) {
      setRefused(err);
      if (placedAtBody(err)) document.getElementById('new-note')?.focus();
    } finally {
      setBusy(false);
    }
  };
  return (
    <form onSubmit={submit} noValidate class="form note-form">
      <BodyField
        id="new-note"
        label="Add a note"
        value={body}
        refused={refused}
        onValue={(v) => {
          setBody(v);
          setRefused(undefined);
        }}
      />
      {!placedAtBody(refused) && <ErrorMessage error={refused} title="Not added:" />}
      <button type="submit" disabled={busy || body.trim() === ''}>
        {busy ? 'Adding…' : 'Add note'}
      </button>
    </form>
  );
}

function NoteItem(props: { note: Note; may: boolean; onSaved: (note: Note) => void; onDeleted: () => void }) {
  const { note } = props;
  const [editing, setEditing] = useState<string>();
  const [refused, setRefused] = useState<unknown>();
  const [busy, setBusy] = useState(false);
  const id = `note-${note.id}`;
  const open = editing !== undefined;
  // Edit puts the cursor in the note's text, in the commit that shows the field.
  useLayoutEffect(() => {
    if (open) document.getElementById(id)?.focus();
  }, [open]);

  const save = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setRefused(undefined);
    try {
      props.onSaved(await api.patch<Note>(notePath(note.id), { body: editing }));
      setEditing(undefined);
    } catch (err) {
      setRefused(err);
    } finally {
      setBusy(false);
    }
  };
  const remove = async () => {
    if (!confirm('Delete this note? It cannot be brought back.')) return;
    setBusy(true);
    setRefused(undefined);
    try {
      await api.delete(notePath(note.id));
      props.onDeleted();
    } catch (err) {
      setRefused(err);
      setBusy(false);
    }
  };

  const edited = note.updated_at !== note.created_at;
  return (
    <li class="note" data-testid="note">
      <p class="note-by">
        <span class="break">{authorWords(note.author)}</span>
        <span class="note-when">
          {' '}
          · {when(note.created_at)}
          {edited && ` · edited ${when(note.updated_at)}`}
        </span>
      </p>
      {editing === undefined ? (
        <p class="note-body">{note.body}</p>
      ) : (
        <form onSubmit={save} noValidate class="form note-form">
          <BodyField
            id={id}
            label="Edit the note"
            value={editing}
            refused={refused}
            onValue={(v) => {
              setEditing(v);
              setRefused(undefined);
            }}
          />
          <div class="note-buttons">
            <button type="submit" class="small" disabled={busy || editing.trim() === ''}>
              {busy ? 'Saving…' : 'Save note'}
            </button>
            <button type="button" class="small secondary" onClick={() => setEditing(undefined)}>
              Cancel
            </button>
          </div>
        </form>
      )}
      {props.may && editing === undefined && (
        <div class="note-buttons">
          <button
            type="button"
            class="small secondary"
            onClick={() => {
              setEditing(note.body);
              setRefused(undefined);
            }}
            disabled={busy}
          >
            Edit<span class="sr-only"> the note of {when(note.created_at)}</span>
          </button>
          <button type="button" class="small danger" onClick={remove} disabled={busy}>
            Delete<span class="sr-only"> the note of {when(note.created_at)}</span>
          </button>
        </div>
      )}
      {!placedAtBody(refused) && <ErrorMessage error={refused} title="Not changed:" />}
    </li>
  );
}
