// `npm run build:client`: vitals/client as JavaScript and declarations in dist/client, since Node
// does not strip the types of .ts files under node_modules. The client's types come from the
// server's route schemas (src/client/types.ts imports them), so tsc compiles the client with the
// server modules it reads types from, but only the client's files are written: the types that
// reach into the server are written out whole in dist/client/types.d.ts, so the package ships no
// server internals and needs nothing but itself to type-check (docs/client.md, "The build").
// Run through this script, not `tsc -p`: see `ours` below.
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

/** Where the build writes (see below); set once the config is read. */
let staging: string | undefined;
const configFile = fileURLToPath(new URL('tsconfig.json', import.meta.url));
const config = ts.getParsedCommandLineOfConfigFile(configFile, undefined, {
  ...ts.sys,
  onUnRecoverableConfigFileDiagnostic: (d) => fail([d]),
});
if (!config?.options.outDir) throw new Error(`${configFile} has no outDir`);
const outDir = config.options.outDir;
const clientSource = `${dirname(configFile).replaceAll('\\', '/')}/`; // tsc's paths use / everywhere
const clientEmit = `${outDir}/client/`; // where tsc puts the client's files, rootDir being src/
const typesSource = `${clientSource}types.ts`;
// Only the client's own names are in scope here, so a type written out names them and spells out
// everything else (a server schema's Static, a helper of types.ts that is not exported).
const scopeFile = `${clientSource}__exports__.ts`;

// Built beside dist/client and put in its place once whole and checked: a failed build leaves the
// last good one, and nothing reads a half-written one meanwhile (nor another build's).
staging = `${outDir}.building-${process.pid}`;
rmSync(staging, { recursive: true, force: true });
const exported = exportedTypes(readFileSync(typesSource, 'utf8'));
const host = withFile(
  ts.createCompilerHost(config.options),
  scopeFile,
  `import type { ${exported.join(', ')} } from './types.ts';\n`,
);
const rootNames = [...config.fileNames, scopeFile];
const program = ts.createProgram({ rootNames, options: config.options, host });
let unwritable: unknown;
const emitted = program.emit(undefined, (file, text) => {
  if (!file.startsWith(clientEmit) || file.includes('__exports__') || unwritable) return;
  const target = `${staging}/${file.slice(clientEmit.length)}`;
  mkdirSync(dirname(target), { recursive: true });
  try {
    writeFileSync(target, file.endsWith('.d.ts') ? declarations(file, text) : text);
  } catch (err) {
    unwritable = err;
  }
});
if (unwritable) failWith(String(unwritable instanceof Error ? unwritable.message : unwritable));
// The server's files are type-checked by `npm run check`, with all of src. Here they come alone,
// without the Fastify type augmentations declared elsewhere in src, so only the client's own
// diagnostics count (and any that declaration emit reports).
const ours = (d: ts.Diagnostic) => !d.file || d.file.fileName.startsWith(clientSource);
const diagnostics = [...ts.getPreEmitDiagnostics(program).filter(ours), ...emitted.diagnostics];
if (diagnostics.length > 0) fail(diagnostics);
checkShipped(staging);
rmSync(outDir, { recursive: true, force: true });
renameSync(staging, outDir);
console.log(`Built vitals/client into ${relative(process.cwd(), outDir)}.`);

