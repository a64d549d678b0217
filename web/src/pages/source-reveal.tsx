// What a source's create answer shows once (docs/sources.md): a Segment source's write key, a
// webhook source's URL with its token or its generated signature secret. Vitals keeps only their
// hashes, so they cannot be shown again; the ingest URL of the others is on the source's page too.
import type { SourceCreated } from '../api.ts';
import { Link, paths } from '../router.tsx';
import { CopyField } from '../ui.tsx';

/** The host a Segment library is given: the ingest URL without its /v1/batch. */
const hostOf = (url: string) => url.replace(/\/v1\/batch$/, '');

function secretWords(source: SourceCreated): string | undefined {
  if (source.write_key) return 'write key';
  if (source.signature_secret) return 'signature secret';
  if (source.type === 'webhook' && !source.signature) return 'ingest URL, whose token authenticates,';
  return undefined;
}

export function ShownOnce({ source, onDismiss }: { source: SourceCreated; onDismiss: () => void }) {
  const secret = secretWords(source);
  const url = source.ingest_url ?? '';
  return (
    <section class="card secret" aria-labelledby="shown-title" data-testid="shown-once">
      <h2 id="shown-title">Connect {source.name}</h2>
      {secret ? (
        <p>
          Copy the {secret} now and keep it as you would a password:{' '}
          <strong>you will not see it again</strong>. Vitals keeps only its hash.
        </p>
      ) : (
        <p>The source is created. Give its ingest URL to the tool.</p>
      )}
      <CopyField id="src-ingest-url" label="Ingest URL" value={url} />
      {source.write_key && (
        <>
          <CopyField id="src-write-key" label="Write key" value={source.write_key} />
          <p class="hint">
            Segment’s libraries take the address without <code>/v1/batch</code> as their host:{' '}
            <code class="break">{`new Analytics({ writeKey, host: '${hostOf(url)}' })`}</code>
          </p>
        </>
      )}
      {source.signature_secret && (
        <CopyField id="src-signature-secret" label="Signature secret" value={source.signature_secret} />
      )}
      {source.type === 'stripe' && (
        <p class="hint">In Stripe, set the endpoint’s URL to this address; its signing secret stays.</p>
      )}
      <div class="actions">
        <button type="button" class="secondary" onClick={onDismiss}>
          {secret ? 'I have saved it' : 'Done'}
        </button>
        <Link href={paths.source(source.id)}>Watch its log</Link>
      </div>
    </section>
  );
}
