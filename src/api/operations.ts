// The operations endpoints' answers (docs/operations.md): liveness and readiness.
import { Type } from 'typebox';

export const HealthAnswer = Type.Object({
  status: Type.Literal('ok'),
  /** The release (package.json's version; CHANGELOG.md). */
  version: Type.String(),
});
export const ReadyAnswer = Type.Object({
  status: Type.Literal('ok'),
  database: Type.Union([Type.Literal('sqlite'), Type.Literal('postgres')]),
});
