// One deployment's health as this gateway instance sees it (CONTRACT 13): cooling down after a failure (5 s,
// doubling to 5 min, reset by a success) and its requests of the last minute against its requests per minute.
import type { Clock } from "@gw/shared";

export const COOLDOWN_FIRST_MS = 5_000;
export const COOLDOWN_MAX_MS = 5 * 60_000;
const RATE_WINDOW_MS = 60_000;

export class DeploymentHealth {
  /** failures in a row since the last success: the next cooldown is 5 s doubled this many times */
  private failures = 0;
  private coolingUntil = 0;
  /** start times of the requests of the last minute, oldest first (only kept with a requests-per-minute limit) */
  private readonly sent: number[] = [];

  constructor(private readonly clock: Clock, readonly requestsPerMinute?: number) {}

  /** Cooling down: skipped while another deployment can serve. */
  cooling(): boolean {
    return this.clock.now() < this.coolingUntil;
  }

  /** At its requests per minute: skipped like a cooling deployment. */
  atRate(): boolean {
    if (this.requestsPerMinute === undefined) return false;
    const since = this.clock.now() - RATE_WINDOW_MS;
    while (this.sent.length > 0 && (this.sent[0] ?? 0) <= since) this.sent.shift();
    return this.sent.length >= this.requestsPerMinute;
  }

  /** When it may be sent a request again (epoch ms; now when it may already). */
  availableAt(): number {
    let at = Math.max(this.clock.now(), this.coolingUntil);
    const limit = this.requestsPerMinute;
    if (limit !== undefined && this.atRate()) {
      // the request whose minute must pass before one more fits
      const oldest = this.sent[this.sent.length - limit];
      if (oldest !== undefined) at = Math.max(at, oldest + RATE_WINDOW_MS);
    }
    return at;
  }

  /** A request is being sent to it. */
  taken(): void {
    if (this.requestsPerMinute !== undefined) this.sent.push(this.clock.now());
  }

  succeeded(): void {
    this.failures = 0;
    this.coolingUntil = 0;
  }

  failed(): void {
    const ms = Math.min(COOLDOWN_MAX_MS, COOLDOWN_FIRST_MS * 2 ** Math.min(this.failures, 16));
    this.failures++;
    this.coolingUntil = this.clock.now() + ms;
  }

  /** For /api/status/external: the end of its cooldown (epoch ms), or undefined when it is not cooling. */
  coolingUntilMs(): number | undefined {
    return this.cooling() ? this.coolingUntil : undefined;
  }
}
