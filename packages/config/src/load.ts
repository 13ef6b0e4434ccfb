import { randomBytes } from "node:crypto";
import { accessSync, constants, existsSync, linkSync, mkdirSync, readFileSync, statSync, unlinkSync, writeFileSync } from "node:fs";
import { isIP, isIPv4 } from "node:net";
import path from "node:path";
import { z } from "zod";
import {
  DEFAULT_CREDIT_PACKAGES, DEFAULT_LIMITS, DEFAULT_MODELS, DEFAULT_PLANS, IMAGE_A_DEFAULT_VERSION, IMAGE_A_MODEL_ID, MAX_PASSWORD_LENGTH,
  type LimitName, type LimitRule, type ModelDefinition, type ModelType, type Protocol,
} from "./defaults";
import type { Config } from "./schema";

type Env = Record<string, string | undefined>;

const bool = z.enum(["true", "false", "1", "0"]).transform((v) => v === "true" || v === "1");
/**
 * An http(s) URL. `new URL()` also takes "localhost:8080" (scheme "localhost:") and ftp:// or mailto: addresses,
 * which started the server and failed every call that used them ("unreadable answer" from an upstream, broken links).
 */
const httpUrl = (name: string, example: string) =>
  z.url({ protocol: /^https?$/, error: `${name} must be an http:// or https:// URL, e.g. ${example}` });
const upstreamUrl = (name: string) => httpUrl(name, "https://api.example.com").optional();

/**
 * A number. z.coerce.number() alone reads an empty value as 0 (`Number("")`): `PORT=` in an env file started the
 * server on a random port (its mailed links on http://localhost:0), `UPSTREAM_MAX_RETRIES=` turned retries off.
 */
/**
 * A number written in decimal (an exponent allowed). JavaScript's `Number` also reads hexadecimal, octal and binary:
 * PORT=0x50 listened on port 80, a surprise rather than a setting.
 */
const DECIMAL = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:e[+-]?\d+)?$/i;

const envNumber = (rules: (n: z.ZodNumber) => z.ZodNumber = (n) => n) =>
  z.string().trim().min(1, "must be a number, not empty").regex(DECIMAL, "must be a decimal number").transform(Number).pipe(rules(z.number()));

/**
 * Milliseconds that end up in a timer: Node runs a setTimeout longer than 2^31-1 ms after 1 ms instead, so
 * UPSTREAM_TIMEOUT_MS=3000000000 started and timed every upstream call out at once (504 for every request).
 * `headroom` leaves room for what is added to the setting before it is timed (a slot's TTL is the timeout + 60 s).
 */
const MAX_TIMER_MS = 2_147_483_647;
const timerMs = (headroom = 0) => envNumber((n) => n.int().positive()
  .max(MAX_TIMER_MS - headroom, `must be at most ${MAX_TIMER_MS - headroom} ms (about 24 days, Node's longest timer)`));

/** The shortest session secret taken (SESSION_SECRET's rule; iron-session needs 32 characters). */
const SESSION_SECRET_MIN_LENGTH = 32;

