// Runs README.md's "Five calls" against a Vitals in a container (test/image/run.sh): the section's
// shell blocks as a reader pastes them, with VITALS and KEY set, except that the webhook's URL
// names the host as the container sees it (RECEIVER_HOST, e.g. host.containers.internal) where
// the README says localhost: the receiver runs on the host. Exits 1 unless the receiver got the
// score and the status events, and every command succeeded.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fencedBlocks } from '../helpers/docs.ts';
import { ROOT } from '../helpers/server.ts';

const { VITALS, KEY, RECEIVER_HOST } = process.env;
if (!VITALS || !KEY || !RECEIVER_HOST) {
  console.error('usage: VITALS=URL KEY=vk_… RECEIVER_HOST=host node test/image/readme-calls.ts');
  process.exit(2);
}
const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
const start = readme.indexOf('\n## Five calls');
const end = readme.indexOf('\n## ', start + 1);
const section = readme.slice(start, end);
const script = fencedBlocks('README.md', section)
  .filter((b) => b.lang === 'sh')
  .map((b) => b.text)
  .join('\n')
  .split('\n')
  .filter((line) => !/^export (VITALS|KEY)=/.test(line))
  .join('\n')
  .replaceAll('http://localhost:4000/', `http://${RECEIVER_HOST}:4000/`);
if (!script.includes(`http://${RECEIVER_HOST}:4000/vitals`)) {
  console.error("README's five calls no longer subscribe a receiver on port 4000; update this script.");
  process.exit(1);
}
const run = spawnSync('bash', ['-euo', 'pipefail', '-c', script], {
  cwd: ROOT,
  env: { ...process.env, VITALS, KEY },
  encoding: 'utf8',
  timeout: 120_000,
});
const output = `${run.stdout}${run.stderr}`;
console.log(output.replace(/^/gm, '  | '));
const got = (type: string) => new RegExp(`receiver got \\{"type":"${type.replace('.', '\\.')}"`).test(output);
const missing = ['customer.health_score.updated', 'customer.status.changed'].filter((t) => !got(t));
if (run.status !== 0 || missing.length > 0) {
  console.error(
    `README's five calls: exit ${run.status}${missing.length ? `; the receiver never got ${missing.join(', ')}` : ''}`,
  );
  process.exit(1);
}
console.log("README's five calls: every command succeeded and the receiver on the host got the events");
