// `npm test`'s global setup (--test-global-setup): runs once, before any test file, and its
// environment is every test process's.
import { buildDashboardIfStale } from './helpers/dashboard-build.ts';

export function globalSetup(): void {
  buildDashboardIfStale();
}
