// The machinery of test/docs/docs.test.ts: reading code blocks and links out of markdown, a reader's
// terminal (one long-lived bash), and servers started by a block. The rules are in the test file.
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from './server.ts';

export interface Block {
  file: string;
  /** The line of the opening fence (1-based). */
  line: number;
  /** The info string's first word, lower case: `sh`, `bash`, `json`, `text`… */
  lang: string;
  text: string;
}

/** A command the test does not run as written, and what it does instead. */
export interface Exception {
  rule: string;
  matches: (command: string) => boolean;
  /** skip: not run, and said so; serve: a server, run in the background while its block runs. */
  action: 'skip' | 'serve';
}

export type Step =
  | { kind: 'shell'; line: number; text: string }
  | { kind: 'skip'; line: number; command: string; rule: string }
  | { kind: 'serve'; line: number; command: string };

const FENCE = /^( {0,3})(`{3,}|~{3,})\s*([^\s`]*)/;

/** Fenced code blocks, with the line of their opening fence. */
export function fencedBlocks(file: string, markdown: string): Block[] {
  const blocks: Block[] = [];
  const lines = markdown.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const open = FENCE.exec(lines[i] as string);
    if (!open) continue;
    const [, indent = '', fence = '', lang = ''] = open;
    const body: string[] = [];
    let j = i + 1;
    for (; j < lines.length; j++) {
      const line = (lines[j] as string).trim();
      if (line.startsWith(fence) && /^[`~]+$/.test(line) && line[0] === fence[0]) break;
      const raw = lines[j] as string;
      body.push(raw.startsWith(indent) ? raw.slice(indent.length) : raw.trimStart());
    }
    blocks.push({ file, line: i + 1, lang: lang.toLowerCase(), text: body.join('\n') });
    i = j;
  }
  return blocks;
}

/**
 * Splits a block into the lines bash runs and the commands an exception handles, keeping the
 * document's line numbers. A command is one line (with its `\` continuations) split at ` && `,
 * without a trailing `# comment`; heredoc bodies are never commands. A line that mixes an
 * exception with other commands is an error, so nothing is skipped by accident.
 */
export function splitSteps(block: Block, exceptions: Exception[]): Step[] {
  const out: Step[] = [];
  const lines = block.text.split('\n');
  let shell: { line: number; lines: string[] } | undefined;
  const flush = () => {
    if (shell?.lines.some((l) => l.trim() !== '' && !l.trim().startsWith('#'))) {
      out.push({ kind: 'shell', line: shell.line, text: shell.lines.join('\n') });
    }
    shell = undefined;
  };
  for (let i = 0; i < lines.length; i++) {
    const line = block.line + 1 + i;
    const logical = [lines[i] as string];
    while ((logical.at(-1) as string).endsWith('\\') && i + 1 < lines.length)
      logical.push(lines[++i] as string);
    const heredoc = /<<-?\s*(['"]?)(\w+)\1/.exec(logical.join('\n'));
    if (heredoc) {
      while (i + 1 < lines.length && (lines[i + 1] as string).trim() !== heredoc[2]) {
        logical.push(lines[++i] as string);
      }
      if (i + 1 < lines.length) logical.push(lines[++i] as string);
    }
    const command = heredoc
      ? ''
      : logical
          .map((l) => l.replace(/\\$/, ''))
          .join(' ')
          .replace(/(^|\s+)#.*$/, '')
          .trim();
    const parts = command === '' ? [] : command.split(/\s+&&\s+/);
    const matched = parts.map((p) => exceptions.find((e) => e.matches(p)));
    if (parts.length > 0 && matched.every((m) => m !== undefined)) {
      flush();
      parts.forEach((part, k) => {
        const e = matched[k] as Exception;
        out.push(
          e.action === 'serve'
            ? { kind: 'serve', line, command: part }
            : { kind: 'skip', line, command: part, rule: e.rule },
        );
      });
      continue;
    }
    const some = matched.find((m) => m !== undefined);
    if (some) {
      throw new Error(
        `${block.file}:${line}: '${command}' mixes an exception (${some.rule}) with other commands; give it a line of its own.`,
      );
    }
    shell ??= { line, lines: [] };
    shell.lines.push(...logical);
  }
  flush();
  return out;
}

/** A one-line name for a block: where it is and its first command. */
export function blockName(b: Block): string {
  const first = b.text.split('\n').find((l) => l.trim() !== '' && !l.trim().startsWith('#')) ?? '';
  return `${b.file}:${b.line} ${first.length > 60 ? `${first.slice(0, 59)}…` : first}`;
}

/** The process groups started here and not stopped yet: killed if the test process exits first. */
const groups = new Set<number>();
process.on('exit', () => {
  for (const pid of groups) {
    try {
      process.kill(-pid, 'SIGKILL');
    } catch {}
  }
});

function detached(command: string, args: string[], env: NodeJS.ProcessEnv): ChildProcess {
  const child = spawn(command, args, { cwd: ROOT, env, detached: true, stdio: 'pipe' });
  if (child.pid !== undefined) groups.add(child.pid);
  return child;
}

/** SIGTERM to a whole process group, SIGKILL if it lingers, and SIGKILL to whatever outlived its leader. */
export async function stopGroup(child: ChildProcess, exited: Promise<unknown>): Promise<void> {
  const pid = child.pid;
  if (pid === undefined) return;
  groups.delete(pid);
  const signal = (s: NodeJS.Signals) => {
    try {
      process.kill(-pid, s);
    } catch {}
  };
  signal('SIGTERM');
  const late = setTimeout(() => signal('SIGKILL'), 5000);
  await exited;
  clearTimeout(late);
  signal('SIGKILL');
}

/**
 * A reader's terminal: one bash for a whole doc file, with `set -euo pipefail`, in a process
 * group of its own so that what its commands leave in the background goes when it goes. The
 * first failing command ends it (errexit), as `set -e` would end a script.
 */
export class Shell {
  readonly #child: ChildProcess;
  readonly #nonce = randomBytes(8).toString('hex');
  readonly #dir: string;
  readonly #timeoutMs: number;
  readonly #exit: Promise<unknown>;
  readonly #listeners = new Set<() => void>();
  #output = '';
  /** Where the output of the next step starts: after the end marker of the last one. */
  #consumed = 0;
  #exited = false;

  /** `dir`: where the scripts of the steps are written. */
  constructor(env: NodeJS.ProcessEnv, dir: string, timeoutMs: number) {
    this.#dir = dir;
    this.#timeoutMs = timeoutMs;
    this.#child = detached('bash', ['--noprofile', '--norc'], env);
    const take = (d: Buffer) => {
      this.#output += d;
      for (const l of this.#listeners) l();
    };
    this.#child.stdout?.on('data', take);
    this.#child.stderr?.on('data', take);
    this.#exit = new Promise((done) =>
      this.#child.once('exit', () => {
        this.#exited = true;
        for (const l of this.#listeners) l();
        done(undefined);
      }),
    );
    this.#child.stdin?.on('error', () => {}); // writing to a shell that has just exited
    this.#send(
      `exec 2>&1\nset -euo pipefail\ntrap 'echo "${this.#nonce} exit status $? at line $LINENO: $BASH_COMMAND"' ERR\n`,
    );
  }

  #send(text: string): void {
    if (!this.#exited) this.#child.stdin?.write(text);
  }

  /** Runs `text`, which starts at line `line` of `file`; what it printed, and whether it all succeeded. */
  async run(file: string, line: number, text: string): Promise<{ ok: boolean; output: string }> {
    if (this.#exited) return { ok: false, output: '(the shell had already ended)' };
    // Padded with empty lines, so that bash's line numbers are the document's.
    const script = join(this.#dir, `${file.replace(/\W/g, '_')}-${line}.sh`);
    writeFileSync(script, `${'\n'.repeat(line - 1)}${text}\n`);
    const from = this.#consumed;
    const marker = `${this.#nonce} done ${line}`;
    this.#send(`source '${script}' </dev/null\necho '${marker}'\n`);
    const result = await new Promise<'done' | 'exit' | 'timeout'>((resolve) => {
      let settled = false;
      const finish = (r: 'done' | 'exit' | 'timeout') => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        this.#listeners.delete(check);
        resolve(r);
      };
      const check = () => {
        if (this.#output.indexOf(marker, from) >= 0) finish('done');
        // The last of its output may still be on its way.
        else if (this.#exited) setTimeout(() => finish('exit'), 100);
      };
      const timer = setTimeout(() => finish('timeout'), this.#timeoutMs);
      this.#listeners.add(check);
      check();
    });
    const end = this.#output.indexOf(marker, from);
    this.#consumed = end >= 0 ? end + marker.length + 1 : this.#output.length;
    let output = this.#output
      .slice(from, end >= 0 ? end : undefined)
      .split(script)
      .join(file);
    output = output.split(`${this.#nonce} `).join('');
    if (result === 'timeout') {
      output += `\n(still running after ${this.#timeoutMs / 1000} s)`;
      await this.close();
    }
    return { ok: result === 'done', output };
  }

  export(name: string, value: string | undefined): void {
    this.#send(
      value === undefined ? `unset ${name}\n` : `export ${name}='${value.replace(/'/g, `'\\''`)}'\n`,
    );
  }

  /** Ends the shell and everything it left running. */
  async close(): Promise<void> {
    this.#child.stdin?.end();
    await stopGroup(this.#child, this.#exit);
  }
}

/** A server command of a block (`npm start`), run by bash in a process group of its own. */
export class Background {
  readonly #child: ChildProcess;
  readonly #closed: Promise<unknown>;
  output = '';

  constructor(command: string, env: NodeJS.ProcessEnv) {
    this.#child = detached('bash', ['-c', command], env);
    const take = (d: Buffer) => {
      this.output += d;
    };
    this.#child.stdout?.on('data', take);
    this.#child.stderr?.on('data', take);
    this.#closed = new Promise((r) => this.#child.once('close', r));
  }

  /** The URL it listens at, once it logs Fastify's "Server listening at …" and then, its schema
   *  migrated, "vitals started" (it answers 503 in between). */
  listening(timeoutMs: number): Promise<string> {
    return new Promise((resolve, reject) => {
      const check = () => {
        const m = /Server listening at (http:\/\/[^"\s]+)/.exec(this.output);
        if (m && this.output.includes('"msg":"vitals started"')) {
          clearTimeout(timer);
          resolve(m[1] as string);
        }
      };
      const timer = setTimeout(
        () => reject(new Error(`no "Server listening" after ${timeoutMs / 1000} s`)),
        timeoutMs,
      );
      this.#child.stdout?.on('data', check);
      this.#closed.then(() => {
        clearTimeout(timer);
        reject(new Error('it exited before listening'));
      });
      check();
    });
  }

  stop(): Promise<void> {
    return stopGroup(this.#child, this.#closed);
  }
}

/** GitHub's heading ids (lower case, punctuation dropped, spaces to dashes, repeats numbered), and <a id>s. */
export function anchors(markdown: string): Set<string> {
  const ids = new Set<string>();
  const seen = new Map<string, number>();
  let inFence = false;
  for (const line of markdown.split('\n')) {
    if (FENCE.test(line)) inFence = !inFence;
    if (inFence) continue;
    for (const m of line.matchAll(/<a\s+(?:id|name)="([^"]+)"/g)) ids.add(m[1] as string);
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!heading) continue;
    const text = (heading[1] as string)
      .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
      .replace(/<[^>]+>/g, '')
      .replace(/[*`]/g, '');
    const base = text
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\p{M} _-]/gu, '')
      .replace(/ /g, '-');
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    ids.add(n === 0 ? base : `${base}-${n}`);
  }
  return ids;
}

/** The relative links of a markdown file, outside code, with their lines. */
export function relativeLinks(markdown: string): { target: string; line: number }[] {
  const links: { target: string; line: number }[] = [];
  let inFence = false;
  markdown.split('\n').forEach((raw, i) => {
    if (FENCE.test(raw)) inFence = !inFence;
    if (inFence) return;
    const line = raw.replace(/`[^`]*`/g, '');
    const targets = [
      ...[...line.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)].map((m) => m[1] as string),
      ...[...line.matchAll(/^\s*\[[^\]]+\]:\s*(\S+)/g)].map((m) => m[1] as string),
      ...[...line.matchAll(/(?:href|src)="([^"]+)"/g)].map((m) => m[1] as string),
    ];
    for (const target of targets) {
      if (!/^[a-z][a-z0-9+.-]*:/i.test(target)) links.push({ target, line: i + 1 });
    }
  });
  return links;
}
