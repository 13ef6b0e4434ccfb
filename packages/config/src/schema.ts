// The settings read from the environment, one schema per section, and the Config every part of the gateway reads:
// its type is inferred from these schemas and the catalog's (catalog-schema.ts).
import { readFileSync } from "node:fs";
import path from "node:path";
import { z } from "zod";
import { catalogFileSchema, LIMIT_NAMES, type Catalog, type LimitName, type LimitRule, type ProviderName } from "./catalog-schema";
import { ConfigError } from "./config-error";
import { MAX_PASSWORD_LENGTH } from "./defaults";
import {
  bool, checkDataDir, envNumber, httpUrl, MAX_WINDOW_SECONDS, parseAdminEmails, parseCorsOrigins, parseOrigins, parseOtlpHeaders, parseTrustProxy, timerMs, upstreamUrl, windowTooLong,
} from "./env-values";

/** The shortest session secret taken (SESSION_SECRET's rule; iron-session needs 32 characters). */
export const SESSION_SECRET_MIN_LENGTH = 32;

const nodeEnvs = z.enum(["development", "production", "test"]);
const logLevels = z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]);
const oauthUrl = (name: string, url: string) => httpUrl(name, url).default(url);

/** The process, the HTTP server and its request bodies. */
const server = z.object({
  // unset runs like development (errorDebug below tells the two apart)
  NODE_ENV: nodeEnvs.optional(),
  PORT: envNumber((n) => n.int().min(0).max(65535)).default(3000),
  // empty listened on every interface, whatever the operator meant
  HOST: z.string().trim().min(1, "must be an address or host name, not empty").default("0.0.0.0"),
  PUBLIC_URL: httpUrl("PUBLIC_URL", "https://gateway.example.com").optional(),
  DATA_DIR: z.string().min(1).default(".data"),
  TRUST_PROXY: z.string().optional(),
  API_CORS_ORIGINS: z.string().default("*"),
  CHECKOUT_ALLOWED_ORIGINS: z.string().default(""),
  LOG_LEVEL: logLevels.optional(),
  JSON_BODY_LIMIT_BYTES: envNumber((n) => n.int().positive()).default(1024 * 1024),
  AUDIO_UPLOAD_LIMIT_BYTES: envNumber((n) => n.int().positive()).default(25 * 1024 * 1024),
  BODY_IDLE_TIMEOUT_MS: timerMs().default(30_000),
  BODY_TIMEOUT_MS: timerMs().default(60_000),
  // how far V8 lets the old generation grow past the live heap before a full collection (0: V8 decides)
  HEAP_GROWING_PERCENT: envNumber((n) => n.int().min(0).max(400)).default(50),
}).transform((e) => {
  const nodeEnv = e.NODE_ENV ?? "development";
  // the default PUBLIC_URL names PORT: with 0 (a free port picked at listen) links and the CSRF origin were localhost:0
  if (e.PORT === 0 && e.PUBLIC_URL === undefined) {
    throw new ConfigError("PORT=0 (a free port picked at start) needs PUBLIC_URL: mailed links and the CSRF origin check name the gateway's address");
  }
  const publicUrl = (e.PUBLIC_URL ?? `http://localhost:${e.PORT}`).replace(/\/$/, "");
  const dataDir = path.resolve(e.DATA_DIR);
  checkDataDir(dataDir);
  return {
    nodeEnv,
    /** SPEC 7.1 `debug` on authentication errors: only when NODE_ENV=development is set explicitly, never by default */
    errorDebug: e.NODE_ENV === "development",
    port: e.PORT,
    host: e.HOST,
    publicUrl,
    /** absolute; created when first written to (the generated session secret, the embedded database, the outbox) */
    dataDir,
    /** Express `trust proxy` value */
    trustProxy: parseTrustProxy(e.TRUST_PROXY),
    /** browser origins allowed to call the API-key routes (CORS): any (`*`), these exact origins, or none (`[]`: off) */
    apiCorsOrigins: parseCorsOrigins(e.API_CORS_ORIGINS),
    /** the origins Stripe Checkout may send a customer back to (success_url, cancel_url): PUBLIC_URL's and CHECKOUT_ALLOWED_ORIGINS */
    checkoutAllowedOrigins: [...new Set([new URL(publicUrl).origin, ...parseOrigins("CHECKOUT_ALLOWED_ORIGINS", e.CHECKOUT_ALLOWED_ORIGINS)])],
    logLevel: e.LOG_LEVEL ?? (nodeEnv === "test" ? "silent" : "info"),
    /** a body larger than this gets 413 */
    jsonBodyLimitBytes: e.JSON_BODY_LIMIT_BYTES,
    audioUploadLimitBytes: e.AUDIO_UPLOAD_LIMIT_BYTES,
    /** a gateway request body that sends nothing for this long gets 408 (its concurrency slot is freed) */
    bodyIdleTimeoutMs: e.BODY_IDLE_TIMEOUT_MS,
    /** the longest a request body may take to arrive, however it trickles */
    bodyTimeoutMs: e.BODY_TIMEOUT_MS,
    /** V8's old-generation growth past the live heap, in percent (0: V8's own heuristics); bounds peak memory */
    heapGrowingPercent: e.HEAP_GROWING_PERCENT,
  };
});

