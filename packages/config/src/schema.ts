import type { CreditPackage, LimitName, LimitRule, ModelDefinition, PlanDefinition, ProviderName } from "./defaults";

export interface ProviderEndpoint { baseUrl?: string; apiKey?: string }

export interface OAuthProviderConfig {
  clientId?: string;
  clientSecret?: string;
  authorizeUrl: string;
  tokenUrl: string;
  /** Google: userinfo endpoint; GitHub: API base (user and e-mails are read below it) */
  apiUrl: string;
}

export interface Config {
  nodeEnv: "development" | "production" | "test";
  /** SPEC 7.1 `debug` on authentication errors: only when NODE_ENV=development is set explicitly, never by default */
  errorDebug: boolean;
  port: number;
  host: string;
  publicUrl: string;
  dataDir: string;
  /** unset: an embedded FerretDB is started under dataDir */
  mongodbUri?: string;
  ferretdbBin?: string;
  sessionSecret: string;
  sessionTtlDays: number;
  sessionMaxDays: number;
  cookieSecure: boolean;
  smtpUrl?: string;
  mailFrom: string;
  redisUrl?: string;
  /** Express `trust proxy` value */
  trustProxy: boolean | number | string;
  /** browser origins allowed to call the API-key routes (CORS): any (`*`), these exact origins, or none (`[]`: off) */
  apiCorsOrigins: "*" | string[];
  /** the origins Stripe Checkout may send a customer back to (success_url, cancel_url): PUBLIC_URL's and CHECKOUT_ALLOWED_ORIGINS */
  checkoutAllowedOrigins: string[];
  keyEnv: string;
  logLevel: string;
  oauth: { google: OAuthProviderConfig; github: OAuthProviderConfig };
  stripe: { secretKey?: string; publishableKey: string; webhookSecret?: string; apiBase?: string };
  providers: Record<ProviderName, ProviderEndpoint>;
  upstream: { connectTimeoutMs: number; requestTimeoutMs: number; maxRetries: number; fluxPollIntervalMs: number; maxResponseBytes: number };
  holdTtlSeconds: number;
  models: ModelDefinition[];
  plans: PlanDefinition[];
  creditPackages: CreditPackage[];
  limits: Record<LimitName, LimitRule>;
  /** SPEC 5 password rules: minimum length (enforced parameter) */
  passwordMinLength: number;
  /** a body larger than this gets 413 */
  jsonBodyLimitBytes: number;
  audioUploadLimitBytes: number;
  /** a gateway request body that sends nothing for this long gets 408 (its concurrency slot is freed) */
  bodyIdleTimeoutMs: number;
  /** the longest a request body may take to arrive, however it trickles */
  bodyTimeoutMs: number;
  gateway: {
    /** optional OpenAI-compatible moderation endpoint consulted after the local image policy */
    moderationUpstream?: { url: string; apiKey?: string; timeoutMs: number };
    /** how long an Idempotency-Key answer is replayed */
    idempotencyTtlSeconds: number;
  };
  /** ADMIN_EMAILS, normalized: the verified accounts with these e-mails are admins (operator console) */
  adminEmails: string[];
  /** V8's old-generation growth past the live heap, in percent (0: V8's own heuristics); bounds peak memory */
  heapGrowingPercent: number;
  observability: {
    /** GET /metrics answers only a request bearing this token; unset: the route does not exist (404) */
    metricsToken?: string;
    /** OpenTelemetry traces are exported here (OTLP over HTTP) when set; unset: tracing is off */
    otlp?: { endpoint: string; headers: Record<string, string>; serviceName: string };
  };
}
