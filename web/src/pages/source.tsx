// A source's page (docs/dashboard.md, "Sources"): its counters, where its tool sends, its settings
// and its live log, read again every few seconds while the page is open. Admins and write keys
// enable, disable or delete it; the others read.
import { Fragment } from 'preact';
import { useState } from 'preact/hooks';
import { ApiError, api, type Source, sourcePath } from '../api.ts';
import { count, when } from '../format.ts';
import { Link, navigate, paths } from '../router.tsx';
import { CopyField, ErrorMessage, LiveNotice, Loading, Page, useMayAdminister } from '../ui.tsx';
import { SourceLog, usePolled } from './source-log.tsx';
import { lastReceived, TYPE_LABEL } from './sources.tsx';

export function SourcePage({ id }: { id: string }) {
  const may = useMayAdminister();
  // The counters follow the log: read again at each of its rounds.
  const loaded = usePolled((signal) => api.get<Source>(sourcePath(id), signal), [id]);
  if (loaded.error && !loaded.data) {
    const missing = loaded.error instanceof ApiError && loaded.error.status === 404;
    return (
      <Page title={missing ? 'Source not found' : 'Source'}>
        <ErrorMessage error={loaded.error} />
        <p>
          <Link href={paths.sources}>Back to the sources</Link>
        </p>
      </Page>
    );
  }
  const source = loaded.data;
  if (!source) return <Loading what="the source" />;
  return (
    <Page
      title={source.name}
      subtitle={
        <>
          {TYPE_LABEL[source.type] ?? source.type} source · <span class="mono">{source.id}</span> ·{' '}
          <span class={`badge ${source.enabled ? 'healthy' : 'off'}`}>
            {source.enabled ? 'Enabled' : 'Disabled'}
          </span>
        </>
      }
    >
      <p>
        <Link href={paths.sources}>← All sources</Link>
      </p>
      <ErrorMessage error={loaded.error} title="Not read again:" />
      <Stats source={source} />
      <div class="grid">
        <Connection source={source} />
        {may && <Actions source={source} onChanged={loaded.set} />}
      </div>
      <SourceLog sourceId={id} />
    </Page>
  );
}

function Stats({ source }: { source: Source }) {
  const { stats } = source;
  const cards = [
    { label: 'Received', value: stats.received, tone: '' },
    { label: 'Applied', value: stats.applied, tone: 'healthy' },
    { label: 'Ignored', value: stats.ignored, tone: '' },
    { label: 'Refused', value: stats.refused, tone: stats.refused > 0 ? 'critical' : '' },
  ];
  return (
    <section aria-labelledby="stats-title">
      <h2 id="stats-title" class="sr-only">
        Messages received
      </h2>
      <ul class="cards">
        {cards.map((c) => (
          <li key={c.label} class={`card stat ${c.tone}`}>
            <span class="label">{c.label}</span>
            <span class="value" data-testid={`stat-${c.label.toLowerCase()}`}>
              {count(c.value)}
            </span>
          </li>
        ))}
      </ul>
      <p class="hint">Since it was created; {lastReceived(stats)}.</p>
    </section>
  );
}

function Connection({ source }: { source: Source }) {
  // A webhook source without a signature is authenticated by the token in its URL, shown once.
  const tokenUrl = source.type === 'webhook' && !source.signature;
  return (
    <section aria-labelledby="connection-title" class="card">
      <h2 id="connection-title">Connection</h2>
      {tokenUrl ? (
        <p>
          Its tool sends to <code class="break">{source.ingest_url}</code>, where <code>…</code> is the token
          shown once when the source was created.
        </p>
      ) : (
        <CopyField id="source-ingest-url" label="Ingest URL" value={source.ingest_url} />
      )}
      <dl class="details">
        {source.type === 'segment' && (
          <>
            <dt>Write key</dt>
            <dd>shown once, when the source was created</dd>
            <dt>Trusted</dt>
            <dd>
              {source.trusted
                ? 'yes: may create customers and set their book'
                : 'no: counts and metadata only'}
            </dd>
          </>
        )}
        {source.signature && (
          <>
            <dt>Signature</dt>
            <dd class="mono break">
              {source.signature.header}: {source.signature.prefix ?? ''}HMAC-SHA256 (
              {source.signature.encoding})
            </dd>
          </>
        )}
        {Object.entries(source.mapping ?? {}).map(([field, expression]) => (
          <Fragment key={field}>
            <dt class="mono">{field}</dt>
            <dd class="mono break">{expression}</dd>
          </Fragment>
        ))}
        <dt>Created</dt>
        <dd>{when(source.created_at)}</dd>
      </dl>
    </section>
  );
}

function Actions({ source, onChanged }: { source: Source; onChanged: (s: Source) => void }) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>();
  const [notice, setNotice] = useState<string>();
  const act = async (what: () => Promise<void>) => {
    setBusy(true);
    setError(undefined);
    setNotice(undefined);
    try {
      await what();
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  const toggle = () =>
    act(async () => {
      onChanged(await api.patch<Source>(sourcePath(source.id), { enabled: !source.enabled }));
      setNotice(source.enabled ? 'Disabled: its tool’s messages are refused with 401.' : 'Enabled.');
    });
  const remove = () => {
    if (
      !confirm(`Delete the source “${source.name}”? Its log goes with it, and its ingest URL stops working.`)
    )
      return;
    act(async () => {
      await api.delete(sourcePath(source.id));
      navigate(paths.sources);
    });
  };
  return (
    <section aria-labelledby="actions-title" class="card">
      <h2 id="actions-title">Actions</h2>
      <ul class="hint">
        <li>
          A disabled source refuses its tool’s messages (401) and records nothing; enable it again at any
          time.
        </li>
        <li>Deleting drops the source with its log. What its messages changed stays.</li>
      </ul>
      <div class="actions stacked">
        <button type="button" class="secondary" onClick={toggle} disabled={busy}>
          {source.enabled ? 'Disable' : 'Enable'}
        </button>
        <button type="button" class="danger" onClick={remove} disabled={busy}>
          Delete source
        </button>
      </div>
      <ErrorMessage error={error} />
      <LiveNotice notice={notice} />
    </section>
  );
}
