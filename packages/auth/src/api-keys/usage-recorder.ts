import type { Logger } from "pino";
import type { UsageDelta } from "./repository";

/**
 * Collects key uses in memory and writes them in batches, off the request path. Flushes run one at a time,
 * so a slow database never piles up concurrent writes.
 */
export class UsageRecorder {
  private pending = new Map<string, UsageDelta>();
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> = Promise.resolve();

  constructor(
    private readonly write: (delta: UsageDelta) => Promise<void>,
    private readonly logger: Logger,
    private readonly intervalMs: number,
  ) {}

  start(): void {
    this.timer = setInterval(() => void this.flush(), this.intervalMs);
    this.timer.unref();
  }

  record(keyId: string, at: Date): void {
    const current = this.pending.get(keyId);
    if (current) {
      current.count += 1;
      if (at > current.lastUsedAt) current.lastUsedAt = at;
    } else {
      this.pending.set(keyId, { keyId, count: 1, lastUsedAt: at });
    }
  }

  flush(): Promise<void> {
    this.flushing = this.flushing.then(() => this.writePending());
    return this.flushing;
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.flush();
  }

  private async writePending(): Promise<void> {
    if (this.pending.size === 0) return;
    const batch = [...this.pending.values()];
    this.pending = new Map();
    for (const delta of batch) {
      try {
        await this.write(delta);
      } catch (err) {
        // Usage stats are display data: log and drop rather than retry forever.
        this.logger.warn({ err: String(err), keyId: delta.keyId }, "could not record api key usage");
      }
    }
  }
}
