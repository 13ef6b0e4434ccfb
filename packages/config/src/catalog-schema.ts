// The catalog's shapes: models, plans, credit packages and limits, as CONFIG_FILE and the operator console write them.
// Each type of the catalog is inferred from its schema here; the default catalog is data (defaults.ts).
import { z } from "zod";
import { DEFAULT_CREDIT_PACKAGES, DEFAULT_LIMITS, DEFAULT_MODELS, DEFAULT_PLANS, IMAGE_A_DEFAULT_VERSION, IMAGE_A_MODEL_ID } from "./defaults";
import { MAX_WINDOW_SECONDS, windowTooLong } from "./env-values";

const modelTypes = z.enum(["text", "embedding", "image", "speech"]);
const providerNames = z.enum(["textA", "textB", "textC", "imageA", "imageB", "speech"]);
const protocols = z.enum(["openai", "anthropic", "flux", "elevenlabs", "openai-images"]);
export type ModelType = z.infer<typeof modelTypes>;
export type ProviderName = z.infer<typeof providerNames>;
export type Protocol = z.infer<typeof protocols>;

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
  /** micro-dollars per 1000 input tokens */
  inputPer1k: micros.optional(),
  /** micro-dollars per 1000 output tokens */
  outputPer1k: micros.optional(),
  /** micro-dollars per image up to 1024x1024 */
  imageStandard: micros.optional(),
  /** micro-dollars per image above 1024x1024 */
  imageHighRes: micros.optional(),
  /** micro-dollars per 1000 characters (text-to-speech) */
  per1kChars: micros.optional(),
  /** micro-dollars per minute of audio (speech-to-text and speech-to-speech input, billed per started second) */
  perMinute: micros.optional(),
});
export type ModelPricing = z.output<typeof modelPricing>;

/** The adapters a model of each type can be served by. */
const PROTOCOLS_OF_TYPE: Record<ModelType, Protocol[]> = {
  text: ["openai", "anthropic"], embedding: ["openai"], image: ["flux", "openai-images"], speech: ["elevenlabs"],
};

const baseUrl = z.url({ protocol: /^https?$/, error: "must be an http:// or https:// URL, e.g. https://api.example.com" });

/**
 * One catalog entry, checked field by field: a missing or misspelt field was kept as it was and read only by a
 * request (no pricing: GET /v1/models answered 500 for every model; "inputPer1K": the input was free).
 */
const modelEntry = z.strictObject({
  id: z.string().min(1),
  type: modelTypes,
  provider: providerNames,
  protocol: protocols,
  /** name sent upstream; defaults to id */
  upstreamModel: z.string().min(1).optional(),
  /**
   * Image endpoint A only (SPEC 4.2 `model`): upstream model name per version a request may name.
   * Default: `{"5": upstreamModel ?? id}`; must map the default version.
   */
  versions: modelVersions.optional(),
  contextWindow: z.number().int().positive().optional(),
  /** largest completion the model may produce; the worst case held before a text call */
  maxOutputTokens: z.number().int().positive().optional(),
  pricing: modelPricing,
  ownedBy: z.string().min(1),
  /** this model's own upstream root, in place of its provider's base URL (CONTRACT 4, CONFIG_FILE only) */
  baseUrl: baseUrl.optional(),
  /** this model's own upstream key: in place of its provider's key, and the only key sent to its own `baseUrl` */
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
  /** unique within its model */
  id: z.string().regex(/^[A-Za-z0-9._:-]{1,64}$/, "a deployment id is 1-64 letters, digits, '.', '_', ':' or '-'"),
  baseUrl,
  apiKey: z.string().default(""),
  /** relative share of the requests (any positive number) */
  weight: z.number().positive().default(1),
  /** name sent upstream; default: the model's `upstreamModel`, else its id */
  upstreamModel: z.string().min(1).optional(),
  /** the most requests this deployment is sent per minute; at it, it is skipped like a cooling one */
  requestsPerMinute: z.number().int().positive().optional(),
});
export type DeploymentDefinition = z.output<typeof deploymentEntry>;

const deploymentList = z.array(deploymentEntry).min(1, "list at least one deployment, or leave deployments out").superRefine((deployments, ctx) => {
  const seen = new Set<string>();
  deployments.forEach((d, i) => {
    if (seen.has(d.id)) ctx.addIssue({ code: "custom", path: [i, "id"], message: `the deployment id ${JSON.stringify(d.id)} is already taken in this model` });
    seen.add(d.id);
  });
});

