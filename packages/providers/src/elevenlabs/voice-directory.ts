// Voice name → voice id, from GET {base}/v1/voices, cached and refreshed in the background once expired. A miss
// refreshes the list once (rate-limited) so that a voice added upstream is found without a restart.
import { Cancellation } from "@gw/shared";
import { invalidParameter } from "@gw/shared";
import { accountOf, type Endpoint } from "../endpoint";
import type { UpstreamClient } from "../http/upstream-client";
import { buildVoicesRequest, findVoice, parseError, parseVoicesResponse, type VoiceIndex } from "./transform";

export interface VoiceDirectoryTiming {
  /** how long a fetched list is trusted */
  ttlMs: number;
  /** the least time between two refreshes caused by unknown names */
  missRefreshMs: number;
  /** after a fetch of the list failed, how long the cached list answers (expired or missing a name) before the next try */
  retryMs: number;
}

export const unknownVoice = (name: string) => invalidParameter("voice", `unknown voice '${name}'`);

export const DEFAULT_VOICE_TIMING: VoiceDirectoryTiming = { ttlMs: 10 * 60_000, missRefreshMs: 30_000, retryMs: 5_000 };

/** The shared voices fetch must not fail because the one request that started it went away. */
const DETACHED = new Cancellation();

interface CacheEntry {
  voices: VoiceIndex;
  fetchedAt: number;
}

export class VoiceDirectory {
  /** one list per upstream account (accountOf): another key on the same host may see other voices */
  private readonly cache = new Map<string, CacheEntry>();
  /** single flight: concurrent lookups share one upstream call */
  private readonly inflight = new Map<string, Promise<CacheEntry>>();
  /** when a fetch last failed, per upstream account: a failing voices endpoint is not asked on every lookup */
  private readonly failedAt = new Map<string, number>();

  constructor(
    private readonly client: UpstreamClient,
    private readonly timing: VoiceDirectoryTiming = DEFAULT_VOICE_TIMING,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /**
   * The upstream voice id of a name (exact, else case-insensitive); unknown: 400 invalid_parameter naming it.
   * Only the first lookup waits for the list: once it has expired, the cached one answers while one background
   * fetch replaces it, so a voices endpoint that fails or hangs for a while does not take speech down with it.
   * After a failed fetch, neither the background refresh nor an unknown name's asks again for `retryMs`.
   */
  async resolve(endpoint: Endpoint, name: string): Promise<string> {
    const account = accountOf(endpoint);
    let entry = this.cache.get(account);
    if (!entry) entry = await this.refresh(endpoint, account);
    else if (this.now() - entry.fetchedAt > this.timing.ttlMs && !this.backingOff(account)) this.refresh(endpoint, account).catch(() => undefined);
    let id = findVoice(entry.voices, name);
    if (id === undefined && this.now() - entry.fetchedAt > this.timing.missRefreshMs && !this.backingOff(account)) {
      id = findVoice((await this.refresh(endpoint, account)).voices, name);
    }
    if (id === undefined) throw unknownVoice(name);
    return id;
  }

  /** Drops the cached list (the upstream refused one of its voices), so the next lookup fetches it again. */
  forget(endpoint: Endpoint): void {
    this.cache.delete(accountOf(endpoint));
  }

  private backingOff(account: string): boolean {
    const failed = this.failedAt.get(account);
    return failed !== undefined && this.now() - failed < this.timing.retryMs;
  }

  private refresh(endpoint: Endpoint, account: string): Promise<CacheEntry> {
    const running = this.inflight.get(account);
    if (running) return running;
    const pending = (async () => {
      try {
        const json = await this.client.json({ ...buildVoicesRequest(endpoint), method: "GET", signal: DETACHED, parseError });
        const entry = { voices: parseVoicesResponse(json), fetchedAt: this.now() };
        this.cache.set(account, entry);
        this.failedAt.delete(account);
        return entry;
      } catch (err) {
        this.failedAt.set(account, this.now());
        throw err;
      }
    })().finally(() => this.inflight.delete(account));
    this.inflight.set(account, pending);
    return pending;
  }
}
