// `vitals/client`: a typed client for the Vitals API and webhook verification (docs/client.md).
// No runtime dependencies: the global fetch and node:crypto.
import { type ClientOptions, Transport } from './client.ts';
import { Customers, Events, HealthScores, Metrics, Outcomes, Settings } from './resources.ts';
import { Webhooks } from './webhook-resources.ts';
import { Notes, Playbooks, Tasks } from './work-resources.ts';

export class VitalsClient {
  readonly customers: Customers;
  readonly healthScores: HealthScores;
  readonly metrics: Metrics;
  readonly outcomes: Outcomes;
  readonly settings: Settings;
  readonly events: Events;
  readonly webhooks: Webhooks;
  readonly tasks: Tasks;
  readonly notes: Notes;
  readonly playbooks: Playbooks;

  constructor(opts: ClientOptions) {
    const http = new Transport(opts);
    this.customers = new Customers(http);
    this.healthScores = new HealthScores(http);
    this.metrics = new Metrics(http);
    this.outcomes = new Outcomes(http);
    this.settings = new Settings(http);
    this.events = new Events(http);
    this.webhooks = new Webhooks(http);
    this.tasks = new Tasks(http);
    this.notes = new Notes(http);
    this.playbooks = new Playbooks(http);
  }
}

export type { ClientOptions } from './client.ts';
export { VitalsError } from './errors.ts';
export type * from './types.ts';
export { type HeadersLike, type VerifyOptions, verifyWebhook, WebhookVerificationError } from './webhooks.ts';
