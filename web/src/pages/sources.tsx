// The Sources page (docs/dashboard.md, "Sources"; docs/sources.md): the tools that send data to
// Vitals, each with its counters and when it last sent, and a form to connect one. Everyone reads
// them; admins and write keys (mayAdminister) connect, enable and disable them — the others see no
// control for it.
import { useState } from 'preact/hooks';
import { api, type Source, type SourceCreated, sourcePath } from '../api.ts';
import { count, when } from '../format.ts';
import { Link, paths } from '../router.tsx';
import { ErrorMessage, Loading, Page, useLoad, useMayAdminister } from '../ui.tsx';
import { CreateSourceForm } from './source-create.tsx';
import { ShownOnce } from './source-reveal.tsx';

export const TYPE_LABEL: Record<string, string> = {
  segment: 'Segment',
  stripe: 'Stripe',
  webhook: 'Webhook',
};

export function SourcesPage() {
  const may = useMayAdminister();
  const list = useLoad((signal) => api.get<{ data: Source[] }>('/api/sources', signal), []);
  const [created, setCreated] = useState<SourceCreated>();
  const replace = (changed: Source) =>
    list.data && list.set({ data: list.data.data.map((s) => (s.id === changed.id ? changed : s)) });
  return (
    <Page
      title="Sources"
      subtitle="The tools that send data to Vitals in their own format: a Segment-Spec library, Stripe, any tool’s webhook."
    >
      {created && <ShownOnce source={created} onDismiss={() => setCreated(undefined)} />}
      <section aria-labelledby="sources-title" class="card">
        <h2 id="sources-title">Connected sources</h2>
        <ErrorMessage error={list.error} />
        {list.loading && !list.data && <Loading what="the sources" />}
        {list.data && list.data.data.length === 0 && (
          <p>No sources yet.{may ? ' Connect one below.' : ' An admin connects them.'}</p>
        )}
        {list.data && list.data.data.length > 0 && (
          <ul class="source-list">
            {list.data.data.map((s) => (
              <SourceItem key={s.id} source={s} may={may === true} onChanged={replace} />
            ))}
          </ul>
        )}
      </section>
      {may && (
        <section aria-labelledby="connect-title" class="card">
          <h2 id="connect-title">Connect a source</h2>
          <CreateSourceForm
            onCreated={(source) => {
              setCreated(source);
              list.reload();
              window.scrollTo({ top: 0 });
            }}
          />
        </section>
      )}
    </Page>
  );
}

/** What a source has received: "12 received · 10 applied · 1 ignored · 1 refused". */
export function StatsLine({ stats }: { stats: Source['stats'] }) {
  return (
    <>
      {count(stats.received)} received · {count(stats.applied)} applied · {count(stats.ignored)} ignored ·{' '}
      <span class={stats.refused > 0 ? 'warn' : undefined}>{count(stats.refused)} refused</span>
    </>
  );
}

export const lastReceived = (stats: Source['stats']) =>
  stats.last_received_at ? `last received ${when(stats.last_received_at)}` : 'nothing received yet';

function SourceItem(props: { source: Source; may: boolean; onChanged: (s: Source) => void }) {
  const { source, may } = props;
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>();
  const toggle = async (enabled: boolean) => {
    setBusy(true);
    setError(undefined);
    try {
      props.onChanged(await api.patch<Source>(sourcePath(source.id), { enabled }));
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  return (
    <li data-testid={`source-${source.id}`}>
      <div class="source-head">
        <Link href={paths.source(source.id)} class="source-name break">
          {source.name}
        </Link>
        <span class="badge">{TYPE_LABEL[source.type] ?? source.type}</span>
        {may ? (
          <label class="check switch">
            <input
              type="checkbox"
              checked={source.enabled}
              disabled={busy}
              onChange={(e) => toggle(e.currentTarget.checked)}
            />
            Enabled<span class="sr-only">: {source.name}</span>
          </label>
        ) : (
          <span class={`badge ${source.enabled ? 'healthy' : 'off'}`}>
            {source.enabled ? 'Enabled' : 'Disabled'}
          </span>
        )}
      </div>
      <p class="sub">
        <StatsLine stats={source.stats} /> · {lastReceived(source.stats)}
      </p>
      <ErrorMessage error={error} title="Not changed:" />
    </li>
  );
}
