// The webhook methods of the client: the webhook itself, then its deliveries (src/http/webhooks.ts
// and webhook-deliveries.ts; docs/api.md, "Webhooks" and "Deliveries").
import { paginate, path, type Transport } from './client.ts';
import type {
  Deleted,
  Delivery,
  DeliveryListParams,
  Page,
  Webhook,
  WebhookCreate,
  WebhookRotate,
  WebhookUpdate,
  WebhookWithBacklog,
  WebhookWithSecret,
  WriteOptions,
} from './types.ts';

export class Webhooks {
  readonly #http: Transport;

  constructor(http: Transport) {
    this.#http = http;
  }

  /** Subscribes an endpoint; the answer's `secret` is shown only here and by rotateSecret. */
  create(body: WebhookCreate, opts?: WriteOptions): Promise<WebhookWithSecret> {
    return this.#http.post('/webhooks', body, opts);
  }

  /** The webhook with its backlog: `pending` deliveries and when the oldest was made. */
  retrieve(id: string): Promise<WebhookWithBacklog> {
    return this.#http.get(path`/webhooks/${id}`);
  }

  update(id: string, body: WebhookUpdate, opts?: WriteOptions): Promise<Webhook> {
    return this.#http.patch(path`/webhooks/${id}`, body, opts);
  }

  delete(id: string, opts?: WriteOptions): Promise<Deleted> {
    return this.#http.delete(path`/webhooks/${id}`, opts);
  }

  /** All webhooks of the account, oldest first (this list has no pages). */
  async list(): Promise<Webhook[]> {
    return (await this.#http.get<{ webhooks: Webhook[] }>('/webhooks')).webhooks;
  }

  /**
   * A new secret. The old one stops at once, or with `{expire_previous_in: seconds}` signs beside
   * the new one that long, while the receiver is given the new one (docs/webhooks.md, "Rotating the secret").
   */
  rotateSecret(id: string, body: WebhookRotate = {}, opts?: WriteOptions): Promise<WebhookWithSecret> {
    return this.#http.post(path`/webhooks/${id}/rotate-secret`, body, opts);
  }

  /** Sends this webhook alone one `webhook.test` event; the answer is its delivery. */
  test(id: string, opts?: WriteOptions): Promise<Delivery> {
    return this.#http.post(path`/webhooks/${id}/test`, undefined, opts);
  }

  /** Every delivery of the webhook (of one status), newest first, with its attempts. */
  listDeliveries(id: string, params: DeliveryListParams = {}): AsyncGenerator<Delivery, void, undefined> {
    return paginate<Delivery, string>(async (after) => {
      const page = await this.#http.get<Page<Delivery>>(path`/webhooks/${id}/deliveries`, {
        ...params,
        starting_after: after ?? params.starting_after,
      });
      return { items: page.data, next: page.has_more ? page.data.at(-1)?.id : undefined };
    });
  }

  /** Sends a delivery again now: one more attempt. */
  retryDelivery(id: string, deliveryId: string, opts?: WriteOptions): Promise<Delivery> {
    return this.#http.post(path`/webhooks/${id}/deliveries/${deliveryId}/retry`, undefined, opts);
  }
}