const envSchema = z.object({
  NODE_ENV: z.enum(["development", "production", "test"]).default("development"),
  PORT: envNumber((n) => n.int().min(0).max(65535)).default(3000),
  // empty listened on every interface, whatever the operator meant
  HOST: z.string().trim().min(1, "must be an address or host name, not empty").default("0.0.0.0"),
  PUBLIC_URL: httpUrl("PUBLIC_URL", "https://gateway.example.com").optional(),
  DATA_DIR: z.string().min(1).default(".data"),
  MONGODB_URI: z.string().min(1).optional(),
  FERRETDB_BIN: z.string().optional(),
  SESSION_SECRET: z.string().min(SESSION_SECRET_MIN_LENGTH, `SESSION_SECRET must be at least ${SESSION_SECRET_MIN_LENGTH} characters`).optional(),
  // a session's expiry is a date: SESSION_TTL_DAYS=1000000000 started and every login answered 500 (no such date)
  SESSION_TTL_DAYS: envNumber((n) => n.positive().max(3650, "must be at most 3650 days (ten years)")).default(7),
  SESSION_MAX_DAYS: envNumber((n) => n.positive().max(3650, "must be at most 3650 days (ten years)")).default(30),
  COOKIE_SECURE: bool.default(true),
  // nodemailer reads only smtp(s):// strings as a connection URL; any other string it takes for a transport object
  SMTP_URL: z.url({ protocol: /^smtps?$/, error: "SMTP_URL must be an smtp:// or smtps:// URL, e.g. smtps://user:pass@smtp.example.com" }).optional(),
  // nodemailer sends a From without an address ("AI Gateway") with an empty envelope sender (MAIL FROM:<>)
  MAIL_FROM: z.string().regex(/^(?:[^<>]*<\s*[^\s<>@]+@[^\s<>@]+\s*>|\s*[^\s<>@]+@[^\s<>@]+\s*)$/, "MAIL_FROM must be an e-mail address, alone or as Name <address>, e.g. AI Gateway <no-reply@example.com>")
    .default("AI Gateway <no-reply@localhost>"),
  // ioredis reads any other string as a host name, so a typo ran on the Redis-down fallback with only warnings to show
  REDIS_URL: z.url({ protocol: /^rediss?$/, error: "REDIS_URL must be a redis:// or rediss:// URL, e.g. redis://127.0.0.1:6379" }).optional(),
  TRUST_PROXY: z.string().optional(),
  API_CORS_ORIGINS: z.string().default("*"),
  CHECKOUT_ALLOWED_ORIGINS: z.string().default(""),
  KEY_ENV: z.string().regex(/^[a-z0-9]{1,16}$/, "KEY_ENV must be 1-16 lower-case letters or digits").default("live"),
  LOG_LEVEL: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).optional(),
  CONFIG_FILE: z.string().optional(),
  GOOGLE_CLIENT_ID: z.string().optional(),
  GOOGLE_CLIENT_SECRET: z.string().optional(),
  GOOGLE_AUTHORIZE_URL: httpUrl("GOOGLE_AUTHORIZE_URL", "https://accounts.google.com/o/oauth2/v2/auth").default("https://accounts.google.com/o/oauth2/v2/auth"),
  GOOGLE_TOKEN_URL: httpUrl("GOOGLE_TOKEN_URL", "https://oauth2.googleapis.com/token").default("https://oauth2.googleapis.com/token"),
  GOOGLE_USERINFO_URL: httpUrl("GOOGLE_USERINFO_URL", "https://openidconnect.googleapis.com/v1/userinfo").default("https://openidconnect.googleapis.com/v1/userinfo"),
  GITHUB_CLIENT_ID: z.string().optional(),
  GITHUB_CLIENT_SECRET: z.string().optional(),
  GITHUB_AUTHORIZE_URL: httpUrl("GITHUB_AUTHORIZE_URL", "https://github.com/login/oauth/authorize").default("https://github.com/login/oauth/authorize"),
  GITHUB_TOKEN_URL: httpUrl("GITHUB_TOKEN_URL", "https://github.com/login/oauth/access_token").default("https://github.com/login/oauth/access_token"),
  GITHUB_API_URL: httpUrl("GITHUB_API_URL", "https://api.github.com").default("https://api.github.com"),
  // Stripe's keys by their prefixes: swapped keys started, and the publishable key is sent to every browser
  // (GET /api/billing/config), so a secret key put there was given away; a publishable one as the secret failed every call.
  // Empty is no key of the wrong kind: like the publishable key's, it leaves billing (or the webhook) unconfigured, as unset.
  STRIPE_SECRET_KEY: z.string().regex(/^(?:$|sk_|rk_)/, "STRIPE_SECRET_KEY must be a secret or restricted key (sk_... or rk_...)").optional(),
  STRIPE_PUBLISHABLE_KEY: z.string().regex(/^(?:$|pk_)/, "STRIPE_PUBLISHABLE_KEY must be a publishable key (pk_...), never the secret one").default(""),
  STRIPE_WEBHOOK_SECRET: z.string().regex(/^(?:$|whsec_)/, "STRIPE_WEBHOOK_SECRET must be the endpoint's signing secret (whsec_...)").optional(),
  STRIPE_API_BASE: httpUrl("STRIPE_API_BASE", "http://127.0.0.1:12111").optional(),
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
  HOLD_TTL_SECONDS: envNumber((n) => n.int().positive()).default(900),
  // longer passwords are refused (MAX_PASSWORD_LENGTH): a larger minimum refused every sign-up
  PASSWORD_MIN_LENGTH: envNumber((n) => n.int().min(8).max(MAX_PASSWORD_LENGTH, `must be at most ${MAX_PASSWORD_LENGTH}, the longest password taken`)).default(8),
  JSON_BODY_LIMIT_BYTES: envNumber((n) => n.int().positive()).default(1024 * 1024),
  AUDIO_UPLOAD_LIMIT_BYTES: envNumber((n) => n.int().positive()).default(25 * 1024 * 1024),
  BODY_IDLE_TIMEOUT_MS: timerMs().default(30_000),
  BODY_TIMEOUT_MS: timerMs().default(60_000),
  // gateway: optional upstream moderation, usage write batching, idempotency replay window
  MODERATION_UPSTREAM_URL: upstreamUrl("MODERATION_UPSTREAM_URL"),
  MODERATION_UPSTREAM_API_KEY: z.string().optional(),
  MODERATION_UPSTREAM_TIMEOUT_MS: timerMs().default(2_000),
  IDEMPOTENCY_TTL_HOURS: envNumber((n) => n.positive()).default(24),
  // process: how far V8 lets the old generation grow past the live heap before a full collection (0: V8 decides)
  HEAP_GROWING_PERCENT: envNumber((n) => n.int().min(0).max(400)).default(50),
  // observability (docs/observability.md): GET /metrics exists only with a token; traces only with an OTLP endpoint
  METRICS_TOKEN: z.string().optional(),
  // empty, as unset: tracing off
  OTEL_EXPORTER_OTLP_ENDPOINT: httpUrl("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4318").or(z.literal("")).optional(),
  OTEL_EXPORTER_OTLP_HEADERS: z.string().optional(),
  OTEL_SERVICE_NAME: z.string().optional(),
  // operator console (CONTRACT 12): the verified accounts with these e-mails are admins
  ADMIN_EMAILS: z.string().default(""),
});

