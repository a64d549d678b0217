// GET /api/audit-log (docs/people.md, "Audit log"): who changed what, as audit.ts recorded it.
import { AuditPage, AuditQuery, toAuditEntry } from '../api/audit.ts';
import { errorResponses } from '../api/common.ts';
import type { Store } from '../store/store.ts';
import type { Routes } from './reply.ts';

export const auditRoutes =
  (store: Store): Routes =>
  async (app) => {
    app.get(
      '/audit-log',
      {
        config: { area: 'audit' },
        schema: {
          tags: ['people'],
          summary: 'Who changed what, newest first (admins and write keys)',
          querystring: AuditQuery,
          response: {
            200: AuditPage,
            ...errorResponses(400, 401, 403),
          },
        },
      },
      async (req) => {
        const page = await store.listAudit(req.accountId, {
          startingAfter: req.query.starting_after,
          limit: req.query.limit ?? 10,
        });
        return { data: page.data.map(toAuditEntry), has_more: page.hasMore };
      },
    );
  };
