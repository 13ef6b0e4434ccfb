// Upstream URLs split into what undici's Dispatcher takes (origin + path), parsed once per distinct URL.
//
// undici's top-level `request(url, …)` builds a WHATWG URL on every call. In Node 20 that left ~1 KB per request in
// the old generation (measured: a bare undici proxy at 1,000 requests/s grew the old generation by ~1 MB/s through
// `request(url, { dispatcher })`, by ~60 KB/s through `dispatcher.request({ origin, path })`), which is what brought
// full collections, and their pauses, every few seconds under load (docs/performance.md).

export interface DispatchTarget {
  origin: string;
  /** path and query */
  path: string;
}

/** Adapters build URLs from a few base URLs and fixed paths; ids in paths (voices, polled results) stay bounded by this. */
const MAX_CACHED = 512;
const cache = new Map<string, DispatchTarget>();

/** Throws a TypeError for an invalid URL, as `new URL` does. */
export function dispatchTarget(url: string): DispatchTarget {
  let target = cache.get(url);
  if (target) return target;
  const parsed = new URL(url);
  target = { origin: parsed.origin, path: `${parsed.pathname}${parsed.search}` };
  if (cache.size >= MAX_CACHED) cache.clear();
  cache.set(url, target);
  return target;
}
