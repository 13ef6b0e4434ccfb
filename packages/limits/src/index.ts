export { createRateLimiter, type RateLimiter, type RateLimiterOptions, type WindowCount } from "./rate-limiter";
export { setRateLimitHeaders, type RateLimitState } from "./rate-limit-state";
export { createRateLimits, type RateLimits } from "./rate-limits";
export { RequestLimits } from "./request-limits";