/** Every environment variable the settings read by name (besides the LIMIT_* ones): `.env.example` lists them all. */
export const ENV_VARIABLES: readonly string[] = Object.keys(envSchema.shape);

/**
 * A limit's window (seconds) is a timer in the in-memory limiter (rate-limiter-flexible, also Redis's fallback): a
 * window past Node's longest timer (LIMIT_LOGIN_IP=10/3000000) forgot every count after 1 ms, so nothing was limited.
 */
const MAX_WINDOW_SECONDS = Math.floor(MAX_TIMER_MS / 1000);
const windowTooLong = `must be at most ${MAX_WINDOW_SECONDS} seconds (about 24 days, Node's longest timer)`;
const limitRule = z.object({ points: z.number().int().positive(), duration: z.number().int().positive().max(MAX_WINDOW_SECONDS, windowTooLong) });

/**
 * OTEL_EXPORTER_OTLP_HEADERS as the OpenTelemetry specification writes it: `key=value` pairs separated by commas,
 * values percent-encoded (`Authorization=Bearer%20abc`).
 */
function parseOtlpHeaders(raw: string | undefined): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const pair of (raw ?? "").split(",")) {
    const at = pair.indexOf("=");
    if (at <= 0) continue;
    const value = pair.slice(at + 1).trim();
    try {
      headers[pair.slice(0, at).trim()] = decodeURIComponent(value);
    } catch {
      headers[pair.slice(0, at).trim()] = value;
    }
  }
  return headers;
}

const VERSION = /^[A-Za-z0-9._-]{1,32}$/;

/** Image endpoint A's versions: version -> upstream model name, the default version always among them. */
const modelVersions = z.record(z.string(), z.string().min(1, "the upstream model name must not be empty"))
  .superRefine((versions, ctx) => {
    for (const version of Object.keys(versions)) {
      if (!VERSION.test(version)) ctx.addIssue({ code: "custom", path: [version], message: "a version is 1-32 letters, digits, '.', '_' or '-'" });
    }
    if (!Object.hasOwn(versions, IMAGE_A_DEFAULT_VERSION)) {
      ctx.addIssue({ code: "custom", message: `must map version "${IMAGE_A_DEFAULT_VERSION}", the one requests get by default (SPEC 4.2)` });
    }
  });

/** Prices are integer micro-dollars (1 USD = 1,000,000): dollars written here (0.001) charged about nothing. */
const micros = z.number().int("must be whole micro-dollars (1 USD = 1000000)").min(0);
const modelPricing = z.strictObject({
  inputPer1k: micros.optional(), outputPer1k: micros.optional(), imageStandard: micros.optional(),
  imageHighRes: micros.optional(), per1kChars: micros.optional(), perMinute: micros.optional(),
});

/** The adapters a model of each type can be served by. */
const PROTOCOLS_OF_TYPE: Record<ModelType, Protocol[]> = {
  text: ["openai", "anthropic"], embedding: ["openai"], image: ["flux", "openai-images"], speech: ["elevenlabs"],
};

/**
 * One catalog entry, checked field by field: a missing or misspelt field was kept as it was and read only by a
 * request (no pricing: GET /v1/models answered 500 for every model; "inputPer1K": the input was free).
 */
