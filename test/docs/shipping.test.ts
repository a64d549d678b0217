// What ships beside the code holds together (issue 55; docs/operations.md, "Containers"): the
// Kubernetes example in docs/operations.md and compose.yaml parse as what they claim to be, the
// image, CHANGELOG.md and package.json name one release, and the Dockerfile keeps its contract.
// `npm run test:image` (test/image/run.sh) builds and runs them; this file only reads them.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { parseAllDocuments } from 'yaml';
import { fencedBlocks } from '../helpers/docs.ts';
import { ROOT } from '../helpers/server.ts';

const read = (file: string) => readFileSync(join(ROOT, file), 'utf8');
const VERSION: string = JSON.parse(read('package.json')).version;

/** Every YAML document of the text, failing on any parse error. */
function documents(text: string, where: string): any[] {
  return parseAllDocuments(text).map((doc) => {
    assert.deepEqual(
      doc.errors.map((e) => e.message),
      [],
      where,
    );
    return doc.toJS();
  });
}

test('every yaml block of the docs parses; the Kubernetes example is a Deployment with probes and its Service', () => {
  const blocks = fencedBlocks('docs/operations.md', read('docs/operations.md')).filter(
    (b) => b.lang === 'yaml',
  );
  const all = blocks.flatMap((b) => documents(b.text, `docs/operations.md:${b.line}`));
  const deployment = all.find((d) => d?.kind === 'Deployment');
  const service = all.find((d) => d?.kind === 'Service');
  assert.ok(deployment && service, 'docs/operations.md has a Deployment and a Service');
  assert.equal(deployment.apiVersion, 'apps/v1');
  assert.deepEqual(deployment.spec.selector.matchLabels, deployment.spec.template.metadata.labels);
  assert.deepEqual(service.spec.selector, deployment.spec.template.metadata.labels);
  const [container] = deployment.spec.template.spec.containers;
  assert.equal(container.image, `registry.example/vitals:${VERSION}`);
  assert.equal(container.ports[0].containerPort, 3000);
  assert.equal(container.readinessProbe.httpGet.path, '/readyz');
  assert.equal(container.startupProbe.httpGet.path, '/readyz');
  assert.equal(container.livenessProbe.httpGet.path, '/healthz');
  assert.equal(service.spec.ports[0].targetPort, container.ports[0].name);
  assert.equal(deployment.spec.template.spec.securityContext.runAsUser, 1000, "the image's user");
  const env = Object.fromEntries(container.env.map((e: { name: string }) => [e.name, e]));
  assert.ok(env.DATABASE_URL.valueFrom.secretKeyRef, 'the database URL comes from a Secret');
});

test('compose.yaml: PostgreSQL 17 and Vitals, each health-checked, Vitals after PostgreSQL is healthy, named volumes', () => {
  const [compose] = documents(read('compose.yaml'), 'compose.yaml');
  const { postgres, vitals } = compose.services;
  assert.equal(postgres.image, `\${POSTGRES_IMAGE:-postgres:17}`);
  assert.match(postgres.healthcheck.test.join(' '), /pg_isready/);
  assert.match(vitals.healthcheck.test.join(' '), /vitals healthcheck/);
  assert.deepEqual(vitals.depends_on, { postgres: { condition: 'service_healthy' } });
  assert.equal(vitals.image, `\${VITALS_IMAGE:-vitals:${VERSION}}`);
  assert.equal(vitals.env_file, '.env');
  assert.match(vitals.environment.DATABASE_URL, /^postgres:\/\/.*@postgres:5432\//);
  assert.deepEqual(Object.keys(compose.volumes).sort(), ['postgres-data', 'vitals-data']);
  assert.deepEqual(vitals.volumes, ['vitals-data:/data']);
  assert.deepEqual(postgres.volumes, ['postgres-data:/var/lib/postgresql/data']);
});

test('.env.example documents every variable compose.yaml reads', () => {
  const used = new Set([...read('compose.yaml').matchAll(/\$\{([A-Z_]+)/g)].map((m) => m[1]));
  const documented = new Set([...read('.env.example').matchAll(/^([A-Z_]+)=/gm)].map((m) => m[1]));
  assert.deepEqual(
    [...used].filter((v) => !documented.has(v)),
    [],
  );
  assert.match(read('.env.example'), /^POSTGRES_PASSWORD=$/m, 'no password is shipped');
});

test('one release: package.json, the lockfile, CHANGELOG.md, the image label and the compose and docs tags', () => {
  assert.equal(JSON.parse(read('package-lock.json')).version, VERSION);
  const changelog = read('CHANGELOG.md');
  const released = [...changelog.matchAll(/^## \[(\d+\.\d+\.\d+)\] - \d{4}-\d{2}-\d{2}$/gm)].map((m) => m[1]);
  assert.equal(released[0], VERSION, 'CHANGELOG.md starts with this release');
  assert.ok(released.includes('0.1.0'));
  const dockerfile = read('Dockerfile');
  assert.match(dockerfile, new RegExp(`^ARG VERSION=${VERSION.replaceAll('.', '\\.')}$`, 'm'));
  assert.match(dockerfile, /org\.opencontainers\.image\.version="\$\{VERSION\}"/);
  assert.match(
    read('.env.example'),
    new RegExp(`^VITALS_IMAGE=vitals:${VERSION.replaceAll('.', '\\.')}$`, 'm'),
  );
});

test('the Dockerfile: NODE_IMAGE, the CA only as a secret, two stages, non-root, /data, 3000, health check, SIGTERM', () => {
  const dockerfile = read('Dockerfile');
  assert.match(dockerfile, /^ARG NODE_IMAGE=node:24-bookworm-slim$/m);
  assert.equal(dockerfile.match(/^FROM \$\{NODE_IMAGE\}/gm)?.length, 2);
  assert.match(dockerfile, /--mount=type=secret,id=ca /);
  assert.doesNotMatch(
    dockerfile,
    /^(COPY|ADD|ENV).*(ca-certificates|\/run\/secrets)/m,
    'the CA never reaches a layer',
  );
  assert.match(dockerfile, /^USER node$/m);
  assert.match(dockerfile, /^VOLUME \/data$/m);
  assert.match(dockerfile, /^EXPOSE 3000$/m);
  assert.match(dockerfile, /^STOPSIGNAL SIGTERM$/m);
  assert.match(dockerfile, /^HEALTHCHECK .*CMD \["vitals", "healthcheck"\]$/m);
  assert.match(dockerfile, /npm prune --omit=dev/);
});