/** Where the gateway keeps its state. */
const storage = z.object({
  MONGODB_URI: z.string().min(1).optional(),
  FERRETDB_BIN: z.string().optional(),
  // ioredis reads any other string as a host name, so a typo ran on the Redis-down fallback with only warnings to show
  REDIS_URL: z.url({ protocol: /^rediss?$/, error: "REDIS_URL must be a redis:// or rediss:// URL, e.g. redis://127.0.0.1:6379" }).optional(),
}).transform((e) => ({
  /** unset: an embedded FerretDB is started under dataDir */
  mongodbUri: e.MONGODB_URI,
  ferretdbBin: e.FERRETDB_BIN,
  redisUrl: e.REDIS_URL,
}));

/** Sign-in: sessions, passwords, API keys, OAuth, the operator console's admins. */
const accounts = z.object({
  NODE_ENV: nodeEnvs.optional(),
  SESSION_SECRET: z.string().min(SESSION_SECRET_MIN_LENGTH, `SESSION_SECRET must be at least ${SESSION_SECRET_MIN_LENGTH} characters`).optional(),
  // a session's expiry is a date: SESSION_TTL_DAYS=1000000000 started and every login answered 500 (no such date)
  SESSION_TTL_DAYS: envNumber((n) => n.positive().max(3650, "must be at most 3650 days (ten years)")).default(7),
  SESSION_MAX_DAYS: envNumber((n) => n.positive().max(3650, "must be at most 3650 days (ten years)")).default(30),
  COOKIE_SECURE: bool.default(true),
  // longer passwords are refused (MAX_PASSWORD_LENGTH): a larger minimum refused every sign-up
  PASSWORD_MIN_LENGTH: envNumber((n) => n.int().min(8).max(MAX_PASSWORD_LENGTH, `must be at most ${MAX_PASSWORD_LENGTH}, the longest password taken`)).default(8),
  KEY_ENV: z.string().regex(/^[a-z0-9]{1,16}$/, "KEY_ENV must be 1-16 lower-case letters or digits").default("live"),
  // operator console (CONTRACT 12): the verified accounts with these e-mails are admins
  ADMIN_EMAILS: z.string().default(""),
  GOOGLE_CLIENT_ID: z.string().optional(),
  GOOGLE_CLIENT_SECRET: z.string().optional(),
  GOOGLE_AUTHORIZE_URL: oauthUrl("GOOGLE_AUTHORIZE_URL", "https://accounts.google.com/o/oauth2/v2/auth"),
  GOOGLE_TOKEN_URL: oauthUrl("GOOGLE_TOKEN_URL", "https://oauth2.googleapis.com/token"),
  GOOGLE_USERINFO_URL: oauthUrl("GOOGLE_USERINFO_URL", "https://openidconnect.googleapis.com/v1/userinfo"),
  GITHUB_CLIENT_ID: z.string().optional(),
  GITHUB_CLIENT_SECRET: z.string().optional(),
  GITHUB_AUTHORIZE_URL: oauthUrl("GITHUB_AUTHORIZE_URL", "https://github.com/login/oauth/authorize"),
  GITHUB_TOKEN_URL: oauthUrl("GITHUB_TOKEN_URL", "https://github.com/login/oauth/access_token"),
  GITHUB_API_URL: oauthUrl("GITHUB_API_URL", "https://api.github.com"),
}).transform((e) => {
  if (e.SESSION_SECRET === undefined && e.NODE_ENV === "production") throw new ConfigError("SESSION_SECRET is required in production");
  return {
    /**
     * Seals the session and OAuth-state cookies. Empty when SESSION_SECRET is unset outside production: the server's
     * start-up then uses (or generates) the one kept under dataDir.
     */
    sessionSecret: e.SESSION_SECRET ?? "",
    sessionTtlDays: e.SESSION_TTL_DAYS,
    sessionMaxDays: e.SESSION_MAX_DAYS,
    cookieSecure: e.COOKIE_SECURE,
    /** SPEC 5 password rules: minimum length (enforced parameter) */
    passwordMinLength: e.PASSWORD_MIN_LENGTH,
    keyEnv: e.KEY_ENV,
    /** ADMIN_EMAILS, normalized: the verified accounts with these e-mails are admins (operator console) */
    adminEmails: parseAdminEmails(e.ADMIN_EMAILS),
    oauth: {
      /** apiUrl: Google's userinfo endpoint; GitHub's API base (user and e-mails are read below it) */
      google: { clientId: e.GOOGLE_CLIENT_ID, clientSecret: e.GOOGLE_CLIENT_SECRET, authorizeUrl: e.GOOGLE_AUTHORIZE_URL, tokenUrl: e.GOOGLE_TOKEN_URL, apiUrl: e.GOOGLE_USERINFO_URL },
      github: { clientId: e.GITHUB_CLIENT_ID, clientSecret: e.GITHUB_CLIENT_SECRET, authorizeUrl: e.GITHUB_AUTHORIZE_URL, tokenUrl: e.GITHUB_TOKEN_URL, apiUrl: e.GITHUB_API_URL },
    },
  };
});