const modelEntry = z.strictObject({
  id: z.string().min(1),
  type: z.enum(["text", "embedding", "image", "speech"]),
  provider: z.enum(["textA", "textB", "textC", "imageA", "imageB", "speech"]),
  protocol: z.enum(["openai", "anthropic", "flux", "elevenlabs", "openai-images"]),
  upstreamModel: z.string().min(1).optional(),
  versions: modelVersions.optional(),
  contextWindow: z.number().int().positive().optional(),
  maxOutputTokens: z.number().int().positive().optional(),
  pricing: modelPricing,
  ownedBy: z.string().min(1),
  // CONTRACT 4: base URL and key per model, over the provider's from the environment
  baseUrl: z.url({ protocol: /^https?$/, error: "must be an http:// or https:// URL, e.g. https://api.example.com" }).optional(),
  apiKey: z.string().min(1).optional(),
})
  .refine((m) => m.versions === undefined || m.id === IMAGE_A_MODEL_ID, {
    message: `versions are read only for the ${IMAGE_A_MODEL_ID} model (image endpoint A)`, path: ["versions"],
  })
  .refine((m) => PROTOCOLS_OF_TYPE[m.type].includes(m.protocol), {
    message: "this protocol cannot serve a model of this type", path: ["protocol"],
  });

/** CONTRACT 13: one upstream of a model; its id is named in usage records and /api/status/external. */
const deploymentEntry = z.strictObject({
  id: z.string().regex(/^[A-Za-z0-9._:-]{1,64}$/, "a deployment id is 1-64 letters, digits, '.', '_', ':' or '-'"),
  baseUrl: z.url({ protocol: /^https?$/, error: "must be an http:// or https:// URL, e.g. https://api.example.com" }),
  apiKey: z.string().default(""),
  weight: z.number().positive().default(1),
  upstreamModel: z.string().min(1).optional(),
  requestsPerMinute: z.number().int().positive().optional(),
});

const deploymentList = z.array(deploymentEntry).min(1, "list at least one deployment, or leave deployments out").superRefine((deployments, ctx) => {
  const seen = new Set<string>();
  deployments.forEach((d, i) => {
    if (seen.has(d.id)) ctx.addIssue({ code: "custom", path: [i, "id"], message: `the deployment id ${JSON.stringify(d.id)} is already taken in this model` });
    seen.add(d.id);
  });
});

/** A complete catalog entry: a model the defaults do not have, or a default with a patch applied. */
const modelDefinition = modelEntry.safeExtend({
  deployments: deploymentList.optional(),
  fallbacks: z.array(z.string().min(1)).optional(),
}).refine((m) => m.deployments === undefined || (m.baseUrl === undefined && m.apiKey === undefined), {
  message: "set either baseUrl/apiKey or deployments (each deployment has its own)", path: ["deployments"],
});

/** A CONFIG_FILE `models` entry before it is read: a patch of the default with its id, a new model, or a removal. */
const modelPatch = z.looseObject({ id: z.string().min(1), remove: z.literal(true).optional() });

/**
 * CONFIG_FILE `models` patch the defaults by id (CONTRACT 13): an entry whose id is a default's changes only the
 * fields it names; `{"id": …, "remove": true}` drops that model; any other id adds a complete model. A list of every
 * default, complete (the format before patches), gives the same catalog it always did. Errors name the file's entry.
 */
export function mergeModels(defaults: readonly ModelDefinition[], entries: readonly z.infer<typeof modelPatch>[], ctx: z.RefinementCtx): ModelDefinition[] {
  const catalog = new Map(defaults.map((m) => [m.id, m]));
  const entryOf = new Map<string, number>();
  entries.forEach((entry, i) => {
    if (entryOf.has(entry.id)) {
      ctx.addIssue({ code: "custom", path: [i, "id"], message: `the id ${JSON.stringify(entry.id)} is already taken by an earlier entry` });
      return;
    }
    entryOf.set(entry.id, i);
    if (entry.remove) {
      if (!catalog.has(entry.id)) ctx.addIssue({ code: "custom", path: [i, "id"], message: `there is no model ${JSON.stringify(entry.id)} to remove` });
      else if (Object.keys(entry).length > 2) ctx.addIssue({ code: "custom", path: [i], message: "an entry with \"remove\": true has only its id" });
      catalog.delete(entry.id);
      return;
    }
    const base = catalog.get(entry.id);
    const parsed = modelDefinition.safeParse(base ? { ...base, ...entry } : entry);
    if (!parsed.success) {
      for (const issue of parsed.error.issues) ctx.addIssue({ code: "custom", path: [i, ...issue.path], message: issue.message });
      return;
    }
    catalog.set(entry.id, parsed.data);
  });
  const models = [...catalog.values()];
  for (const model of models) {
    const at = entryOf.get(model.id);
    const path = at === undefined ? [] : [at, "fallbacks"];
    const seen = new Set<string>();
    for (const id of model.fallbacks ?? []) {
      const fallback = catalog.get(id);
      const wrong = id === model.id ? "a model cannot fall back on itself"
        : seen.has(id) ? `${JSON.stringify(id)} is listed twice`
          : !fallback ? `${JSON.stringify(id)} is no model of the catalog`
            : fallback.type !== model.type ? `${JSON.stringify(id)} serves ${fallback.type}, not ${model.type}` : undefined;
      if (wrong) ctx.addIssue({ code: "custom", path, message: `fallbacks of ${JSON.stringify(model.id)}: ${wrong}` });
      seen.add(id);
    }
  }
  return models;
}

