#!/usr/bin/env node
// vitals serve | migrate [--check] | healthcheck | version | keys create|list|revoke | users create|list|remove | backup PATH
//        | import customers|scores|metrics|outcomes FILE
//        | export customers|scores|metrics|outcomes [FILE]
//        | explain CUSTOMER_ID   (USAGE below says it all)
// Each command loads only what it uses: import, export and explain are HTTP clients and load no server.
import { existsSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { ConfigError, loadConfig } from './config.ts';
import type { Store } from './store/store.ts';

const USAGE = `Usage: vitals <command>

  serve                          run the service (the default)
  migrate                        bring the database schema up to date
        [--check]                  change nothing: exit 0 when it is up to date, 1 when
                                   migrations are pending or the schema is newer than this Vitals
  healthcheck                    exit 0 when the Vitals on this machine's PORT is ready (its
                                 /readyz answers 200), 1 otherwise (a container's HEALTHCHECK)
  version                        print the release
  keys create [--account NAME]   create an API key (and the account if new); prints the key once
        [--scope read|write]       read: GET only; write (the default): everything
  keys list                      list keys with their scope (never the keys themselves)
  keys revoke ID                 revoke a key by its id
  users create EMAIL             add a dashboard user; prints a one-time link (24 h) to set a password
        [--account NAME] [--role admin|editor|viewer] (default viewer) [--url URL] (the dashboard's)
  users list                     list users: email, account, role, whether a password is set
  users remove EMAIL             remove a user; their sessions end at once
  backup PATH [--force]          write a consistent copy of the SQLite database to PATH, also while
                                 the server runs (--force replaces an existing PATH)
  import customers|scores|metrics|outcomes FILE
                                 send a CSV or NDJSON file (- for stdin) to a running Vitals in
                                 batches; refused rows go to FILE.rejected.ndjson
        [--merge]                  scores: merge factors instead of replacing them
        [--backfill]               metrics: then compute the past scores from the earliest point's
                                   day (at most 730 days back), with the run's progress
        [--batch-size N] [--concurrency N]   rows per request (1000), requests in flight (4)
  export customers|scores|metrics|outcomes [FILE]
                                 write every customer, score, metric point or outcome as CSV or
                                 NDJSON (default stdout)
    both: [--url URL] (http://localhost:3000) [--key KEY] ($VITALS_API_KEY)
          [--format csv|ndjson] (by FILE's extension: .ndjson/.jsonl, else csv;
                                 import from -: ndjson if the input starts with {, else csv)
  explain CUSTOMER_ID [--version N]
                                 why a running Vitals scores the customer as it does (version N
                                 of the score, else the current one): each factor's weight and
                                 contribution, the override, and what moved since the version before
        [--url URL] [--key KEY]    as for import and export

Configuration comes from the environment; see README.md.`;

async function withStore<T>(fn: (store: Store) => Promise<T>): Promise<T> {
  const { openReachable } = await import('./store/open.ts');
  const store = await openReachable(loadConfig());
  try {
    await store.migrate();
    return await fn(store);
  } finally {
    await store.close();
  }
}

async function main(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      account: { type: 'string' },
      scope: { type: 'string' },
      role: { type: 'string' },
      force: { type: 'boolean' },
      url: { type: 'string' },
      key: { type: 'string' },
      format: { type: 'string' },
      merge: { type: 'boolean' },
      backfill: { type: 'boolean' },
      'batch-size': { type: 'string' },
      concurrency: { type: 'string' },
      version: { type: 'string' },
      check: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  const [command = 'serve', sub, arg] = positionals;
  if (values.help) {
    console.log(USAGE);
    return 0;
  }
  switch (command) {
    case 'serve': {
      const { serve } = await import('./main.ts');
      await serve(loadConfig());
      return -1; // keeps running until a signal
    }
    case 'import':
    case 'export': {
      if (positionals.length > 3) break;
      boundHeap();
      const { runExport, runImport } = await import('./transfer/commands.ts');
      const args = {
        kind: sub,
        file: arg,
        url: values.url,
        key: values.key,
        format: values.format,
        merge: values.merge ?? false,
        backfill: values.backfill ?? false,
        batchSize: values['batch-size'],
        concurrency: values.concurrency,
      };
      return command === 'import' ? runImport(args) : runExport(args);
    }
    case 'explain': {
      if (positionals.length !== 2) break;
      const { runExplain } = await import('./transfer/explain.ts');
      return runExplain({ customerId: sub, version: values.version, url: values.url, key: values.key });
    }
    case 'migrate': {
      if (positionals.length !== 1) break;
      if (values.check) return migrateCheck();
      const version = await withStore((s) => s.migrate());
      console.log(`Database schema is at version ${version}.`);
      return 0;
    }
    case 'healthcheck':
      if (positionals.length !== 1) break;
      return healthcheck();
    case 'version': {
      const { VERSION } = await import('./version.ts');
      console.log(VERSION);
      return 0;
    }
    case 'keys':
      if (sub === 'create') {
        const accountName = values.account ?? 'default';
        if (!accountNameValid(accountName)) return 2;
        const scope = values.scope ?? 'write';
        if (scope !== 'read' && scope !== 'write') {
          console.error('--scope must be read (GET only) or write (everything).');
          return 2;
        }
        const { createApiKey } = await import('./keys.ts');
        const { id, key } = await withStore((s) => createApiKey(s, accountName, undefined, { scope }));
        console.error(
          `Created key ${id} for account '${accountName}' (${scope}). It is shown only this once:`,
        );
        console.log(key);
        return 0;
      }
      if (sub === 'list') {
        const keys = await withStore((s) => s.listApiKeys());
        for (const k of keys) {
          const state = k.revokedAt ? `revoked ${new Date(k.revokedAt).toISOString()}` : 'active';
          console.log(
            `${k.id}\t${k.accountName}\t${k.scope}\t${k.prefix}…\t${new Date(k.createdAt).toISOString()}\t${state}`,
          );
        }
        if (keys.length === 0) console.error('No keys yet.');
        return 0;
      }
      if (sub === 'revoke' && arg) {
        const revoked = await withStore((s) => s.revokeApiKey(arg, Date.now()));
        if (!revoked) {
          console.error(`No active key with id '${arg}'.`);
          return 1;
        }
        console.log(`Revoked ${arg}.`);
        return 0;
      }
      break;
    case 'users':
      return users(sub, arg, positionals.length, values);
    case 'backup':
      if (sub && positionals.length === 2) return backup(sub, values.force ?? false);
      break;
  }
  return usage();
}

/**
 * Import and export stream, but V8 sizes its heap by allocation rate: on a machine with memory to
 * spare it would grow to about 300 MB where 30 MB is live. The process replaces itself (execve:
 * no parent stays behind) with one whose heap is bounded, unless the user chose the bounds in
 * NODE_OPTIONS or node's own flags (docs/cli.md, "Memory"; BENCHMARKS.md, "What we learned").
 */
function boundHeap(): void {
  const chosen = [...process.execArgv, process.env.NODE_OPTIONS ?? ''].join(' ');
  if (/--max-(semi|old)-space-size/.test(chosen) || typeof process.execve !== 'function') return;
  const [script = '', ...args] = process.argv.slice(1);
  process.execve(
    process.execPath,
    [process.execPath, ...HEAP_BOUNDS, ...process.execArgv, script, ...args],
    process.env as Record<string, string>,
  );
}

const HEAP_BOUNDS = ['--max-semi-space-size=2', '--max-old-space-size=128'];

const POSTGRES_BACKUP = `vitals backup copies the SQLite database only; this Vitals uses PostgreSQL (DATABASE_URL is set).
Back PostgreSQL up with its own tools, which take a consistent snapshot while Vitals keeps serving:

  pg_dump --format=custom --file=vitals.dump "$DATABASE_URL"

Restore into an empty database (stop Vitals first, then point DATABASE_URL at it and start):

  pg_restore --no-owner --dbname="postgres://…/vitals" vitals.dump

For point-in-time recovery, set up continuous WAL archiving with a base backup (pg_basebackup);
see "Backup and Restore" in the PostgreSQL documentation.`;

async function users(
  sub: string | undefined,
  email: string | undefined,
  count: number,
  values: { account?: string | undefined; role?: string | undefined; url?: string | undefined },
): Promise<number> {
  if (sub === 'list' && count === 2) {
    const all = await withStore((s) => s.listUsers());
    for (const u of all) {
      const password = u.hasPassword ? 'password set' : 'link not used yet';
      console.log(
        `${u.email}\t${u.accountName}\t${u.role}\t${password}\t${new Date(u.createdAt).toISOString()}`,
      );
    }
    if (all.length === 0) console.error('No users yet.');
    return 0;
  }
  if (sub === 'remove' && email && count === 3) {
    const { normalizeEmail } = await import('./domain/people.ts');
    if (!(await withStore((s) => s.removeUser(normalizeEmail(email))))) {
      console.error(`No user with the email '${email}'.`);
      return 1;
    }
    console.log(`Removed ${email}; their sessions have ended.`);
    return 0;
  }
  if (sub !== 'create' || !email || count !== 3) return usage();
  const accountName = values.account ?? 'default';
  const role = values.role ?? 'viewer';
  if (!/^[^@\s]+@[^@\s]+$/.test(email) || email.length > 320) {
    console.error('EMAIL must be an email address.');
    return 2;
  }
  if (!accountNameValid(accountName)) return 2;
  if (role !== 'admin' && role !== 'editor' && role !== 'viewer') {
    console.error('--role must be admin, editor or viewer.');
    return 2;
  }
  const { createUser } = await import('./keys.ts');
  const made = await withStore((s) => createUser(s, { email, accountName, role }));
  if (!made) {
    console.error(`A user with the email '${email}' exists already (emails are unique across accounts).`);
    return 1;
  }
  const base = (values.url ?? `http://localhost:${process.env.PORT ?? 3000}`).replace(/\/$/, '');
  console.error(`Added ${email} (${role}) to account '${accountName}'. Their one-time link, valid 24 hours:`);
  console.log(`${base}/set-password#token=${made.token}`);
  return 0;
}

/** Whether --account names an account; says why not. */
function accountNameValid(name: string): boolean {
  if (/^[A-Za-z0-9_.-]{1,64}$/.test(name)) return true;
  console.error('--account must be 1-64 letters, digits, dots, dashes or underscores.');
  return false;
}

/** `migrate --check`: where the schema is, changing nothing (docs/cli.md, "Migrations"). */
async function migrateCheck(): Promise<number> {
  const { openReachable } = await import('./store/open.ts');
  const { schemaNewer } = await import('./store/migration-errors.ts');
  const store = await openReachable(loadConfig());
  try {
    const { applied, latest } = await store.migrationStatus();
    if (applied > latest) {
      console.error(schemaNewer(applied, latest).message);
      return 1;
    }
    if (applied < latest) {
      console.log(
        `${latest - applied} migration(s) pending: the schema is at version ${applied}, this Vitals at ${latest}. ` +
          '`vitals migrate` (or starting Vitals) applies them.',
      );
      return 1;
    }
    console.log(`The schema is up to date (version ${latest}).`);
    return 0;
  } finally {
    await store.close();
  }
}

/**
 * A container's HEALTHCHECK: GET /readyz of the Vitals this configuration runs (PORT; HOST unless
 * it listens on every address), within 3 s; exits 0 on 200. Loads no store.
 */
async function healthcheck(): Promise<number> {
  const config = loadConfig();
  const everywhere = ['0.0.0.0', '::', ''].includes(config.host);
  const host = everywhere ? '127.0.0.1' : config.host.includes(':') ? `[${config.host}]` : config.host;
  const url = `http://${host}:${config.port}/readyz`;
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(3000) });
    if (res.status === 200) return 0;
    console.error(`${url} answered ${res.status}: ${(await res.text()).slice(0, 300)}`);
  } catch (err) {
    console.error(`${url}: ${(err as Error).message}`);
  }
  return 1;
}

