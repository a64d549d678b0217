// Migrations fail loudly (docs/operations.md, "Upgrades"): each runs in a transaction of its own
// under the migration lock, and a failure names the migration, says the schema stayed where it
// was, and stops the start. Both backends' runners throw these; they cross the SQLite writer
// thread by name, message and code (wire.ts), so callers test the name, not the class.

export type MigrationErrorCode = 'migration_failed' | 'schema_newer';

export class MigrationError extends Error {
  override name = 'MigrationError';
  readonly code: MigrationErrorCode;

  constructor(code: MigrationErrorCode, message: string, options?: ErrorOptions) {
    super(message, options);
    this.code = code;
  }
}

export function isMigrationError(err: unknown): err is Error & { code: MigrationErrorCode } {
  return err instanceof Error && err.name === 'MigrationError';
}

/** Migration `version` failed with `cause` and was rolled back: the schema is at version − 1. */
export function migrationFailed(version: number, latest: number, cause: unknown): MigrationError {
  const reason = cause instanceof Error ? cause.message : String(cause);
  return new MigrationError(
    'migration_failed',
    `Migration ${version} (of ${latest}) failed: ${reason}. It was rolled back: the database schema is ` +
      `still at version ${version - 1}, as it was before migration ${version}. Vitals did not start; ` +
      'fix the cause (the database may hold an object of that name already) and start it again.',
    { cause },
  );
}

/** The database was migrated by a later release than this code: never served, never downgraded. */
export function schemaNewer(applied: number, latest: number): MigrationError {
  return new MigrationError(
    'schema_newer',
    `The database schema is at version ${applied}, newer than this Vitals knows (its migrations end ` +
      `at ${latest}): a later release of Vitals migrated it. Run that release or a later one, or ` +
      'restore the backup taken before the upgrade; Vitals never downgrades a schema.',
  );
}