const modelEntries = z.array(modelPatch).transform((entries, ctx) => mergeModels(DEFAULT_MODELS, entries, ctx));

/**
 * Dollars a checkout charges: whole cents (tolerating float noise like 19.99), as a purchase's amount is read. A
 * package of 9.999 started, and every purchase of it was refused 400 'must have at most two decimals'.
 */
const cents = (n: number) => Math.abs(n * 100 - Math.round(n * 100)) <= 1e-6;
const dollars = () => z.number().min(0).refine(cents, "must be whole cents (at most two decimals), e.g. 9.99");

/**
 * One plan, checked field by field like a model: a plan without `requestsPerMinute` (or with "600") started, and its
 * subscribers were never limited (`n > undefined` is false) while every answer said `X-RateLimit-Limit: undefined`.
 */
const planEntry = z.strictObject({
  id: z.string().min(1),
  name: z.string().min(1),
  price: dollars(),
  currency: z.string().regex(/^[a-z]{3}$/, "must be a three-letter ISO currency code in lower case, e.g. usd"),
  interval: z.literal("month"),
  features: z.array(z.string()),
  monthlyCreditsMicros: z.number().int("must be whole micro-dollars (1 USD = 1000000)").min(0),
  requestsPerMinute: z.number().int().positive(),
  concurrentRequests: z.number().int().positive(),
  stripePriceId: z.string().min(1).optional(),
});

/** Plan ids are what clients send as plan_id: a second plan with the same id could never be chosen. */
const planEntries = z.array(planEntry).superRefine((plans, ctx) => {
  const seen = new Set<string>();
  plans.forEach((p, i) => {
    if (seen.has(p.id)) ctx.addIssue({ code: "custom", path: [i, "id"], message: `the id ${JSON.stringify(p.id)} is already taken by an earlier plan` });
    seen.add(p.id);
  });
});

const creditPackageEntries = z.array(z.object({ amount: dollars().positive(), bonus: dollars(), total: z.number().positive() })
  .refine((p) => Math.abs(p.amount + p.bonus - p.total) < 1e-9, { message: "total must be amount + bonus, what a purchase of amount grants", path: ["total"] }));

/**
 * The catalog edited at run time (operator console) is checked by the rules CONFIG_FILE is: model entries patch
 * `current` by id exactly as the file's patch the defaults; plans and credit packages are whole lists.
 */
export const catalogSchemas = {
  modelPatches: (current: readonly ModelDefinition[]) => z.array(modelPatch).transform((entries, ctx) => mergeModels(current, entries, ctx)),
  plans: planEntries,
  creditPackages: creditPackageEntries,
};

/** Shape of CONFIG_FILE (JSON); every key optional; `models` patches the defaults by id, the others replace them wholesale. */
const fileSchema = z.object({
  models: modelEntries.optional(),
  plans: planEntries.optional(),
  // a purchase grants amount + bonus (the bonus its own ledger entry); `total` is only shown, so it must say that sum
  creditPackages: creditPackageEntries.optional(),
  // a name that is no limit ("loginIP") was kept and never read: the limit the operator meant stayed at its default
  limits: z.partialRecord(z.enum(Object.keys(DEFAULT_LIMITS) as [LimitName, ...LimitName[]]), limitRule).optional(),
}).strict();

export class ConfigError extends Error {}

/** The names Express's `trust proxy` (proxy-addr) accepts in place of addresses. */
const PROXY_NAMES = new Set(["loopback", "linklocal", "uniquelocal"]);

/** One entry of a `trust proxy` list: a name, an address, or a subnet (`ip/bits` or IPv4 `ip/netmask`). */
function isProxyEntry(entry: string): boolean {
  if (PROXY_NAMES.has(entry)) return true;
  const [address = "", range, ...rest] = entry.split("/");
  const family = isIP(address);
  if (family === 0 || rest.length > 0) return false;
  if (range === undefined) return true;
  if (/^\d+$/.test(range)) return Number(range) <= (family === 4 ? 32 : 128);
  return family === 4 && isIPv4(range);
}

