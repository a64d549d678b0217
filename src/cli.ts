#!/usr/bin/env node
// vitals serve | migrate | keys create [--account NAME] | keys list | keys revoke ID
import { parseArgs } from 'node:util';
import { ConfigError, loadConfig } from './config.ts';
import { createApiKey } from './keys.ts';
import { serve } from './main.ts';
import { openStore } from './store/open.ts';

const USAGE = `Usage: vitals <command>

  serve                          run the service (the default)
  migrate                        bring the database schema up to date
  keys create [--account NAME]   create an API key (and the account if new); prints the key once
  keys list                      list keys (never the keys themselves)
  keys revoke ID                 revoke a key by its id

Configuration comes from the environment; see README.md.`;

async function withStore<T>(fn: (store: ReturnType<typeof openStore>) => Promise<T>): Promise<T> {
  const store = openStore(loadConfig());
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
    options: { account: { type: 'string' }, help: { type: 'boolean', short: 'h' } },
  });
  const [command = 'serve', sub, arg] = positionals;
  if (values.help) {
    console.log(USAGE);
    return 0;
  }
  switch (command) {
    case 'serve':
      await serve(loadConfig());
      return -1; // keeps running until a signal
    case 'migrate': {
      const version = await withStore((s) => s.migrate());
      console.log(`Database schema is at version ${version}.`);
      return 0;
    }
    case 'keys':
      if (sub === 'create') {
        const accountName = values.account ?? 'default';
        if (!/^[A-Za-z0-9_.-]{1,64}$/.test(accountName)) {
          console.error('--account must be 1-64 letters, digits, dots, dashes or underscores.');
          return 2;
        }
        const { id, key } = await withStore((s) => createApiKey(s, accountName));
        console.error(`Created key ${id} for account '${accountName}'. It is shown only this once:`);
        console.log(key);
        return 0;
      }
      if (sub === 'list') {
        const keys = await withStore((s) => s.listApiKeys());
        for (const k of keys) {
          const state = k.revokedAt ? `revoked ${new Date(k.revokedAt).toISOString()}` : 'active';
          console.log(
            `${k.id}\t${k.accountName}\t${k.prefix}…\t${new Date(k.createdAt).toISOString()}\t${state}`,
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
  }
  console.error(USAGE);
  return 2;
}

main(process.argv.slice(2)).then(
  (code) => {
    if (code >= 0) process.exitCode = code;
  },
  (err) => {
    if (err instanceof ConfigError) {
      console.error(`Configuration error: ${err.message}`);
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
