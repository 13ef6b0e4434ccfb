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
  private running = false;

  constructor(
    private readonly write: (delta: UsageDelta) => Promise<void>,
    private readonly logger: Logger,
    private readonly intervalMs: number,
  ) {}

  start(): void {
    this.timer = setInterval(() => void this.tick(), this.intervalMs);
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

  /** Writes what is pending now, once a flush still writing is done. */
  async flush(): Promise<void> {
    await this.flushing;
    await this.tick();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.flush();
  }

  /**
   * The timer's flush: none while one is still writing. Chained one per tick, an outage queued a flush a second, each
   * waiting on the database for every key, and the shutdown's last flush waited behind all of them: past its 30 s,
   * before the ledger's pending charges were written.
   */
  private tick(): Promise<void> {
    if (this.running) return this.flushing;
    this.running = true;
    this.flushing = this.writePending().finally(() => { this.running = false; });
    return this.flushing;
  }

  private async writePending(): Promise<void> {
    if (this.pending.size === 0) return;
    const batch = [...this.pending.values()];
    this.pending = new Map();
    for (const [i, delta] of batch.entries()) {
      try {
        await this.write(delta);
      } catch (err) {
        // Kept for the next flush: a database blip (requests still served from the key cache and held credits) must
        // not lose those uses from usage_count. Uses still unwritten when the process exits are lost. The rest of the
        // batch is kept untried: a database that refused one write refuses the next after the same wait (5 s each).
        this.logger.warn({ err: String(err), keyId: delta.keyId }, "could not record api key usage; retrying on the next flush");
        for (const kept of batch.slice(i)) this.add(kept);
        return;
      }
    }
  }
}