function parseTrustProxy(raw: string | undefined): boolean | number | string {
  if (raw === undefined || raw === "" || raw === "false") return false;
  if (raw === "true") return true;
  if (/^\d+$/.test(raw)) return Number(raw);
  // Checked here so that a bad list stops the start naming the variable, rather than Express's bare
  // "invalid IP address" when the app is built.
  if (!raw.split(",").every((entry) => isProxyEntry(entry.trim()))) {
    throw new ConfigError(`TRUST_PROXY must be true, false, a hop count or a comma-separated list of proxy addresses, subnets (ip/bits) or loopback, linklocal, uniquelocal; got "${raw}"`);
  }
  return raw;
}

/**
 * API_CORS_ORIGINS: `*`, empty (CORS off) or a comma-separated list of origins. An entry is kept as its origin
 * (`https://App.example.com:443` is `https://app.example.com`), as browsers send it; one with a path, query or
 * credentials stops the start rather than never matching.
 */
function parseCorsOrigins(raw: string): "*" | string[] {
  const trimmed = raw.trim();
  if (trimmed === "*") return "*";
  if (trimmed === "") return [];
  return parseOrigins("API_CORS_ORIGINS", trimmed, "*, empty (CORS off) or ");
}

/** A comma-separated list of origins (scheme, host, optional port), each as `URL.origin` spells it. */
function parseOrigins(name: string, raw: string, alternatives = ""): string[] {
  if (raw.trim() === "") return [];
  return raw.split(",").map((entry) => {
    const url = URL.parse(entry.trim());
    if (!url || !/^https?:$/.test(url.protocol) || url.pathname !== "/" || url.search || url.hash || url.username || url.password) {
      throw new ConfigError(`${name} must be ${alternatives}a comma-separated list of origins such as https://app.example.com (scheme, host, optional port); got "${entry.trim()}"`);
    }
    return url.origin;
  });
}

/**
 * LIMIT_LOGIN_IP=10/3600 overrides limits.loginIp (points per window seconds). A LIMIT_ variable naming no limit
 * (LIMIT_REGISTRATION, LIMIT_LOGINIP) stops the start: it was ignored, so the limit the operator set never applied.
 */
function limitsFromEnv(env: Env, base: Record<LimitName, LimitRule>): Record<LimitName, LimitRule> {
  const out = { ...base };
  const keyOf = (name: string) => `LIMIT_${name.replace(/[A-Z]/g, (c) => `_${c}`).toUpperCase()}`;
  const known = Object.keys(base).map(keyOf);
  const unknown = Object.keys(env).filter((key) => key.startsWith("LIMIT_") && !known.includes(key));
  if (unknown.length > 0) throw new ConfigError(`${unknown.join(", ")} names no limit; the limits are ${known.join(", ")}`);
  for (const name of Object.keys(base) as LimitName[]) {
    const key = keyOf(name);
    const raw = env[key];
    if (raw === undefined) continue;
    // both at least 1, as in CONFIG_FILE (0 points would refuse every request; a 0 s window counts nothing)
    const m = /^([1-9]\d*)\/([1-9]\d*)$/.exec(raw);
    if (!m) throw new ConfigError(`${key} must look like <points>/<seconds>, both at least 1, e.g. 10/3600`);
    if (Number(m[2]) > MAX_WINDOW_SECONDS) throw new ConfigError(`${key}: the window ${windowTooLong}`);
    // as CONFIG_FILE's int(): a count past 2^53 - 1 is not exact (99999999999999999999 became 1e20, sent as the limit)
    if (!Number.isSafeInteger(Number(m[1]))) throw new ConfigError(`${key}: the points must be at most ${Number.MAX_SAFE_INTEGER}`);
    out[name] = { points: Number(m[1]), duration: Number(m[2]) };
  }
  return out;
}

function readConfigFile(file: string | undefined): z.infer<typeof fileSchema> {
  if (!file) return {};
  let json: unknown;
  try {
    json = JSON.parse(readFileSync(file, "utf8"));
  } catch (err) {
    throw new ConfigError(`CONFIG_FILE ${file} could not be read as JSON: ${(err as Error).message}`);
  }
  const parsed = fileSchema.safeParse(json);
  if (!parsed.success) throw new ConfigError(`CONFIG_FILE ${file}: ${z.prettifyError(parsed.error)}`);
  return parsed.data;
}

