// `npm install` / `npm ci` run this (the prepare script): apply patches/ to the installed
// dependencies (patch-package; docs/postgresql.md, "Queries and the garbage collector"), build the
// dashboard into dist/web and the typed client (`vitals/client`) into dist/client. A production
// install without devDependencies has neither patch-package, Vite nor TypeScript: it says so and
// installs anyway, and Vitals then answers / with a 503 that says to build. Plain JavaScript, not
// TypeScript: without devDependencies the Node that runs it may be the machine's own, too old to
// strip types.
//
// npm also runs it when it packs this directory (`npm pack`, or installing Vitals as a git
// dependency: npm clones it, installs its dependencies, which runs this, then packs the clone,
// which runs this again). A package ships the client alone (`files`, docs/client.md), so there
// only the client is built, once: by the prepack script for `npm pack`, here for a git dependency.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const installed = (name) => existsSync(new URL(`../node_modules/${name}/package.json`, import.meta.url));
const run = (script) => spawnSync('npm', ['run', script], { stdio: 'inherit' }).status ?? 1;

// npm sets npm_package_resolved on the prepare it runs before packing a directory, and
// _PACOTE_NO_PREPARE_ on the install of a git dependency's own dependencies.
const packing = Boolean(process.env.npm_package_resolved);
if (packing || process.env._PACOTE_NO_PREPARE_) {
  const prepacked = ['pack', 'publish'].includes(process.env.npm_command ?? '');
  process.exit(packing && !prepacked ? run('build:client') : 0);
}

let status = 0;
if (!installed('patch-package')) {
  console.warn(
    'patch-package is not installed (an install without devDependencies): patches/ are not applied.',
  );
  console.warn('Vitals runs as well without them, with longer garbage-collection pauses on PostgreSQL.');
} else {
  // A patch that no longer applies (its dependency was upgraded) fails the install.
  const bin = fileURLToPath(new URL('../node_modules/.bin/patch-package', import.meta.url));
  status = spawnSync(bin, ['--error-on-fail'], { stdio: 'inherit' }).status ?? 1;
}
if (!installed('vite')) {
  console.warn('Vite is not installed (an install without devDependencies): the dashboard is not built.');
  console.warn('Install with devDependencies and run `npm run build` to serve it at /.');
} else if (status === 0) {
  status = run('build');
}
if (!installed('typescript')) {
  console.warn(
    'TypeScript is not installed (an install without devDependencies): vitals/client is not built.',
  );
  console.warn('Install with devDependencies and run `npm run build:client` to import it.');
} else if (status === 0) {
  status = run('build:client');
}
process.exitCode = status;
