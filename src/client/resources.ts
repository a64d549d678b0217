// The client's methods, one group per resource and one method per route of src/http (docs/api.md
// has each route's rules). Lists are async iterators that follow each list's own cursor.
import { paginate, path, type Transport } from './client.ts';
import type {
  AlertsChange,
  AlertsSettings,
  Backfill,
  BackfillCreate,
  Calibration,
  CalibrationParams,
  Customer,
  CustomerBatchItem,
  CustomerCreate,
  CustomerListParams,
  CustomerPage,
  CustomerRollup,
  CustomersBatch,
  CustomerUpdate,
  Deleted,
  Distribution,
  DistributionParams,
  Event,
  EventListParams,
  Explanation,
  ExplanationParams,
  FactorRule,
  FactorRuleInput,
  FactorRulePreview,
  Factors,
  FactorsChange,
  HealthScore,
  HistoryEntry,
  HistoryParams,
  MetricBatchItem,
  MetricListParams,
  MetricName,
  MetricPoint,
  MetricsBatch,
  MetricsRecorded,
  MetricsWrite,
  Movers,
  MoversParams,
  Outcome,
  OutcomeBatchItem,
  OutcomeCreate,
  OutcomeListParams,
  OutcomesBatch,
  OverrideParams,
  Page,
  PortfolioEntry,
  PortfolioParams,
  ScoreBatchItem,
  ScoresBatch,
  Summary,
  SummaryParams,
  ThresholdsChange,
  ThresholdsSettings,
  TimelineEntry,
  TimelineParams,
  Trend,
  TrendParams,
  Weights,
  WeightsPreview,
  WeightsSettings,
  WriteOptions,
} from './types.ts';

export class Customers {
  readonly #http: Transport;

  constructor(http: Transport) {
    this.#http = http;
  }

  create(body: CustomerCreate, opts?: WriteOptions): Promise<Customer> {
    return this.#http.post('/customers', body, opts);
  }

  retrieve(id: string): Promise<Customer> {
    return this.#http.get(path`/customers/${id}`);
  }

  update(id: string, body: CustomerUpdate, opts?: WriteOptions): Promise<Customer> {
    return this.#http.patch(path`/customers/${id}`, body, opts);
  }

  delete(id: string, opts?: WriteOptions): Promise<Deleted> {
    return this.#http.delete(path`/customers/${id}`, opts);
  }

  /** Every customer (matching `search`), by id; `limit` is the page size. */
  list(params: CustomerListParams = {}): AsyncGenerator<Customer, void, undefined> {
    return paginate<Customer, string>(async (after) => {
      const page = await this.listPage({ ...params, starting_after: after ?? params.starting_after });
      return { items: page.customers, next: page.has_more ? page.customers.at(-1)?.id : undefined };
    });
  }

  listPage(params: CustomerListParams = {}): Promise<CustomerPage> {
    return this.#http.get('/customers', params);
  }

  /** The customer with all its descendants: their ARR summed, their ARR-weighted score and its band, their statuses. */
  rollup(id: string): Promise<CustomerRollup> {
    return this.#http.get(path`/customers/${id}/rollup`);
  }

  /**
   * The customer's story, newest first: score changes, drops, overrides, outcomes, notes, tasks,
   * changes and what its sources applied; `types` keeps only those, `limit` is the page size.
   */
  timeline(id: string, params: TimelineParams = {}): AsyncGenerator<TimelineEntry, void, undefined> {
    return paginate<TimelineEntry, string>(async (after) => {
      const page = await this.timelinePage(id, { ...params, starting_after: after ?? params.starting_after });
      return { items: page.data, next: page.has_more ? page.data.at(-1)?.id : undefined };
    });
  }

  /** One page of the timeline: after the entry `starting_after` names, or from the newest. */
  timelinePage(id: string, params: TimelineParams = {}): Promise<Page<TimelineEntry>> {
    const { types, ...rest } = params;
    return this.#http.get(path`/customers/${id}/timeline`, {
      ...rest,
      ...(types === undefined ? {} : { types: types.join(',') }),
    });
  }

  /** Creates or updates up to 1,000 customers in order; each item has its own result. */
  batch(items: CustomerBatchItem[], opts?: WriteOptions): Promise<CustomersBatch> {
    return this.#http.post('/customers/batch', { customers: items }, opts);
  }
}

