export { createRateLimiter, type RateLimiter, type RateLimiterOptions, type WindowCount } from "./rate-limiter";
export { rateLimitHeaders, rateLimitRefusal, setRateLimitHeaders, type RateLimitState } from "./rate-limit-state";
export { createRateLimits, errorCodeFor, type RateLimits, type RateLimitsOptions } from "./rate-limits";
export { RequestLimits, type LimitDecision, type RequestRate } from "./request-limits";
export type { ConcurrencySlot } from "./concurrency";
