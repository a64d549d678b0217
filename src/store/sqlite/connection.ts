import { DatabaseSync, type SQLInputValue, type SQLOutputValue, type StatementSync } from 'node:sqlite';

export type Row = Record<string, SQLInputValue>;

/** A statement written with PostgreSQL's placeholders in SQLite's syntax: $1, $2 become ?1, ?2. */
const numbered = (sql: string): string => sql.replace(/\$(\d+)/g, '?$1');

/**
 * node:sqlite is synchronous: a statement cache per connection keeps prepare costs off the hot
 * path. A statement may be written with ? or with PostgreSQL's $1 (a shared one, ../driver.ts):
 * the placeholders are renumbered once, when it is prepared.
 */
export class Connection {
  readonly db: DatabaseSync;
  readonly #statements = new Map<string, StatementSync>();
  /** Statements that answer rows as arrays (no object per row): for hot paths that read many rows. */
  readonly #arrayStatements = new Map<string, StatementSync>();

  /** `cacheMb`: SQLite's page cache; the writer's is larger so bulk recomputations stay in memory. */
  constructor(path: string, synchronous: string, cacheMb = 2) {
    this.db = new DatabaseSync(path, { enableForeignKeyConstraints: true, timeout: 5000 });
    this.db.exec(
      `PRAGMA journal_mode = WAL; PRAGMA synchronous = ${synchronous}; PRAGMA busy_timeout = 5000;
       PRAGMA cache_size = -${cacheMb * 1024}; PRAGMA temp_store = MEMORY;`,
    );
  }

  statement(sql: string): StatementSync {
    let stmt = this.#statements.get(sql);
    if (!stmt) {
      stmt = this.db.prepare(numbered(sql));
      this.#statements.set(sql, stmt);
    }
    return stmt;
  }

  get(sql: string, ...params: SQLInputValue[]): Row | undefined {
    return this.statement(sql).get(...params) as Row | undefined;
  }

  all(sql: string, ...params: SQLInputValue[]): Row[] {
    return this.statement(sql).all(...params) as Row[];
  }

  /** Rows as arrays of the selected columns, in order. */
  arrays(sql: string, ...params: SQLInputValue[]): SQLOutputValue[][] {
    let stmt = this.#arrayStatements.get(sql);
    if (!stmt) {
      stmt = this.db.prepare(numbered(sql));
      stmt.setReturnArrays(true);
      this.#arrayStatements.set(sql, stmt);
    }
    return stmt.all(...params) as unknown as SQLOutputValue[][];
  }

  run(sql: string, ...params: SQLInputValue[]): number {
    return Number(this.statement(sql).run(...params).changes);
  }
}
