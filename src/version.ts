// The release this code is: package.json's version, which /healthz, `vitals --version` and the
// image's org.opencontainers.image.version label report (CHANGELOG.md lists the releases).
import { readFileSync } from 'node:fs';

export const VERSION: string = JSON.parse(
  readFileSync(new URL('../package.json', import.meta.url), 'utf8'),
).version;
