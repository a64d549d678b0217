// The dashboard's build (dist/web) for the tests that drive it in a browser. `npm test` builds it
// once, before any test file runs (test/global-setup.ts): the server serves the files it finds when
// it starts, so a build running beside another file's server would leave that server without its
// script. A browser test run on its own builds it if web/ changed since.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from './server.ts';

/** Set by the global setup once the build is known to be fresh. */
const BUILT = 'VITALS_TEST_DASHBOARD_BUILT';

/** Whether the built page is missing or older than a file of web/ (so the tests never run a stale build). */
function builtBefore(built: string, sources: string): boolean {
  if (!existsSync(built)) return true;
  const at = statSync(built).mtimeMs;
  return readdirSync(sources, { recursive: true, withFileTypes: true }).some(
    (f) => f.isFile() && statSync(join(f.parentPath, f.name)).mtimeMs > at,
  );
}

export function buildDashboardIfStale(): void {
  if (process.env[BUILT] === '1') return;
  if (builtBefore(join(ROOT, 'dist', 'web', 'index.html'), join(ROOT, 'web'))) {
    const vite = join(ROOT, 'node_modules', 'vite', 'bin', 'vite.js');
    const build = spawnSync(process.execPath, [vite, 'build', '--config', 'web/vite.config.ts'], {
      cwd: ROOT,
      encoding: 'utf8',
    });
    assert.equal(build.status, 0, `npm run build failed:\n${build.stdout}\n${build.stderr}`);
  }
  process.env[BUILT] = '1';
}