function usage(): number {
  console.error(USAGE);
  return 2;
}

async function backup(path: string, force: boolean): Promise<number> {
  if (path === '-') {
    console.error('vitals backup cannot write to standard output (-); give the path of a file to write.');
    return 2;
  }
  const config = loadConfig();
  if (config.databaseUrl) {
    // Never the URL itself: it may hold a password.
    console.error(POSTGRES_BACKUP);
    return 2;
  }
  const { sqlitePath } = await import('./store/open.ts');
  const { BackupError, backupSqlite } = await import('./store/sqlite/backup.ts');
  const source = sqlitePath(config.dataDir);
  if (!existsSync(source)) {
    console.error(
      `There is no database at ${source}; nothing was backed up. Is VITALS_DATA_DIR (now ${config.dataDir}) right?`,
    );
    return 1;
  }
  try {
    const done = backupSqlite(source, path, { force });
    console.log(
      `Backed up ${done.source} to ${done.target} (${formatBytes(done.bytes)}) in ${(done.ms / 1000).toFixed(1)} s.`,
    );
    return 0;
  } catch (err) {
    if (!(err instanceof BackupError)) throw err;
    console.error(err.message);
    return 1;
  }
}

function formatBytes(bytes: number): string {
  if (bytes < 1000) return `${bytes} B`;
  const [size, unit] =
    bytes < 1e6 ? [bytes / 1e3, 'kB'] : bytes < 1e9 ? [bytes / 1e6, 'MB'] : [bytes / 1e9, 'GB'];
  return `${size.toFixed(1)} ${unit}`;
}

main(process.argv.slice(2)).then(
  (code) => {
    if (code >= 0) process.exitCode = code;
  },
  (err) => {
    if (err instanceof ConfigError) {
      console.error(`Configuration error: ${err.message}`);
    } else if (err?.name === 'StartError' || err?.name === 'MigrationError') {
      // A database that cannot be used, or a migration that failed: the message says what to do.
      console.error(err.message);
    } else if (
      err?.code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION' ||
      err?.code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE'
    ) {
      console.error(`${err.message}\n\n${USAGE}`);
      process.exitCode = 2;
      return;
    } else {
      console.error(err);
    }
    process.exitCode = 1;
  },
);