/** Outgoing mail. */
const mail = z.object({
  // nodemailer reads only smtp(s):// strings as a connection URL; any other string it takes for a transport object
  SMTP_URL: z.url({ protocol: /^smtps?$/, error: "SMTP_URL must be an smtp:// or smtps:// URL, e.g. smtps://user:pass@smtp.example.com" }).optional(),
  // nodemailer sends a From without an address ("AI Gateway") with an empty envelope sender (MAIL FROM:<>)
  MAIL_FROM: z.string().regex(/^(?:[^<>]*<\s*[^\s<>@]+@[^\s<>@]+\s*>|\s*[^\s<>@]+@[^\s<>@]+\s*)$/, "MAIL_FROM must be an e-mail address, alone or as Name <address>, e.g. AI Gateway <no-reply@example.com>")
    .default("AI Gateway <no-reply@localhost>"),
}).transform((e) => ({ smtpUrl: e.SMTP_URL, mailFrom: e.MAIL_FROM }));

/** Payments (Stripe). */
const payments = z.object({
  // Stripe's keys by their prefixes: swapped keys started, and the publishable key is sent to every browser
  // (GET /api/billing/config), so a secret key put there was given away; a publishable one as the secret failed every call.
  // Empty is no key of the wrong kind: like the publishable key's, it leaves billing (or the webhook) unconfigured, as unset.
  STRIPE_SECRET_KEY: z.string().regex(/^(?:$|sk_|rk_)/, "STRIPE_SECRET_KEY must be a secret or restricted key (sk_... or rk_...)").optional(),
  STRIPE_PUBLISHABLE_KEY: z.string().regex(/^(?:$|pk_)/, "STRIPE_PUBLISHABLE_KEY must be a publishable key (pk_...), never the secret one").default(""),
  STRIPE_WEBHOOK_SECRET: z.string().regex(/^(?:$|whsec_)/, "STRIPE_WEBHOOK_SECRET must be the endpoint's signing secret (whsec_...)").optional(),
  STRIPE_API_BASE: httpUrl("STRIPE_API_BASE", "http://127.0.0.1:12111").optional(),
}).transform((e) => ({
  stripe: { secretKey: e.STRIPE_SECRET_KEY, publishableKey: e.STRIPE_PUBLISHABLE_KEY, webhookSecret: e.STRIPE_WEBHOOK_SECRET, apiBase: e.STRIPE_API_BASE },
}));

/** Where one provider is reached; either may be unset (the provider is then unconfigured). */
export interface ProviderEndpoint {
  baseUrl?: string;
  apiKey?: string;
}