/** A complete catalog entry: a model the defaults do not have, or a default with a patch applied. */
const modelDefinition = modelEntry.safeExtend({
  /**
   * CONTRACT 13: the upstreams that serve this model, chosen by weight among the healthy ones. Unset: one, from
   * `baseUrl`/`apiKey`, else from its provider's environment.
   */
  deployments: deploymentList.optional(),
  /** CONTRACT 13: model ids tried in order when every deployment of this one failed */
  fallbacks: z.array(z.string().min(1)).optional(),
}).refine((m) => m.deployments === undefined || (m.baseUrl === undefined && m.apiKey === undefined), {
  message: "set either baseUrl/apiKey or deployments (each deployment has its own)", path: ["deployments"],
});
export type ModelDefinition = z.output<typeof modelDefinition>;

/** A CONFIG_FILE `models` entry before it is read: a patch of the default with its id, a new model, or a removal. */
const modelPatch = z.looseObject({ id: z.string().min(1), remove: z.literal(true).optional() });

/**
 * CONFIG_FILE `models` patch the defaults by id (CONTRACT 13): an entry whose id is a default's changes only the
 * fields it names; `{"id": …, "remove": true}` drops that model; any other id adds a complete model. A list of every
 * default, complete (the format before patches), gives the same catalog it always did. Errors name the file's entry.
 */
function mergeModels(defaults: readonly ModelDefinition[], entries: readonly z.infer<typeof modelPatch>[], ctx: z.RefinementCtx): ModelDefinition[] {
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

const modelPatches = (current: readonly ModelDefinition[]) => z.array(modelPatch).transform((entries, ctx) => mergeModels(current, entries, ctx));

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
  /** dollars per interval */
  price: dollars(),
  currency: z.string().regex(/^[a-z]{3}$/, "must be a three-letter ISO currency code in lower case, e.g. usd"),
  interval: z.literal("month"),
  features: z.array(z.string()),
  /** micro-dollars granted on each paid invoice */
  monthlyCreditsMicros: z.number().int("must be whole micro-dollars (1 USD = 1000000)").min(0),
  requestsPerMinute: z.number().int().positive(),
  concurrentRequests: z.number().int().positive(),
  /** Stripe price id; when unset a price is created on demand from `price` */
  stripePriceId: z.string().min(1).optional(),
});
export type PlanDefinition = z.output<typeof planEntry>;

/** Plan ids are what clients send as plan_id: a second plan with the same id could never be chosen. */
const planEntries = z.array(planEntry).superRefine((plans, ctx) => {
  const seen = new Set<string>();
  plans.forEach((p, i) => {
    if (seen.has(p.id)) ctx.addIssue({ code: "custom", path: [i, "id"], message: `the id ${JSON.stringify(p.id)} is already taken by an earlier plan` });
    seen.add(p.id);
  });
});

// a purchase grants amount + bonus (the bonus its own ledger entry); `total` is only shown, so it must say that sum
const creditPackage = z.object({ amount: dollars().positive(), bonus: dollars(), total: z.number().positive() })
  .refine((p) => Math.abs(p.amount + p.bonus - p.total) < 1e-9, { message: "total must be amount + bonus, what a purchase of amount grants", path: ["total"] });
export type CreditPackage = z.output<typeof creditPackage>;
const creditPackageEntries = z.array(creditPackage);

/** SPEC 8 limits: points per window of `duration` seconds. */
const limitRule = z.object({ points: z.number().int().positive(), duration: z.number().int().positive().max(MAX_WINDOW_SECONDS, windowTooLong) });
export type LimitRule = z.output<typeof limitRule>;
export type LimitName = keyof typeof DEFAULT_LIMITS;
export const LIMIT_NAMES = Object.keys(DEFAULT_LIMITS) as [LimitName, ...LimitName[]];

/**
 * The catalog edited at run time (operator console) is checked by the rules CONFIG_FILE is: model entries patch
 * `current` by id exactly as the file's patch the defaults; plans and credit packages are whole lists.
 */
export const catalogSchemas = {
  modelPatches,
  plans: planEntries,
  creditPackages: creditPackageEntries,
};

/**
 * CONFIG_FILE (JSON), every key optional: `models` patches the defaults by id, the others replace them wholesale.
 * Its output is the catalog the gateway starts with.
 */
export const catalogFileSchema = z.strictObject({
  models: modelPatches(DEFAULT_MODELS).optional(),
  plans: planEntries.optional(),
  creditPackages: creditPackageEntries.optional(),
  // a name that is no limit ("loginIP") was kept and never read: the limit the operator meant stayed at its default
  limits: z.partialRecord(z.enum(LIMIT_NAMES), limitRule).optional(),
}).transform((file) => ({
  models: file.models ?? DEFAULT_MODELS,
  plans: file.plans ?? DEFAULT_PLANS,
  creditPackages: file.creditPackages ?? DEFAULT_CREDIT_PACKAGES,
  limits: { ...DEFAULT_LIMITS, ...file.limits } as Record<LimitName, LimitRule>,
}));
export type Catalog = z.output<typeof catalogFileSchema>;
