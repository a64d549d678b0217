// `vitals backup`: a consistent copy of the SQLite database while a server (another process) keeps
// writing to it. VACUUM INTO reads the whole database inside one read transaction, so under WAL the
// copy is a single snapshot and the writer is never blocked (the online backup API, by contrast,
// restarts whenever another connection writes). The copy is an ordinary database file: restoring
// is putting it in place as vitals.db while the server is stopped (the server sets WAL on open).
import { randomBytes } from 'node:crypto';
import { closeSync, fsyncSync, linkSync, openSync, renameSync, rmSync, statSync, unlinkSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { pathToFileURL } from 'node:url';

/** A backup that did not happen, with a message meant for the person who asked for it. */
export class BackupError extends Error {
  override name = 'BackupError';
}

export interface BackupOptions {
  /** Replace a file already at the target (default: refuse). */
  force?: boolean;
  /** How long to wait for a lock the server holds (WAL recovery, a checkpoint) before failing. */
  busyTimeoutMs?: number;
}

export interface BackupResult {
  /** Absolute paths. */
  source: string;
  target: string;
  bytes: number;
  ms: number;
}

/**
 * Copies the database at `sourcePath` to `targetPath`. Writes a temporary file beside the target
 * and moves it into place only once it is complete and synced, so the target is either the whole
 * copy or untouched. Throws BackupError (the temporary file removed) when it cannot.
 */
export function backupSqlite(sourcePath: string, targetPath: string, opts: BackupOptions = {}): BackupResult {
  const started = performance.now();
  const source = resolve(sourcePath);
  const target = resolve(targetPath);
  const force = opts.force ?? false;
  checkTarget(source, target, force);
  const db = openExisting(source, opts.busyTimeoutMs ?? 5000);
  const tmp = `${target}.tmp-${randomBytes(6).toString('hex')}`;
  try {
    try {
      // Created here, empty and exclusive, so the copy is readable by its owner only (it holds
      // customer data and key hashes); VACUUM INTO accepts an empty file as its target.
      closeSync(openSync(tmp, 'wx', 0o600));
      db.prepare('VACUUM INTO ?').run(tmp);
    } finally {
      db.close();
    }
    syncFile(tmp);
    place(tmp, target, force);
    syncDirectory(dirname(target));
  } catch (err) {
    rmSync(tmp, { force: true });
    if (err instanceof BackupError) throw err;
    throw new BackupError(`Backup failed: ${(err as Error).message}. ${target} was not written.`, {
      cause: err,
    });
  }
  return { source, target, bytes: statSync(target).size, ms: performance.now() - started };
}

function statOrUndefined(path: string) {
  try {
    return statSync(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}

function checkTarget(source: string, target: string, force: boolean): void {
  const existing = statOrUndefined(target);
  if (existing?.isDirectory()) {
    throw new BackupError(
      `${target} is a directory. Give the path of the file to write, such as ${resolve(target, 'vitals-backup.db')}.`,
    );
  }
  const sourceStat = statOrUndefined(source);
  const live = [source, `${source}-wal`, `${source}-shm`, `${source}-journal`];
  if (
    live.includes(target) ||
    (existing && sourceStat && existing.dev === sourceStat.dev && existing.ino === sourceStat.ino)
  ) {
    throw new BackupError(`${target} is the live database (or one of its files); back up to another path.`);
  }
  if (existing && !force) {
    throw new BackupError(`${target} already exists; give --force to replace it.`);
  }
  const parent = statOrUndefined(dirname(target));
  if (!parent?.isDirectory()) {
    throw new BackupError(`The directory ${dirname(target)} does not exist.`);
  }
}

/** A connection of its own on the existing file: never creates a database, never migrates. */
function openExisting(source: string, busyTimeoutMs: number): DatabaseSync {
  const found = statOrUndefined(source);
  if (!found) throw new BackupError(`There is no database at ${source}; nothing was backed up.`);
  if (!found.isFile()) throw new BackupError(`${source} is not a database file; nothing was backed up.`);
  // mode=rw: open read-write (so that, as the last connection, it tidies up the -wal and -shm it
  // made like any other), but fail rather than create the file if it went away meanwhile.
  const url = pathToFileURL(source);
  url.search = 'mode=rw';
  let db: DatabaseSync;
  try {
    // `timeout` is SQLite's busy_timeout.
    db = new DatabaseSync(url, { timeout: busyTimeoutMs });
  } catch (err) {
    throw new BackupError(`Cannot open ${source}: ${(err as Error).message}.`, { cause: err });
  }
  try {
    const vitals = db
      .prepare("SELECT 1 AS found FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'")
      .get();
    if (!vitals) throw new BackupError(`${source} is not a Vitals database (it has no schema_migrations).`);
  } catch (err) {
    db.close();
    if (err instanceof BackupError) throw err;
    throw new BackupError(`Cannot read ${source}: ${(err as Error).message}.`, { cause: err });
  }
  return db;
}

/** VACUUM INTO does not sync its output; the copy is on disk before it takes the target's name. */
function syncFile(path: string): void {
  const fd = openSync(path, 'r+');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/** Makes the rename durable; some platforms cannot sync a directory, and then it is left to the OS. */
function syncDirectory(path: string): void {
  try {
    const fd = openSync(path, 'r');
    try {
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
  } catch {}
}

/** Moves the finished copy to the target; without `force`, never over a file that appeared meanwhile. */
function place(tmp: string, target: string, force: boolean): void {
  if (force) {
    renameSync(tmp, target);
    return;
  }
  try {
    // A hard link fails with EEXIST instead of replacing, atomically.
    linkSync(tmp, target);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'EEXIST') throw new BackupError(`${target} already exists; give --force to replace it.`);
    // A file system without hard links: check, then rename.
    if (statOrUndefined(target))
      throw new BackupError(`${target} already exists; give --force to replace it.`);
    renameSync(tmp, target);
    return;
  }
  try {
    unlinkSync(tmp);
  } catch {}
}
