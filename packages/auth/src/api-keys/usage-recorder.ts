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
    this.add({ keyId, count: 1, lastUsedAt: at });
  }

  private add(delta: UsageDelta): void {
    const current = this.pending.get(delta.keyId);
    if (current) {
      current.count += delta.count;
      if (delta.lastUsedAt > current.lastUsedAt) current.lastUsedAt = delta.lastUsedAt;
    } else {
      this.pending.set(delta.keyId, { ...delta });
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
        // Kept for the next flush: a database blip (requests still served from the key cache and held credits) must
        // not lose those uses from usage_count. Uses still unwritten when the process exits are lost.
        this.logger.warn({ err: String(err), keyId: delta.keyId }, "could not record api key usage; retrying on the next flush");
        this.add(delta);
      }
    }
  }
}