/** A declaration file as shipped: relative imports as `.js` (what any TypeScript resolves), and types.d.ts written out. */
function declarations(file: string, text: string): string {
  const shipped = file.endsWith('/client/types.d.ts') ? writtenOut() : text;
  return shipped.replace(/(from '\.\/[\w-]+)\.ts'/g, "$1.js'");
}

/** src/client/types.ts with every type that reads the server replaced by the type it denotes. */
function writtenOut(): string {
  const checker = program.getTypeChecker();
  const source = program.getSourceFile(typesSource);
  const scope = program.getSourceFile(scopeFile);
  if (!source || !scope) throw new Error('types.ts is not in the program');
  const server = new Set<ts.Symbol>();
  const out: string[] = [
    '// Written by src/client/build.ts from src/client/types.ts: each type spelled out, as the server',
    "// answers and takes it (docs/api.md). Nothing here imports Vitals' server.",
  ];
  for (const statement of source.statements) {
    if (ts.isImportDeclaration(statement)) {
      for (const name of importedNames(statement)) server.add(checker.getSymbolAtLocation(name) as ts.Symbol);
      continue;
    }
    const docs = jsDoc(statement);
    if (ts.isTypeAliasDeclaration(statement) && reads(statement.type, server, checker)) {
      const type = checker.getTypeAtLocation(statement.name);
      const printed = spelled(type, statement.name.text);
      const exportWord = statement.modifiers?.some((m) => m.kind === ts.SyntaxKind.ExportKeyword);
      out.push(`${docs}${exportWord ? 'export ' : ''}type ${statement.name.text} = ${printed};`);
    } else {
      out.push(`${docs}${statement.getText(source)}`);
    }
  }
  return `${out.join('\n')}\n`;

  // A type that carries the name of a server module's type alias or interface is printed as
  // `import("…").Name`: that type is spelled out in its place, as many levels down as it takes.
  function spelled(type: ts.Type, name: string, depth = 0): string {
    const flags =
      ts.NodeBuilderFlags.NoTruncation | ts.NodeBuilderFlags.InTypeAlias | ts.NodeBuilderFlags.IgnoreErrors;
    const node = checker.typeToTypeNode(type, scope, flags);
    if (!node || depth > 8) throw new Error(`types.ts: ${name} cannot be written out`);
    const text = ts.createPrinter().printNode(ts.EmitHint.Unspecified, node, source as ts.SourceFile);
    return text.replace(
      /import\("([^"]+)"\)\.(\w+)(<?)/g,
      (_, module: string, alias: string, generic: string) => {
        const file = program.getSourceFile(`${module}.ts`);
        const moduleSymbol = file && checker.getSymbolAtLocation(file);
        const symbol = moduleSymbol && checker.getExportsOfModule(moduleSymbol).find((s) => s.name === alias);
        const why = `types.ts: ${name} reads ${alias} of ${module}`;
        if (!symbol || generic) throw new Error(`${why}, which is not a type without parameters`);
        const declared = checker.getDeclaredTypeOfSymbol(symbol);
        if (symbol.flags & ts.SymbolFlags.TypeAlias) return `(${spelled(declared, alias, depth + 1)})`;
        if (symbol.flags & ts.SymbolFlags.Interface) return members(declared, alias, depth + 1);
        throw new Error(`${why}, which is neither a type alias nor an interface`);
      },
    );
  }

  /** An interface (its own and inherited members, all data) as an object type. */
  function members(type: ts.Type, name: string, depth: number): string {
    if (type.getCallSignatures().length + type.getConstructSignatures().length > 0) {
      throw new Error(`types.ts: ${name} is an interface with signatures, which cannot be written out`);
    }
    const fields = checker.getPropertiesOfType(type).map((p) => {
      const declaration = p.valueDeclaration ?? p.declarations?.[0];
      const modifiers = declaration ? ts.getCombinedModifierFlags(declaration) : ts.ModifierFlags.None;
      const readonly = modifiers & ts.ModifierFlags.Readonly ? 'readonly ' : '';
      const optional = p.flags & ts.SymbolFlags.Optional ? '?' : '';
      const key = /^[A-Za-z_$][\w$]*$/.test(p.name) ? p.name : JSON.stringify(p.name);
      return `${readonly}${key}${optional}: ${spelled(checker.getTypeOfSymbol(p), `${name}.${p.name}`, depth)};`;
    });
    const indexes = checker.getIndexInfosOfType(type).map((info) => {
      const readonly = info.isReadonly ? 'readonly ' : '';
      const key = spelled(info.keyType, name, depth);
      return `${readonly}[key: ${key}]: ${spelled(info.type, name, depth)};`;
    });
    return `{ ${[...fields, ...indexes].join(' ')} }`;
  }
}

/** Whether a type node names anything imported from outside the client. */
function reads(node: ts.Node, server: Set<ts.Symbol>, checker: ts.TypeChecker): boolean {
  if (ts.isIdentifier(node)) {
    const symbol = checker.getSymbolAtLocation(node);
    if (symbol && server.has(symbol)) return true;
  }
  return ts.forEachChild(node, (child) => reads(child, server, checker) || undefined) ?? false;
}

