// Request cancellation without AbortController.
//
// Node 20's AbortController survives young-generation collections: every controller whose signal was read is promoted
// to the old generation (~650 bytes each, even when it is garbage at once), so two per request at 1,000 requests/s
// promoted ~1.3 MB/s and brought a full, tail-latency-making collection every few seconds (docs/performance.md).
// The gateway's own cancellation needs only what undici and our adapters read from a signal, so it uses this instead.

/** What cancellable code reads: the subset of AbortSignal that undici, the adapters and `sleep` use. A real AbortSignal is one. */
export interface CancelSignal {
  readonly aborted: boolean;
  readonly reason: unknown;
  addEventListener(type: "abort", listener: () => void, options?: { once?: boolean }): void;
  removeEventListener(type: "abort", listener: () => void): void;
}

/** A signal and its trigger in one object: `abort()` fires every listener once; later listeners are not called. */
export class Cancellation implements CancelSignal {
  #aborted = false;
  #reason: unknown = undefined;
  #listeners: (() => void)[] | undefined = undefined;

  get aborted(): boolean {
    return this.#aborted;
  }

  get reason(): unknown {
    return this.#reason;
  }

  /** Like AbortSignal's: listeners run at most once, so `once` is implied. */
  addEventListener(type: "abort", listener: () => void): void {
    if (type !== "abort" || this.#aborted) return;
    (this.#listeners ??= []).push(listener);
  }

  removeEventListener(type: "abort", listener: () => void): void {
    const listeners = this.#listeners;
    if (type !== "abort" || !listeners) return;
    const at = listeners.indexOf(listener);
    if (at !== -1) listeners.splice(at, 1);
  }

  /** Aborts this one when `parent` aborts (at once if it already has); returns the function that unlinks them. */
  follow(parent: CancelSignal): () => void {
    const onAbort = () => this.abort(parent.reason);
    if (parent.aborted) {
      onAbort();
      return () => undefined;
    }
    parent.addEventListener("abort", onAbort, { once: true });
    return () => parent.removeEventListener("abort", onAbort);
  }

  abort(reason: unknown = new DOMException("This operation was aborted", "AbortError")): void {
    if (this.#aborted) return;
    this.#aborted = true;
    this.#reason = reason;
    const listeners = this.#listeners;
    this.#listeners = undefined;
    if (listeners) for (const listener of listeners) listener();
  }
}
