// People's writes (../sql/people.ts) by name, for the writer (write-ops.ts): each runs on the
// write connection, inside the transaction the group commit has begun.
import * as people from '../sql/people.ts';
import type { Connection } from './connection.ts';
import { on } from './driver.ts';

export const PEOPLE_WRITE_OPS = {
  createUser: on(people.createUser),
  removeUser: on(people.removeUser),
  removeAccountUser: on(people.removeAccountUser),
  setUserRole: on(people.setUserRole),
  redeemSignInLink: on(people.redeemSignInLink),
  claimSignInAttempt: on(people.claimSignInAttempt),
  releaseSignInAttempt: on(people.releaseSignInAttempt),
  pruneSignInFailures: on(people.pruneSignInFailures),
  putSession: on(people.putSession),
  deleteSession: on(people.deleteSession),
  pruneAudit: on(people.pruneAudit),
  appendAudit: on(people.appendAudit),
} satisfies Record<string, (conn: Connection, ...args: never[]) => unknown>;