/**
 * DATA_DIR is created when first written to (session secret, database, outbox): the nearest path that exists at or
 * above it must be a directory this user may write in. Checked here, without creating anything, so that a file in the way is named as
 * DATA_DIR rather than as a bare mkdir error from wherever it is first written.
 */
function checkDataDir(dataDir: string): void {
  let existing = dataDir;
  while (!existsSync(existing)) existing = path.dirname(existing);
  if (!statSync(existing).isDirectory()) {
    throw new ConfigError(`DATA_DIR ${dataDir} cannot be used as a directory: ${existing} is a file`);
  }
  // a directory the server may not write to (or create DATA_DIR in) failed later as a bare EACCES naming no setting
  try {
    accessSync(existing, constants.W_OK | constants.X_OK);
  } catch {
    throw new ConfigError(`DATA_DIR ${dataDir} is not writable: ${existing} does not allow this user to write in it`);
  }
}

/**
 * Development convenience: a generated secret kept under DATA_DIR so sessions survive restarts. It is written whole
 * under another name and linked in place, so that two servers starting on one fresh DATA_DIR keep the same secret
 * (the second one's overwrote the first's, whose sessions the second then refused) and neither reads a half-written
 * file. A file too short to be a secret (empty) stops the start: every login sealed its session with it and was a 500.
 */
function developmentSecret(dataDir: string): string {
  const file = path.join(dataDir, "session-secret");
  if (!existsSync(file)) {
    mkdirSync(dataDir, { recursive: true });
    const draft = `${file}.${process.pid}-${randomBytes(4).toString("hex")}`;
    writeFileSync(draft, randomBytes(32).toString("hex"), { mode: 0o600 });
    try {
      linkSync(draft, file);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
    } finally {
      unlinkSync(draft);
    }
  }
  const secret = readFileSync(file, "utf8").trim();
  if (secret.length < SESSION_SECRET_MIN_LENGTH) {
    throw new ConfigError(`SESSION_SECRET is unset and ${file} holds ${secret.length} characters, fewer than the ${SESSION_SECRET_MIN_LENGTH} a session secret needs: delete that file (a new secret is generated) or set SESSION_SECRET`);
  }
  return secret;
}

/** ADMIN_EMAILS: comma-separated, trimmed and lower-cased (accounts are matched by their normalized e-mail). */
function parseAdminEmails(raw: string): string[] {
  return raw.split(",").map((email) => email.trim().normalize("NFC").toLowerCase()).filter((email) => email.length > 0);
}

