// `npm run build:client`: vitals/client as JavaScript in dist/client, since Node does not strip
// the types of .ts files under node_modules. The client's types come from the server's route
// schemas, so tsc compiles the client with the server modules it imports types from; this writes
// their declarations with the client's, but the JavaScript of the client alone: at run time the
// client loads nothing of the server. Run through this script, not `tsc -p`: see `ours` below.
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const configFile = fileURLToPath(new URL('tsconfig.json', import.meta.url));
const config = ts.getParsedCommandLineOfConfigFile(configFile, undefined, {
  ...ts.sys,
  onUnRecoverableConfigFileDiagnostic: (d) => fail([d]),
});
if (!config?.options.outDir) throw new Error(`${configFile} has no outDir`);
const outDir = config.options.outDir;
const clientSource = `${dirname(configFile).replaceAll('\\', '/')}/`;
const clientOut = `${outDir}/client/`; // tsc's paths use / on every platform

rmSync(outDir, { recursive: true, force: true });
const program = ts.createProgram({ rootNames: config.fileNames, options: config.options });
const emitted = program.emit(undefined, (file, text) => {
  if (file.endsWith('.js') && !file.startsWith(clientOut)) return;
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, text);
});
// The server's files are type-checked by `npm run check`, with all of src. Here they come alone,
// without the Fastify type augmentations declared elsewhere in src, so only the client's own
// diagnostics count (and any that declaration emit reports).
const ours = (d: ts.Diagnostic) => !d.file || d.file.fileName.startsWith(clientSource);
const diagnostics = [...ts.getPreEmitDiagnostics(program).filter(ours), ...emitted.diagnostics];
if (diagnostics.length > 0) fail(diagnostics);
console.log(`Built vitals/client into ${relative(process.cwd(), clientOut)}.`);

function fail(diagnostics: readonly ts.Diagnostic[]): never {
  const host = {
    getCanonicalFileName: (f: string) => f,
    getCurrentDirectory: ts.sys.getCurrentDirectory,
    getNewLine: () => '\n',
  };
  console.error(ts.formatDiagnosticsWithColorAndContext(diagnostics, host));
  process.exit(1);
}