export class HealthScores {
  readonly #http: Transport;

  constructor(http: Transport) {
    this.#http = http;
  }

  /** Replaces the customer's factors. */
  set(customerId: string, factors: Factors, opts?: WriteOptions): Promise<HealthScore> {
    return this.#http.post(path`/customers/${customerId}/health-score`, { factors }, opts);
  }

  /** Merges into the customer's factors: a number sets one, null removes it. */
  merge(customerId: string, factors: FactorsChange, opts?: WriteOptions): Promise<HealthScore> {
    return this.#http.patch(path`/customers/${customerId}/health-score`, { factors }, opts);
  }

  retrieve(customerId: string): Promise<HealthScore> {
    return this.#http.get(path`/customers/${customerId}/health-score`);
  }

  /**
   * Why the score (the current version, or `version`) is what it is, and what moved it from the one
   * before, or with `since` (an ISO instant) from the one that stood then.
   */
  explain(customerId: string, params: ExplanationParams = {}): Promise<Explanation> {
    return this.#http.get(path`/customers/${customerId}/health-score/explanation`, params);
  }

  /** Pins the score every read shows, with a reason, until `expires_at` (default in 30 days). */
  setOverride(customerId: string, body: OverrideParams, opts?: WriteOptions): Promise<HealthScore> {
    return this.#http.put(path`/customers/${customerId}/health-score/override`, body, opts);
  }

  /** Removes the override: the computed score shows again. */
  removeOverride(customerId: string, opts?: WriteOptions): Promise<HealthScore> {
    return this.#http.delete(path`/customers/${customerId}/health-score/override`, opts);
  }

  /** Every version of the customer's score, newest first. */
  history(customerId: string, params: HistoryParams = {}): AsyncGenerator<HistoryEntry, void, undefined> {
    return paginate<HistoryEntry, number>(async (before) => {
      const page = await this.#http.get<Page<HistoryEntry>>(
        path`/customers/${customerId}/health-score/history`,
        {
          ...params,
          starting_after: before ?? params.starting_after,
        },
      );
      return { items: page.data, next: page.has_more ? page.data.at(-1)?.version : undefined };
    });
  }

  /**
   * Every current score (of one status band, of a segment; active customers unless `lifecycle` is
   * given), lowest first or in `sort`'s order, with its customer's name, book and metadata.
   */
  list(params: Omit<PortfolioParams, 'cursor'> = {}): AsyncGenerator<PortfolioEntry, void, undefined> {
    type Portfolio = Page<PortfolioEntry> & { next_cursor: string | null };
    return paginate<PortfolioEntry, string>(async (cursor) => {
      const page = await this.#http.get<Portfolio>('/health-scores', { ...params, cursor });
      return { items: page.data, next: page.next_cursor ?? undefined };
    });
  }

  /**
   * Customers per band, their average and their ARR (of a segment; active customers unless
   * `lifecycle` is given); `group_by: 'metadata.KEY'` or `'owner'` adds them per value.
   */
  summary(params: SummaryParams = {}): Promise<Summary> {
    return this.#http.get('/health-scores/summary', params);
  }

  /** Every current score (of a segment) counted in `bins` equal bins of [0, 1] (default 20), lowest first. */
  distribution(params: DistributionParams = {}): Promise<Distribution> {
    return this.#http.get('/health-scores/distribution', params);
  }

  /** The portfolio (of a segment) at the end of each of the last `days` UTC days, oldest first. */
  trend(params: TrendParams = {}): Promise<Trend> {
    return this.#http.get('/health-scores/trend', params);
  }

  /** The customers whose score fell (or, `direction: 'up'`, rose) most over the last `days` days. */
  movers(params: MoversParams = {}): Promise<Movers> {
    return this.#http.get('/health-scores/movers', params);
  }

  /** Each outcome judged by the customer's score `horizon_days` before it (of a segment): AUC, bands, factors. */
  calibration(params: CalibrationParams = {}): Promise<Calibration> {
    return this.#http.get('/health-scores/calibration', params);
  }

  /** Sets (or, with `merge: true`, merges) up to 1,000 factor sets in order; each item has its own result. */
  batch(items: ScoreBatchItem[], opts?: WriteOptions): Promise<ScoresBatch> {
    return this.#http.post('/health-scores/batch', { scores: items }, opts);
  }

  /**
   * Starts a backfill: each customer's score as of the end of each day from `from` to the day before
   * its history, from the metrics kept and today's rules and weights. It runs in the background:
   * follow it with getBackfill. 409 backfill_running while another runs.
   */
  backfill(params: BackfillCreate, opts?: WriteOptions): Promise<Backfill> {
    return this.#http.post('/health-scores/backfill', params, opts);
  }

  /** A backfill's progress: `customers_done` of `customers_total`, until `done` or `failed`. */
  getBackfill(id: string): Promise<Backfill> {
    return this.#http.get(path`/health-scores/backfill/${id}`);
  }

  /** The account's last 20 backfills, newest first (a running one, if any, is the first). */
  async listBackfills(): Promise<Backfill[]> {
    return (await this.#http.get<{ data: Backfill[] }>('/health-scores/backfill')).data;
  }
}

