// The inbox (docs/dashboard.md, "Inbox"): the work playbooks and people opened, by tab. Mine: my open
// tasks, soonest due first; Team: everyone's; Snoozed: mine put off until later; Done: mine done,
// newest first, to reopen. With an API key there is no "me": Team is the first tab, and Snoozed and
// Done are the team's. The tab is the page's `tab` query parameter, so a tab can be bookmarked and
// Back returns to the one before. The navigation's count (InboxCount) is the Mine tab's length.
import { useEffect } from 'preact/hooks';
import { api, query, session, type Task } from '../api.ts';
import { count } from '../format.ts';
import { Link, paths, useSearch } from '../router.tsx';
import { Page, useLoad } from '../ui.tsx';
import { TASKS_CHANGED, TaskList, type TaskMode } from './tasks.tsx';

type Tab = 'mine' | 'team' | 'snoozed' | 'done';

const TAB_LABEL: Record<Tab, string> = { mine: 'Mine', team: 'Team', snoozed: 'Snoozed', done: 'Done' };

/** The tabs of this session: a key has no "Mine". */
const tabsOf = (): Tab[] =>
  session.user ? ['mine', 'team', 'snoozed', 'done'] : ['team', 'snoozed', 'done'];

function tabOf(search: string): Tab {
  const asked = new URLSearchParams(search).get('tab');
  const tabs = tabsOf();
  return tabs.find((t) => t === asked) ?? (tabs[0] as Tab);
}

/** Each tab's query of GET /api/tasks, the list's mode, and what it says when empty. */
function listOf(tab: Tab): {
  params: Record<string, string | undefined>;
  mode: TaskMode;
  label: string;
  empty: string;
} {
  const me = session.user ? 'me' : undefined;
  switch (tab) {
    case 'mine':
      return {
        params: { assignee: 'me' },
        mode: 'open',
        label: 'My open tasks',
        empty: 'Nothing to do: no open task is yours. Playbooks put new ones here.',
      };
    case 'team':
      return {
        params: {},
        mode: 'open',
        label: "The team's open tasks",
        empty: 'The team has no open task.',
      };
    case 'snoozed':
      return {
        params: { assignee: me, include_snoozed: 'only' },
        mode: 'snoozed',
        label: me ? 'My snoozed tasks' : 'Snoozed tasks',
        empty: 'No task is snoozed.',
      };
    case 'done':
      return {
        params: { assignee: me, status: 'done' },
        mode: 'done',
        label: me ? 'My done tasks' : 'Done tasks',
        empty: 'No task is done yet.',
      };
  }
}

export function InboxPage() {
  const search = useSearch();
  const tab = tabOf(search);
  const list = listOf(tab);
  const first = tabsOf()[0];
  return (
    <Page
      title="Inbox"
      subtitle={
        <>
          The work on your customers: tasks people open and tasks{' '}
          <Link href={`${paths.settings}#playbooks`}>playbooks</Link> open when a customer needs it.
        </>
      }
    >
      <nav class="tabs" aria-label="Inbox tabs">
        <ul>
          {tabsOf().map((t) => (
            <li key={t}>
              <Link
                href={`${paths.inbox}${t === first ? '' : query({ tab: t })}`}
                aria-current={t === tab ? 'page' : undefined}
              >
                {TAB_LABEL[t]}
              </Link>
            </li>
          ))}
        </ul>
      </nav>
      <section class="card" aria-labelledby="inbox-list-title">
        <h2 id="inbox-list-title">{list.label}</h2>
        <TaskList
          key={tab}
          params={list.params}
          mode={list.mode}
          showCustomer
          label={list.label}
          empty={list.empty}
        />
      </section>
    </Page>
  );
}

/** The most the navigation counts; past it, "100+". */
const COUNTED = 100;

/** How often the count is read again while the dashboard stays on one page. */
const REFRESH_MS = 60_000;

/**
 * The count beside "Inbox" in the navigation: the signed-in person's open tasks, snoozed ones left
 * out (the Mine tab's rows), with how many are overdue. Read again on every page or tab change
 * (`where`), when this tab changes a task, and every minute (a playbook opens tasks meanwhile).
 */
export function InboxCount({ where }: { where: string }) {
  const mine = useLoad(
    async (signal) => {
      const answer = await api.get<{ data: Task[]; has_more: boolean }>(
        `/api/tasks${query({ assignee: 'me', limit: COUNTED })}`,
        signal,
      );
      const now = Date.now();
      return {
        open: answer.data.length,
        more: answer.has_more,
        overdue: answer.data.filter((t) => t.due_at !== null && Date.parse(t.due_at) < now).length,
      };
    },
    [where],
  );
  useEffect(() => {
    const reload = () => mine.reload();
    window.addEventListener(TASKS_CHANGED, reload);
    const timer = setInterval(reload, REFRESH_MS);
    return () => {
      window.removeEventListener(TASKS_CHANGED, reload);
      clearInterval(timer);
    };
  }, [mine.reload]);
  const n = mine.data;
  if (!n || n.open === 0) return null;
  const shown = `${count(n.open)}${n.more ? '+' : ''}`;
  return (
    <>
      {' '}
      <span class={`count${n.overdue > 0 ? ' overdue' : ''}`} data-testid="inbox-count" aria-hidden="true">
        {shown}
      </span>
      <span class="sr-only">
        , {shown} open {n.open === 1 && !n.more ? 'task' : 'tasks'}
        {n.overdue > 0 ? `, ${count(n.overdue)}${n.overdue === COUNTED ? '+' : ''} overdue` : ''}
      </span>
    </>
  );
}