/** Reads and validates every setting. The only place in the codebase that reads process.env. */
export function loadConfig(env: Env = process.env, overrides: Partial<Config> = {}): Config {
  const parsed = envSchema.safeParse(env);
  if (!parsed.success) throw new ConfigError(`Invalid environment: ${z.prettifyError(parsed.error)}`);
  const e = parsed.data;
  const file = readConfigFile(e.CONFIG_FILE);
  // the default PUBLIC_URL names PORT: with 0 (a free port picked at listen) links and the CSRF origin were localhost:0
  if (e.PORT === 0 && e.PUBLIC_URL === undefined) {
    throw new ConfigError("PORT=0 (a free port picked at start) needs PUBLIC_URL: mailed links and the CSRF origin check name the gateway's address");
  }
  const dataDir = path.resolve(e.DATA_DIR);
  checkDataDir(dataDir);
  let sessionSecret = e.SESSION_SECRET;
  if (!sessionSecret && overrides.sessionSecret === undefined) {
    if (e.NODE_ENV === "production") throw new ConfigError("SESSION_SECRET is required in production");
    sessionSecret = developmentSecret(dataDir);
  }
  const publicUrl = (e.PUBLIC_URL ?? `http://localhost:${e.PORT}`).replace(/\/$/, "");
  const config: Config = {
    nodeEnv: e.NODE_ENV,
    // CONTRACT 1: "only when NODE_ENV=development"; the unset default runs like development but shows no debug
    errorDebug: env.NODE_ENV === "development",
    port: e.PORT,
    host: e.HOST,
    publicUrl,
    dataDir,
    mongodbUri: e.MONGODB_URI,
    ferretdbBin: e.FERRETDB_BIN,
    sessionSecret: sessionSecret ?? "",
    sessionTtlDays: e.SESSION_TTL_DAYS,
    sessionMaxDays: e.SESSION_MAX_DAYS,
    cookieSecure: e.COOKIE_SECURE,
    smtpUrl: e.SMTP_URL,
    mailFrom: e.MAIL_FROM,
    redisUrl: e.REDIS_URL,
    trustProxy: parseTrustProxy(e.TRUST_PROXY),
    apiCorsOrigins: parseCorsOrigins(e.API_CORS_ORIGINS),
    checkoutAllowedOrigins: [...new Set([new URL(publicUrl).origin, ...parseOrigins("CHECKOUT_ALLOWED_ORIGINS", e.CHECKOUT_ALLOWED_ORIGINS)])],
    keyEnv: e.KEY_ENV,
    logLevel: e.LOG_LEVEL ?? (e.NODE_ENV === "test" ? "silent" : "info"),
    oauth: {
      google: { clientId: e.GOOGLE_CLIENT_ID, clientSecret: e.GOOGLE_CLIENT_SECRET, authorizeUrl: e.GOOGLE_AUTHORIZE_URL, tokenUrl: e.GOOGLE_TOKEN_URL, apiUrl: e.GOOGLE_USERINFO_URL },
      github: { clientId: e.GITHUB_CLIENT_ID, clientSecret: e.GITHUB_CLIENT_SECRET, authorizeUrl: e.GITHUB_AUTHORIZE_URL, tokenUrl: e.GITHUB_TOKEN_URL, apiUrl: e.GITHUB_API_URL },
    },
    stripe: { secretKey: e.STRIPE_SECRET_KEY, publishableKey: e.STRIPE_PUBLISHABLE_KEY, webhookSecret: e.STRIPE_WEBHOOK_SECRET, apiBase: e.STRIPE_API_BASE },
    providers: {
      textA: { baseUrl: e.TEXTA_BASE_URL, apiKey: e.TEXTA_API_KEY },
      textB: { baseUrl: e.TEXTB_BASE_URL, apiKey: e.TEXTB_API_KEY },
      textC: { baseUrl: e.TEXTC_BASE_URL, apiKey: e.TEXTC_API_KEY },
      imageA: { baseUrl: e.IMAGEA_BASE_URL, apiKey: e.IMAGEA_API_KEY },
      imageB: { baseUrl: e.IMAGEB_BASE_URL, apiKey: e.IMAGEB_API_KEY },
      speech: { baseUrl: e.SPEECH_BASE_URL, apiKey: e.SPEECH_API_KEY },
    },
    upstream: {
      connectTimeoutMs: e.UPSTREAM_CONNECT_TIMEOUT_MS,
      requestTimeoutMs: e.UPSTREAM_TIMEOUT_MS,
      maxRetries: e.UPSTREAM_MAX_RETRIES,
      fluxPollIntervalMs: e.FLUX_POLL_INTERVAL_MS,
      maxResponseBytes: e.UPSTREAM_MAX_RESPONSE_BYTES,
    },
    holdTtlSeconds: e.HOLD_TTL_SECONDS,
    models: file.models ?? DEFAULT_MODELS,
    plans: file.plans ?? DEFAULT_PLANS,
    creditPackages: file.creditPackages ?? DEFAULT_CREDIT_PACKAGES,
    limits: limitsFromEnv(env, { ...DEFAULT_LIMITS, ...(file.limits as Partial<Record<LimitName, LimitRule>> | undefined) }),
    passwordMinLength: e.PASSWORD_MIN_LENGTH,
    jsonBodyLimitBytes: e.JSON_BODY_LIMIT_BYTES,
    audioUploadLimitBytes: e.AUDIO_UPLOAD_LIMIT_BYTES,
    bodyIdleTimeoutMs: e.BODY_IDLE_TIMEOUT_MS,
    bodyTimeoutMs: e.BODY_TIMEOUT_MS,
    gateway: {
      moderationUpstream: e.MODERATION_UPSTREAM_URL
        ? { url: e.MODERATION_UPSTREAM_URL, apiKey: e.MODERATION_UPSTREAM_API_KEY, timeoutMs: e.MODERATION_UPSTREAM_TIMEOUT_MS }
        : undefined,
      idempotencyTtlSeconds: Math.round(e.IDEMPOTENCY_TTL_HOURS * 3600),
    },
    heapGrowingPercent: e.HEAP_GROWING_PERCENT,
    observability: {
      metricsToken: e.METRICS_TOKEN || undefined,
      otlp: e.OTEL_EXPORTER_OTLP_ENDPOINT
        ? { endpoint: e.OTEL_EXPORTER_OTLP_ENDPOINT.replace(/\/+$/, ""), headers: parseOtlpHeaders(e.OTEL_EXPORTER_OTLP_HEADERS), serviceName: e.OTEL_SERVICE_NAME || "ai-gateway" }
        : undefined,
    },
    adminEmails: parseAdminEmails(e.ADMIN_EMAILS),
    ...overrides,
  };
  return config;
}