export class Settings {
  readonly #http: Transport;

  constructor(http: Transport) {
    this.#http = http;
  }

  weights(): Promise<WeightsSettings> {
    return this.#http.get('/settings/health-score/weights');
  }

  /** Replaces the weights (summing to 1); every stored score is recomputed. */
  updateWeights(weights: Weights, opts?: WriteOptions): Promise<WeightsSettings> {
    return this.#http.patch('/settings/health-score/weights', { weights }, opts);
  }

  /** What these weights would change, without saving them. */
  previewWeights(weights: Weights, opts?: WriteOptions): Promise<WeightsPreview> {
    return this.#http.post('/settings/health-score/weights/preview', { weights }, opts);
  }

  thresholds(): Promise<ThresholdsSettings> {
    return this.#http.get('/settings/health-score/thresholds');
  }

  updateThresholds(thresholds: ThresholdsChange, opts?: WriteOptions): Promise<ThresholdsSettings> {
    return this.#http.patch('/settings/health-score/thresholds', thresholds, opts);
  }

  alerts(): Promise<AlertsSettings> {
    return this.#http.get('/settings/health-score/alerts');
  }

  /** Sets the drop alert rule (`{drop: {delta, days}}`), or turns it off (`{drop: null}`). */
  updateAlerts(alerts: AlertsChange, opts?: WriteOptions): Promise<AlertsSettings> {
    return this.#http.patch('/settings/health-score/alerts', alerts, opts);
  }

  /** The factor rules, by factor name. */
  async factorRules(): Promise<FactorRule[]> {
    return (await this.#http.get<{ data: FactorRule[] }>('/settings/health-score/factors')).data;
  }

  factorRule(factor: string): Promise<FactorRule> {
    return this.#http.get(path`/settings/health-score/factors/${factor}`);
  }

  /** Creates or replaces the rule of `factor`; every score it moves is recomputed. */
  putFactorRule(factor: string, rule: FactorRuleInput, opts?: WriteOptions): Promise<FactorRule> {
    return this.#http.put(path`/settings/health-score/factors/${factor}`, rule, opts);
  }

  /** What this rule would change (customers, scores, bands), without saving it. */
  previewFactorRule(factor: string, rule: FactorRuleInput, opts?: WriteOptions): Promise<FactorRulePreview> {
    return this.#http.post(path`/settings/health-score/factors/${factor}/preview`, rule, opts);
  }

  /** Deletes the rule; its factor leaves every score. */
  deleteFactorRule(factor: string, opts?: WriteOptions): Promise<{ factor: string; deleted: boolean }> {
    return this.#http.delete(path`/settings/health-score/factors/${factor}`, opts);
  }
}

export class Metrics {
  readonly #http: Transport;

