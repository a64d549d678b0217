// The reads on a SQLite connection: the shared ones (../sql/reader.ts), and what is SQLite's own:
// the list's stored-JSON fast path, the events feed in commit order, the portfolio (portfolio.ts).
import type { EventType } from '../../domain/events.ts';
import type { Tally } from '../../domain/portfolio.ts';
import type { Status } from '../../domain/scoring.ts';
import { page } from '../page.ts';
import { customerList, type ListOptions, SqlReader } from '../sql/reader.ts';
import { toEvent } from '../sql/rows.ts';
import type { GroupTally, JsonPage, Mover, ScoreCursor, Segment } from '../store.ts';
import type { Connection } from './connection.ts';
import { SQLITE, sqliteDriver } from './driver.ts';
import * as portfolio from './portfolio.ts';

export class SqliteReader extends SqlReader {
  protected readonly conn: Connection;

  constructor(conn: Connection) {
    super(sqliteDriver(conn));
    this.conn = conn;
  }

  override async listCustomersJson(accountId: string, opts: ListOptions): Promise<JsonPage> {
    // The list's hot path: each row's stored API JSON (migration 7), as arrays (no object per
    // row), joined into the page's text. No field is read, formatted or quoted here.
    const { sql, params } = customerList(SQLITE, accountId, opts, 'json');
    const rows = this.conn.arrays(sql, ...params) as [string][];
    const n = Math.min(rows.length, opts.limit);
    let json = '';
    for (let i = 0; i < n; i++) {
      const text = (rows[i] as [string])[0];
      // A row a previous version left without its JSON: the page built from the fields.
      if (text === '') return super.listCustomersJson(accountId, opts);
      json += i === 0 ? text : `,${text}`;
    }
    return { json, hasMore: rows.length > opts.limit };
  }

  async listScores(
    accountId: string,
    opts: { status?: Status | undefined; after?: ScoreCursor | undefined; segment?: Segment; limit: number },
  ) {
    return page(portfolio.listScores(this.conn, accountId, opts), opts.limit, (e) => e);
  }

  async tally(accountId: string, segment?: Segment): Promise<Tally> {
    return portfolio.tally(this.conn, accountId, segment);
  }

  async distribution(accountId: string, bins: number, segment?: Segment): Promise<Tally[]> {
    return portfolio.distribution(this.conn, accountId, bins, segment);
  }

  async tallyBy(accountId: string, key: string, segment?: Segment): Promise<GroupTally[]> {
    return portfolio.tallyBy(this.conn, accountId, key, segment);
  }

  async trendInputs(accountId: string, fromDay: number, segment?: Segment) {
    return portfolio.trendInputs(this.conn, accountId, fromDay, segment);
  }

  async movers(
    accountId: string,
    opts: { since: number; direction: 'down' | 'up'; limit: number; segment?: Segment },
  ): Promise<Mover[]> {
    return portfolio.movers(this.conn, accountId, opts);
  }

  // One writer at a time (across processes too): seq order is commit order, so the feed is seq.
  async listEvents(
    accountId: string,
    opts: { type?: EventType; startingAfter?: string; endingBefore?: string; limit: number },
  ) {
    const where = ['account_id = ?'];
    const params: (string | number)[] = [accountId];
    if (opts.type) {
      where.push('type = ?');
      params.push(opts.type);
    }
    if (opts.startingAfter !== undefined) {
      where.push('seq < COALESCE((SELECT seq FROM events WHERE account_id = ? AND id = ?), 0)');
      params.push(accountId, opts.startingAfter);
    }
    const forward = opts.endingBefore !== undefined;
    if (forward) {
      where.push('seq > COALESCE((SELECT seq FROM events WHERE account_id = ? AND id = ?), 0)');
      params.push(accountId, opts.endingBefore as string);
    }
    const rows = this.conn.all(
      `SELECT id, type, data, created_at FROM events WHERE ${where.join(' AND ')}
       ORDER BY seq ${forward ? 'ASC' : 'DESC'} LIMIT ?`,
      ...params,
      opts.limit + 1,
    );
    const result = page(rows, opts.limit, toEvent);
    if (forward) result.data.reverse();
    return result;
  }
}
