// What SQLite reads its own way (../sql-reader.ts, NativeReads): the list's stored-JSON fast
// path, the events feed in commit order, the portfolio (portfolio.ts).
import type { SQLInputValue } from 'node:sqlite';
import { customerList } from '../customers.ts';
import { page, toEvent } from '../rows.ts';
import type { NativeReads } from '../sql-reader.ts';
import type { Connection } from './connection.ts';
import { SQLITE } from './driver.ts';
import * as portfolio from './portfolio.ts';

export const sqliteReads = (conn: Connection): NativeReads => ({
  getCustomerJson(accountId, id) {
    // GET's hot path: the row's stored API JSON (migration 7), passed through as it is.
    const row = conn.arrays('SELECT json FROM customers WHERE account_id = ? AND id = ?', accountId, id)[0];
    if (row === undefined) return null;
    const text = row[0] as string;
    return text === '' ? undefined : text; // '': a row a previous version left without its JSON
  },
  listCustomersJson(accountId, opts) {
    // The list's hot path: each row's stored API JSON (migration 7), as arrays (no object per
    // row), joined into the page's text. No field is read, formatted or quoted here.
    const { sql, params } = customerList(SQLITE, accountId, opts, 'json');
    const rows = conn.arrays(sql, ...(params as SQLInputValue[])) as [string][];
    const n = Math.min(rows.length, opts.limit);
    let json = '';
    for (let i = 0; i < n; i++) {
      const text = (rows[i] as [string])[0];
      if (text === '') return null; // a row a previous version left without its JSON
      json += i === 0 ? text : `,${text}`;
    }
    return { json, hasMore: rows.length > opts.limit };
  },
  listScores: async (accountId, opts) =>
    page(portfolio.listScores(conn, accountId, opts), opts.limit, (e) => e),
  movers: async (accountId, opts) => portfolio.movers(conn, accountId, opts),

  // One writer at a time (across processes too): seq order is commit order, so the feed is seq.
  async listEvents(accountId, opts) {
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
    const rows = conn.all(
      `SELECT id, type, data, created_at FROM events WHERE ${where.join(' AND ')}
       ORDER BY seq ${forward ? 'ASC' : 'DESC'} LIMIT ?`,
      ...params,
      opts.limit + 1,
    );
    const result = page(rows, opts.limit, toEvent);
    if (forward) result.data.reverse();
    return result;
  },
});