/** The model upstreams: one base URL and key per provider, and how they are called. */
const upstreams = z.object({
  TEXTA_BASE_URL: upstreamUrl("TEXTA_BASE_URL"), TEXTA_API_KEY: z.string().optional(),
  TEXTB_BASE_URL: upstreamUrl("TEXTB_BASE_URL"), TEXTB_API_KEY: z.string().optional(),
  TEXTC_BASE_URL: upstreamUrl("TEXTC_BASE_URL"), TEXTC_API_KEY: z.string().optional(),
  IMAGEA_BASE_URL: upstreamUrl("IMAGEA_BASE_URL"), IMAGEA_API_KEY: z.string().optional(),
  IMAGEB_BASE_URL: upstreamUrl("IMAGEB_BASE_URL"), IMAGEB_API_KEY: z.string().optional(),
  SPEECH_BASE_URL: upstreamUrl("SPEECH_BASE_URL"), SPEECH_API_KEY: z.string().optional(),
  UPSTREAM_CONNECT_TIMEOUT_MS: timerMs().default(5_000),
  UPSTREAM_TIMEOUT_MS: timerMs(60_000).default(120_000),
  UPSTREAM_MAX_RETRIES: envNumber((n) => n.int().min(0).max(10)).default(2),
  FLUX_POLL_INTERVAL_MS: timerMs().default(500),
  UPSTREAM_MAX_RESPONSE_BYTES: envNumber((n) => n.int().positive()).default(128 * 1024 * 1024),
}).transform((e) => ({
  providers: {
    textA: { baseUrl: e.TEXTA_BASE_URL, apiKey: e.TEXTA_API_KEY },
    textB: { baseUrl: e.TEXTB_BASE_URL, apiKey: e.TEXTB_API_KEY },
    textC: { baseUrl: e.TEXTC_BASE_URL, apiKey: e.TEXTC_API_KEY },
    imageA: { baseUrl: e.IMAGEA_BASE_URL, apiKey: e.IMAGEA_API_KEY },
    imageB: { baseUrl: e.IMAGEB_BASE_URL, apiKey: e.IMAGEB_API_KEY },
    speech: { baseUrl: e.SPEECH_BASE_URL, apiKey: e.SPEECH_API_KEY },
  } as Record<ProviderName, ProviderEndpoint>,
  upstream: {
    connectTimeoutMs: e.UPSTREAM_CONNECT_TIMEOUT_MS,
    requestTimeoutMs: e.UPSTREAM_TIMEOUT_MS,
    maxRetries: e.UPSTREAM_MAX_RETRIES,
    fluxPollIntervalMs: e.FLUX_POLL_INTERVAL_MS,
    maxResponseBytes: e.UPSTREAM_MAX_RESPONSE_BYTES,
  },
}));

/** The gateway's own rules around a model call: holds, optional upstream moderation, the idempotency replay window. */
const gateway = z.object({
  HOLD_TTL_SECONDS: envNumber((n) => n.int().positive()).default(900),
  MODERATION_UPSTREAM_URL: upstreamUrl("MODERATION_UPSTREAM_URL"),
  MODERATION_UPSTREAM_API_KEY: z.string().optional(),
  MODERATION_UPSTREAM_TIMEOUT_MS: timerMs().default(2_000),
  IDEMPOTENCY_TTL_HOURS: envNumber((n) => n.positive()).default(24),
}).transform((e) => ({
  holdTtlSeconds: e.HOLD_TTL_SECONDS,
  gateway: {
    /** optional OpenAI-compatible moderation endpoint consulted after the local image policy */
    moderationUpstream: e.MODERATION_UPSTREAM_URL
      ? { url: e.MODERATION_UPSTREAM_URL, apiKey: e.MODERATION_UPSTREAM_API_KEY, timeoutMs: e.MODERATION_UPSTREAM_TIMEOUT_MS }
      : undefined,
    /** how long an Idempotency-Key answer is replayed */
    idempotencyTtlSeconds: Math.round(e.IDEMPOTENCY_TTL_HOURS * 3600),
  },
}));

