// `npm install` / `npm ci` run this (the prepare script): build the dashboard into dist/web.
// A production install without devDependencies has no Vite: it says so and installs anyway,
// and Vitals then answers / with a 503 that says to build. Plain JavaScript, not TypeScript:
// without devDependencies the Node that runs it may be the machine's own, too old to strip types.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';

if (!existsSync(new URL('../node_modules/vite/package.json', import.meta.url))) {
  console.warn('Vite is not installed (an install without devDependencies): the dashboard is not built.');
  console.warn('Install with devDependencies and run `npm run build` to serve it at /.');
} else {
  const build = spawnSync('npm', ['run', 'build'], { stdio: 'inherit' });
  process.exitCode = build.status ?? 1;
}