  constructor(http: Transport) {
    this.#http = http;
  }

  /** Records a customer's metric values; the factors rules derive from them follow at once. */
  record(customerId: string, body: MetricsWrite, opts?: WriteOptions): Promise<MetricsRecorded> {
    return this.#http.post(path`/customers/${customerId}/metrics`, body, opts);
  }

  /** Records up to 1,000 writes in order; each item has its own result. */
  batch(items: MetricBatchItem[], opts?: WriteOptions): Promise<MetricsBatch> {
    return this.#http.post('/metrics/batch', { metrics: items }, opts);
  }

  /** Every point of the customer (of `metric`, when given), newest first; `limit` is the page size. */
  list(customerId: string, params: MetricListParams = {}): AsyncGenerator<MetricPoint, void, undefined> {
    return paginate<MetricPoint, string>(async (after) => {
      const page = await this.listPage(customerId, {
        ...params,
        starting_after: after ?? params.starting_after,
      });
      const last = page.data.at(-1);
      return { items: page.data, next: page.has_more && last ? `${last.metric}@${last.at}` : undefined };
    });
  }

  listPage(
    customerId: string,
    params: MetricListParams = {},
  ): Promise<{ data: MetricPoint[]; has_more: boolean }> {
    return this.#http.get(path`/customers/${customerId}/metrics`, params);
  }

  /** The account's metric names, by name: what a factor rule's `metric` may read. */
  async names(): Promise<MetricName[]> {
    return (await this.#http.get<{ data: MetricName[] }>('/metrics/names')).data;
  }
}

export class Outcomes {
  readonly #http: Transport;

  constructor(http: Transport) {
    this.#http = http;
  }

  /** Records what happened to the customer at a renewal: `churned` or `retained`, at `at` (default now). */
  create(customerId: string, body: OutcomeCreate, opts?: WriteOptions): Promise<Outcome> {
    return this.#http.post(path`/customers/${customerId}/outcomes`, body, opts);
  }

  /** Every outcome of the customer, the newest `at` first; `limit` is the page size. */
  list(customerId: string, params: OutcomeListParams = {}): AsyncGenerator<Outcome, void, undefined> {
    return paginate<Outcome, string>(async (after) => {
      const page = await this.listPage(customerId, {
        ...params,
        starting_after: after ?? params.starting_after,
      });
      return { items: page.data, next: page.has_more ? page.data.at(-1)?.id : undefined };
    });
  }

  listPage(customerId: string, params: OutcomeListParams = {}): Promise<Page<Outcome>> {
    return this.#http.get(path`/customers/${customerId}/outcomes`, params);
  }

  /** Deletes an outcome recorded by mistake. */
  delete(customerId: string, outcomeId: string, opts?: WriteOptions): Promise<Deleted> {
    return this.#http.delete(path`/customers/${customerId}/outcomes/${outcomeId}`, opts);
  }

  /** Records up to 1,000 outcomes in order; each item has its own result. */
  batch(items: OutcomeBatchItem[], opts?: WriteOptions): Promise<OutcomesBatch> {
    return this.#http.post('/outcomes/batch', { outcomes: items }, opts);
  }
}

export class Events {
  readonly #http: Transport;

  constructor(http: Transport) {
    this.#http = http;
  }

  retrieve(id: string): Promise<Event> {
    return this.#http.get(path`/events/${id}`);
  }

  /** Every event (of one type), newest first, back from `starting_after` when given. */
  list(params: Omit<EventListParams, 'ending_before'> = {}): AsyncGenerator<Event, void, undefined> {
    return paginate<Event, string>(async (after) => {
      const page = await this.listPage({ ...params, starting_after: after ?? params.starting_after });
      return { items: page.data, next: page.has_more ? page.data.at(-1)?.id : undefined };
    });
  }

  /** One page; `ending_before` (the newest id seen) follows the feed forward (docs/api.md, "Events"). */
  listPage(params: EventListParams = {}): Promise<Page<Event>> {
    return this.#http.get('/events', params);
  }
}