/** Metrics and traces (docs/observability.md). */
const observability = z.object({
  METRICS_TOKEN: z.string().optional(),
  // empty, as unset: tracing off
  OTEL_EXPORTER_OTLP_ENDPOINT: httpUrl("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4318").or(z.literal("")).optional(),
  OTEL_EXPORTER_OTLP_HEADERS: z.string().optional(),
  OTEL_SERVICE_NAME: z.string().optional(),
}).transform((e) => ({
  observability: {
    /** GET /metrics answers only a request bearing this token; unset: the route does not exist (404) */
    metricsToken: e.METRICS_TOKEN || undefined,
    /** OpenTelemetry traces are exported here (OTLP over HTTP) when set; unset: tracing is off */
    otlp: e.OTEL_EXPORTER_OTLP_ENDPOINT
      ? { endpoint: e.OTEL_EXPORTER_OTLP_ENDPOINT.replace(/\/+$/, ""), headers: parseOtlpHeaders(e.OTEL_EXPORTER_OTLP_HEADERS), serviceName: e.OTEL_SERVICE_NAME || "ai-gateway" }
      : undefined,
  },
}));

/**
 * The catalog: CONFIG_FILE's models, plans, credit packages and limits over the defaults, and LIMIT_<NAME> variables
 * over those limits.
 */
const catalog = z.looseObject({ CONFIG_FILE: z.string().optional() })
  .transform((env) => {
    const file = readCatalogFile(env.CONFIG_FILE);
    return { ...file, limits: limitsFromEnv(env, file.limits) };
  });

function readCatalogFile(file: string | undefined): Catalog {
  let json: unknown = {};
  if (file) {
    try {
      json = JSON.parse(readFileSync(file, "utf8"));
    } catch (err) {
      throw new ConfigError(`CONFIG_FILE ${file} could not be read as JSON: ${(err as Error).message}`);
    }
  }
  const parsed = catalogFileSchema.safeParse(json);
  if (!parsed.success) throw new ConfigError(`CONFIG_FILE ${file}: ${z.prettifyError(parsed.error)}`);
  return parsed.data;
}

/**
 * LIMIT_LOGIN_IP=10/3600 overrides limits.loginIp (points per window seconds). A LIMIT_ variable naming no limit
 * (LIMIT_REGISTRATION, LIMIT_LOGINIP) stops the start: it was ignored, so the limit the operator set never applied.
 */
function limitsFromEnv(env: Record<string, unknown>, base: Record<LimitName, LimitRule>): Record<LimitName, LimitRule> {
  const out = { ...base };
  const keyOf = (name: string) => `LIMIT_${name.replace(/[A-Z]/g, (c) => `_${c}`).toUpperCase()}`;
  const known = LIMIT_NAMES.map(keyOf);
  const unknown = Object.keys(env).filter((key) => key.startsWith("LIMIT_") && !known.includes(key));
  if (unknown.length > 0) throw new ConfigError(`${unknown.join(", ")} names no limit; the limits are ${known.join(", ")}`);
  for (const name of LIMIT_NAMES) {
    const key = keyOf(name);
    const raw = env[key];
    if (raw === undefined) continue;
    // both at least 1, as in CONFIG_FILE (0 points would refuse every request; a 0 s window counts nothing)
    const m = typeof raw === "string" ? /^([1-9]\d*)\/([1-9]\d*)$/.exec(raw) : null;
    if (!m) throw new ConfigError(`${key} must look like <points>/<seconds>, both at least 1, e.g. 10/3600`);
    if (Number(m[2]) > MAX_WINDOW_SECONDS) throw new ConfigError(`${key}: the window ${windowTooLong}`);
    // as CONFIG_FILE's int(): a count past 2^53 - 1 is not exact (99999999999999999999 became 1e20, sent as the limit)
    if (!Number.isSafeInteger(Number(m[1]))) throw new ConfigError(`${key}: the points must be at most ${Number.MAX_SAFE_INTEGER}`);
    out[name] = { points: Number(m[1]), duration: Number(m[2]) };
  }
  return out;
}

/** The sections of the environment, in the order their rules are applied. */
export const envSections = [server, storage, accounts, mail, payments, upstreams, gateway, observability, catalog] as const;

/** Every environment variable the settings read by name (besides the LIMIT_* ones): `.env.example` lists them all. */
export const ENV_VARIABLES: readonly string[] = [...new Set(envSections.flatMap((section) => Object.keys(section.in.shape)))];

/** The settings of the gateway, every section's together. */
export type Config = z.output<typeof server> & z.output<typeof storage> & z.output<typeof accounts> & z.output<typeof mail>
  & z.output<typeof payments> & z.output<typeof upstreams> & z.output<typeof gateway> & z.output<typeof observability>
  & z.output<typeof catalog>;
