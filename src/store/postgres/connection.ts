import postgres from 'postgres';

/** The slice of the driver Vitals uses: tagged queries, on the pool or inside a transaction. */
export type Sql = postgres.Sql;
export type Queryable = postgres.ISql;

export interface ConnectOptions {
  url: string;
  /** Connections in the pool (one more is opened for LISTEN when a dispatcher runs). */
  poolSize: number;
}

export function connect(opts: ConnectOptions): Sql {
  return postgres(opts.url, {
    max: opts.poolSize,
    connect_timeout: 10,
    // Timestamps and counts are bigint; every one of them fits a JS number exactly, and the rest
    // of Vitals works in numbers (the driver's default would be strings).
    types: {
      int8: { to: 20, from: [20], serialize: (n: number) => String(n), parse: (raw: string) => Number(raw) },
    },
    // "relation already exists, skipping" and the like are not worth a line on stdout.
    onnotice: () => {},
    connection: { application_name: 'vitals' },
  }) as unknown as Sql;
}

/** Advisory lock keys (the two-int form, so they never collide with the migration lock's one-bigint form). */
export const LOCKS = {
  /** pg_advisory_xact_lock(bigint): one migrator at a time per database. */
  migrate: 5_649_544_100_001,
  /** pg_advisory_xact_lock(int, int): class of the per-account settings lock; the account's hash is the other half. */
  account: 0x56_49_54_41,
  /** pg_try_advisory_xact_lock(bigint): one process prunes old events at a time. */
  retention: 5_649_544_100_002,
  /** pg_advisory_xact_lock(bigint): one process at a time checks for a key and adds the first. */
  bootstrap: 5_649_544_100_003,
} as const;

/** The channel dispatchers LISTEN on; a commit that made deliveries due NOTIFYs it. */
export const CHANNEL = 'vitals_deliveries_due';
