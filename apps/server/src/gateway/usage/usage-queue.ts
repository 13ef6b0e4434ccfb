import type { Logger } from "pino";
import type { UsageRecord, UsageRepository } from "./usage-repository";

/** Upper bound of records kept in memory while the database is unreachable. */
const MAX_BUFFERED = 50_000;

/**
 * Usage records leave the request path through this queue: written in batches every interval or when a
 * batch fills, and drained on shutdown so a clean stop loses nothing.
 */
export class UsageQueue {
  private buffer: UsageRecord[] = [];
  private flushing: Promise<void> | undefined;
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly repo: UsageRepository,
    private readonly logger: Logger,
    private readonly opts: { intervalMs: number; batchSize: number },
  ) {
    this.timer = setInterval(() => void this.flush(), opts.intervalMs);
    this.timer.unref();
  }

  push(record: UsageRecord): void {
    this.buffer.push(record);
    if (this.buffer.length > MAX_BUFFERED) {
      const dropped = this.buffer.splice(0, this.buffer.length - MAX_BUFFERED);
      this.logger.error({ dropped: dropped.length }, "usage buffer overflow: oldest records dropped");
    }
    if (this.buffer.length >= this.opts.batchSize) void this.flush();
  }

  /** Writes everything queued so far; concurrent callers share one write. */
  async flush(): Promise<void> {
    while (this.flushing) await this.flushing;
    if (this.buffer.length === 0) return;
    const batch = this.buffer.splice(0, this.buffer.length);
    this.flushing = this.repo.insertMany(batch).catch((err: unknown) => {
      // Put them back: the next flush retries (ids make the retry idempotent).
      this.buffer.unshift(...batch);
      this.logger.warn({ err: (err as Error).message, records: batch.length }, "usage flush failed; will retry");
    }).finally(() => {
      this.flushing = undefined;
    });
    await this.flushing;
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.flush();
  }
}