function importedNames(statement: ts.ImportDeclaration): ts.Identifier[] {
  const bindings = statement.importClause?.namedBindings;
  return bindings && ts.isNamedImports(bindings) ? bindings.elements.map((e) => e.name) : [];
}

function jsDoc(statement: ts.Statement): string {
  const text = statement.getSourceFile().getFullText();
  const comments = ts.getLeadingCommentRanges(text, statement.getFullStart()) ?? [];
  return comments
    .map((c) => text.slice(c.pos, c.end))
    .filter((c) => c.startsWith('/**'))
    .map((c) => `${c}\n`)
    .join('');
}

function exportedTypes(text: string): string[] {
  return [...text.matchAll(/^export (?:type|interface) (\w+)/gm)].map((m) => m[1] as string);
}

/**
 * The shipped declarations alone (no server, no @types/node) type-check, and each type written
 * out is the type of src/client/types.ts it stands for, assignable both ways.
 */
function checkShipped(dir: string): void {
  const names = exportedTypes(readFileSync(typesSource, 'utf8'));
  const generic = new Set(['Page']);
  const check = `${clientSource}__check__.ts`;
  const shipped = `${dir}/types.js`;
  const lines = [
    `import type * as S from './types.ts';`,
    `import type * as D from ${JSON.stringify(shipped)};`,
    'type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;',
    ...names.map((n) => {
      const arg = generic.has(n) ? '<{ id: string }>' : '';
      return `export const ${n}: Same<S.${n}${arg}, D.${n}${arg}> = true;`;
    }),
  ];
  for (const file of readdirSync(dir).filter((f) => f.endsWith('.ts') || f.endsWith('.js'))) {
    const text = readFileSync(`${dir}/${file}`, 'utf8');
    for (const [, specifier] of text.matchAll(/(?:from |import\()\s*['"]([^'"]+)['"]/g)) {
      if (!/^(\.\/[\w-]+\.js|node:\w+)$/.test(specifier as string)) {
        failWith(`dist/client/${file} refers to ${specifier}, outside the client`);
      }
    }
  }
  // Without @types/node: `fetch` and `Headers` come from the DOM's lib or @types/node, either will do.
  const options: ts.CompilerOptions = {
    ...config?.options,
    noEmit: true,
    skipLibCheck: false,
    types: [],
    lib: ['lib.es2022.d.ts', 'lib.dom.d.ts'],
  };
  const alone = ts.createProgram({ rootNames: [`${dir}/index.d.ts`], options });
  const both = ts.createProgram({
    rootNames: [check],
    options: { ...options, skipLibCheck: true },
    host: withFile(ts.createCompilerHost(options), check, `${lines.join('\n')}\n`),
  });
  const problems = [
    ...ts.getPreEmitDiagnostics(alone),
    ...ts.getPreEmitDiagnostics(both).filter((d) => d.file?.fileName === check),
  ];
  if (problems.length > 0) fail(problems);
}

/** A compiler host that also sees `file`, which is not on disk. */
function withFile(host: ts.CompilerHost, file: string, text: string): ts.CompilerHost {
  const getSourceFile = host.getSourceFile;
  return {
    ...host,
    fileExists: (f) => f === file || host.fileExists(f),
    readFile: (f) => (f === file ? text : host.readFile(f)),
    getSourceFile: (f, language, ...rest) =>
      f === file ? ts.createSourceFile(f, text, language) : getSourceFile(f, language, ...rest),
  };
}

function fail(diagnostics: readonly ts.Diagnostic[]): never {
  const host = {
    getCanonicalFileName: (f: string) => f,
    getCurrentDirectory: ts.sys.getCurrentDirectory,
    getNewLine: () => '\n',
  };
  failWith(ts.formatDiagnosticsWithColorAndContext(diagnostics, host));
}

function failWith(message: string): never {
  if (staging) rmSync(staging, { recursive: true, force: true });
  console.error(message);
  console.error('vitals/client is not built; dist/client is left as it was.');
  process.exit(1);
}
