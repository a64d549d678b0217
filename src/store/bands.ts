import type { Status } from '../domain/scoring.ts';

// Stored as a number in score order (critical < at_risk < healthy), so that one index on
// (band, score) serves the portfolio with and without a status filter.
const BANDS: readonly Status[] = ['critical', 'at_risk', 'healthy'];

export const bandOf = (status: Status): number => BANDS.indexOf(status);
export const statusOf = (band: number): Status => BANDS[band] as Status;
