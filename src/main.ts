// config → store → roles; graceful shutdown on SIGTERM/SIGINT.
import type { Config } from './config.ts';
import { buildApp } from './http/app.ts';
import { bootstrapKeys } from './keys.ts';
import { openStore } from './store/open.ts';

export async function serve(config: Config): Promise<{ close: () => Promise<void>; port: number }> {
  const store = openStore(config);
  await store.migrate();
  const generated = await bootstrapKeys(store, config.apiKey);
  if (generated) {
    process.stdout.write(
      `\nNo API key existed, so Vitals created one for the default account. It is shown only this once:\n\n  ${generated}\n\nUse it as: Authorization: Bearer ${generated}\n\n`,
    );
  }
  const app = await buildApp({ store, config });
  await app.listen({ port: config.port, host: config.host });
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;

  let closing: Promise<void> | undefined;
  const close = () => {
    closing ??= (async () => {
      // Stop accepting, let in-flight requests finish, then close the database.
      await app.close();
      await store.close();
    })();
    return closing;
  };
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.once(signal, () => {
      app.log.info({ signal }, 'shutting down');
      const timer = setTimeout(() => {
        app.log.error('shutdown timed out; exiting');
        process.exit(1);
      }, config.shutdownTimeoutMs);
      timer.unref();
      close().then(
        () => process.exit(0),
        (err) => {
          app.log.error({ err }, 'shutdown failed');
          process.exit(1);
        },
      );
    });
  }
  return { close, port };
}
