// Heavy reads bounded per account (docs/api.md, "Outcomes and calibration"): a task identical to
// one in flight (same account and key) shares its answer instead of running again, and past
// `limit` different ones in flight an account's next waits its turn. Nothing is refused: a burst
// from one account queues behind itself, and holds the memory of `limit` tasks at most.
export class PerAccount {
  readonly #limit: number;
  readonly #inFlight = new Map<string, Promise<unknown>>();
  readonly #accounts = new Map<string, { running: number; waiting: (() => void)[] }>();

  constructor(limit: number) {
    this.#limit = limit;
  }

  /** `task`'s answer, shared with every caller of the same account and key while it runs. */
  run<T>(accountId: string, key: string, task: () => Promise<T>): Promise<T> {
    const id = JSON.stringify([accountId, key]);
    const running = this.#inFlight.get(id);
    if (running) return running as Promise<T>;
    const answer = this.#turn(accountId)
      .then(task)
      .finally(() => {
        this.#inFlight.delete(id);
        this.#release(accountId);
      });
    this.#inFlight.set(id, answer);
    return answer;
  }

  /** Resolves when the account has fewer than `limit` tasks running (its task then counts). */
  #turn(accountId: string): Promise<void> {
    let account = this.#accounts.get(accountId);
    if (!account) {
      account = { running: 0, waiting: [] };
      this.#accounts.set(accountId, account);
    }
    if (account.running < this.#limit) {
      account.running++;
      return Promise.resolve();
    }
    const waiting = account.waiting;
    return new Promise((resolve) => waiting.push(resolve));
  }

  #release(accountId: string): void {
    const account = this.#accounts.get(accountId);
    if (!account) return;
    const next = account.waiting.shift();
    if (next)
      next(); // the slot passes on: `running` stays
    else if (--account.running === 0) this.#accounts.delete(accountId);
  }
}
