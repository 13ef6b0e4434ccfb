import { Router, type Express, type RequestHandler, type Response } from "express";
import { freePlan } from "@gw/billing";
import { IdempotencyStore, Metering, ResponseStore } from "@gw/gateway";
import { RequestLimits, setRateLimitHeaders } from "@gw/limits";
import { createProviderGateway, type ProviderGateway } from "@gw/providers";
import { AppError } from "@gw/shared";
import type { AppContext } from "../context";
import { apiCors } from "../http/cors";
import type { DirectRoutes } from "../http/direct-routes";
import type { MethodRules } from "../api/method-not-allowed";
import { noStore } from "../http/no-store";
import type { GatewayDeps } from "./deps";
import { usageRecord } from "./handlers/request-meta";
import { authenticate } from "./http/auth";
import { jsonBody, jsonOrMultipartBody, multipartFileBody } from "./http/body";
import { asksForStream, idempotency } from "./idempotency/middleware";
import { enforceLimits } from "./limits/middleware";
import { chatCompletions, completions, embeddings } from "./routes/chat";
import { imageAGenerate, imageBGenerate } from "./routes/images";
import { countTokens, messages, messagesApi } from "./routes/messages";
import { MODEL_ENTRY_PATH, model, models } from "./routes/models";
import { audioSpeech, audioTranscriptions, imagesGenerations, moderations } from "./routes/openai-media";
import { createResponse, deleteResponse, getResponse } from "./routes/responses";
import { task } from "./routes/task";
import { usageRoute } from "./usage/usage-route";

/**
 * A provider probe's budget: within the status registry's 300 ms per check, so that a hanging upstream times out in
 * the probe and only it is named (`textB: timed out`, degraded while the others answer) rather than the registry
 * giving up on the whole check (`no answer within 300 ms`, unhealthy). Slower than 200 ms is `slow response`.
 */
const HEALTH_TIMEOUT_MS = 250;
const HEALTH_SLOW_MS = 200;

/** CONTRACT 5: the deprecated completions endpoint says so on every answer, refusals included. */
const deprecated: RequestHandler = (_req, res, next) => {
  res.setHeader("Deprecation", "true");
  next();
};
/**
 * The route a request reached, whatever its spelling (letter case, a trailing slash reach the same route through the
 * router): usage records name the endpoint by it and Idempotency-Key compares requests by it.
 */
const endpointOf = (path: string): RequestHandler => (_req, res, next) => {
  res.locals.endpoint = path;
  next();
};
/**
 * docs/api.md: answers under /api carry `Cache-Control: no-store`. These routes are mounted (and served directly)
 * before mountApi's no-store, so they set it themselves; a path the router matched in any letter case is checked here.
 */
const noStoreUnderApi: RequestHandler = (req, res, next) => {
  if (/^\/api\//i.test(req.originalUrl)) res.setHeader("Cache-Control", "no-store");
  next();
};
/** Access-Control-Allow-Methods of a route: the router serves HEAD wherever it serves GET. */
const allowedMethods = (method: "GET" | "POST"): string => (method === "GET" ? "GET, HEAD" : "POST");
/** A stored response (GET, DELETE /v1/responses/{id}). */
const RESPONSE_ENTRY_PATH = "/v1/responses/:id";
/** How often expired Idempotency-Key records (and stored responses) are deleted. */
const IDEMPOTENCY_SWEEP_MS = 10 * 60_000;

/** The gateway routes: task, image and chat-compatible endpoints, the model list and the usage API. */
export async function mountGateway(
  app: Express,
  ctx: AppContext,
  direct: DirectRoutes,
  methods: MethodRules,
  providers: ProviderGateway = createProviderGateway(ctx.config, { clock: ctx.clock }),
): Promise<void> {
  ctx.onShutdown(() => providers.close());
  ctx.catalog.onChange(() => providers.reloadCatalog());
  // A slot outlives the longest upstream call, so slots of a crashed instance free themselves.
  const limits = new RequestLimits({ redis: ctx.redis, logger: ctx.logger, slotTtlMs: ctx.config.upstream.requestTimeoutMs + 60_000, now: () => ctx.clock.now() });
  const deps: GatewayDeps = {
    ctx, providers, limits,
    metering: new Metering({
      ledger: ctx.ledger, logger: ctx.logger, providers,
      usageRecord: (meta, fields) => usageRecord(deps, meta, fields),
      stalledClientMs: () => ctx.config.upstream.requestTimeoutMs,
    }),
  };
  const idempotencyStore = new IdempotencyStore(ctx.db, {
    ttlMs: ctx.config.gateway.idempotencyTtlSeconds * 1000,
    pendingTtlMs: ctx.config.upstream.requestTimeoutMs + 60_000,
    now: () => ctx.clock.now(),
  });
  const stopSweeping = idempotencyStore.sweepEvery(IDEMPOTENCY_SWEEP_MS, (err) => ctx.logger.warn({ err: (err as Error).message }, "idempotency sweep failed"));
  ctx.onShutdown(stopSweeping);
  const responseStore = new ResponseStore(ctx.db, () => ctx.clock.now());
  ctx.onShutdown(responseStore.sweepEvery(IDEMPOTENCY_SWEEP_MS, (err) => ctx.logger.warn({ err: (err as Error).message }, "stored responses sweep failed")));
  // stored answers hold prompts and outputs: they go with the account (CONTRACT 2)
  ctx.accountHooks.onAccountDeleted(async (userId) => {
    await idempotencyStore.forgetUser(userId);
    await responseStore.forgetUser(userId);
  });

  const usageAuth = authenticate(ctx, { sessionOrKey: true });
  // CONTRACT 7: X-RateLimit-* on every answer of the task endpoints, a refused key's included
  const newAccountPlan = freePlan(ctx.config);
  const unidentified = (res: Response) => setRateLimitHeaders(res, limits.unidentifiedState(newAccountPlan));
  const limitedAuth = authenticate(ctx, { onRefused: unidentified });
  // The key routes are the ones browser apps may call (CORS), refusals included; the usage API is not among them.
  const cors = apiCors(ctx.config.apiCorsOrigins);
  const limited: RequestHandler[] = [...(cors ? [cors.actual] : []), limitedAuth, enforceLimits(ctx, limits)];
  const json = jsonBody(ctx.config.jsonBodyLimitBytes, ctx.config.bodyIdleTimeoutMs, ctx.config.bodyTimeoutMs);
  const audioForm = multipartFileBody("file", ["timestamp_granularities"], {
    fieldLimitBytes: ctx.config.jsonBodyLimitBytes, fileLimitBytes: ctx.config.audioUploadLimitBytes, idleMs: ctx.config.bodyIdleTimeoutMs, totalMs: ctx.config.bodyTimeoutMs,
  });
  // Only text answers stream: chat and completions, and on the task endpoint a text model's; elsewhere never.
  const once = idempotency(idempotencyStore, ctx.logger);
  const onceOrStreamed = idempotency(idempotencyStore, ctx.logger, asksForStream);
  const onceOrTaskStreamed = idempotency(idempotencyStore, ctx.logger, (req) => {
    const model = (req.body as { model?: unknown } | undefined)?.model;
    return asksForStream(req) && typeof model === "string" && ctx.config.models.some((m) => m.id === model && m.type === "text");
  });

  const routes: Array<[method: "GET" | "POST", path: string, handlers: RequestHandler[]]> = [
    ["POST", "/api/v1/task", [...limited, ...jsonOrMultipartBody(ctx.config.jsonBodyLimitBytes, ctx.config.audioUploadLimitBytes, ctx.config.bodyIdleTimeoutMs, ctx.config.bodyTimeoutMs), onceOrTaskStreamed, task(deps)]],
    ["POST", "/api/v1/imageA/generate", [...limited, ...json, once, imageAGenerate(deps)]],
    ["POST", "/api/v1/imageB.1", [...limited, ...json, once, imageBGenerate(deps)]],
    ["POST", "/v1/chat/completions", [...limited, ...json, onceOrStreamed, chatCompletions(deps)]],
    ["POST", "/v1/completions", [deprecated, ...limited, ...json, onceOrStreamed, completions(deps)]],
    ["POST", "/v1/embeddings", [...limited, ...json, once, embeddings(deps)]],
    ["POST", "/v1/images/generations", [...limited, ...json, once, imagesGenerations(deps)]],
    ["POST", "/v1/audio/speech", [...limited, ...json, once, audioSpeech(deps)]],
    ["POST", "/v1/audio/transcriptions", [...limited, ...audioForm, once, audioTranscriptions(deps)]],
    ["POST", "/v1/moderations", [...limited, ...json, once, moderations()]],
    ["POST", "/v1/responses", [...limited, ...json, onceOrStreamed, createResponse(deps, responseStore)]],
    ["POST", "/v1/messages", [messagesApi, ...limited, ...json, onceOrStreamed, messages(deps)]],
    ["POST", "/v1/messages/count_tokens", [messagesApi, ...limited, ...json, once, countTokens(deps)]],
    ["GET", "/v1/models", [...limited, models(deps)]],
    ["GET", "/api/v1/models", [...limited, models(deps)]],
    // its own `usage` limit, not the plan's, counts it
    ["GET", "/api/usage", [usageAuth, usageRoute(ctx)]],
  ];
  // Each route twice: directly (the hot path) and in the Express router (other spellings of the path, HEAD, and
  // CORS preflights: OPTIONS never takes a direct route).
  const router = Router();
  for (const [method, path, routeHandlers] of routes) {
    const handlers = [endpointOf(path), ...(path.startsWith("/api/") ? [noStore] : []), ...routeHandlers];
    direct.add(method, path, handlers);
    if (method === "GET") router.get(path, ...handlers);
    else router.post(path, ...handlers);
    // a preflight only where the answers carry CORS headers (the `limited` routes)
    if (cors && routeHandlers.includes(limitedAuth)) router.options(path, cors.preflight(allowedMethods(method), { onAnswer: unidentified }));
  }
  // Path parameters need the router: the model's entry (OpenAI's models.retrieve). A pattern without a parameter, so
  // the router does not decode the id before the key and limits are checked (a malformed one is then a 400 that
  // carries X-RateLimit-*, CONTRACT 7); the handler decodes it.
  router.get(MODEL_ENTRY_PATH, endpointOf("/v1/models/{model}"), noStoreUnderApi, ...limited, model(deps));
  router.get(RESPONSE_ENTRY_PATH, ...limited, getResponse(responseStore));
  router.delete(RESPONSE_ENTRY_PATH, ...limited, deleteResponse(responseStore));
  if (cors) router.options(RESPONSE_ENTRY_PATH, cors.preflight("GET, HEAD, DELETE", { onAnswer: unidentified }));
  if (cors) router.options(MODEL_ENTRY_PATH, cors.preflight(allowedMethods("GET"), { onAnswer: unidentified }));
  // Any other path under the gateway's prefixes is a 404 that, like every answer of these endpoints (CONTRACT 7),
  // carries the caller's X-RateLimit-* headers once the key is known.
  // Express would answer an OPTIONS of the usage API itself (200 text/plain "GET, HEAD"): it has no CORS, so it is
  // answered as any other undeclared method there (401 without a key, else 405 with Allow)
  router.options("/api/usage", noStore, usageAuth, methods.methodNotAllowed);
  // GET /api/v1/key is an API route (the keys router's REST face, mounted after the gateway), not a gateway one
  router.all("/api/v1/key", (_req, _res, next) => next("router"));
  // an unknown route there is 404 not_found (CONTRACT 1); a gateway path the OpenAPI document declares, asked with
  // another method, is 405 with Allow (issue 38)
  router.use(["/v1", "/api/v1"], noStoreUnderApi, ...limited, (req, res, next) => next(methods.undeclaredMethod(req, res) ?? new AppError("not_found", `No route for ${req.method} ${req.originalUrl.split("?")[0]}.`)));
  app.use(router);

  ctx.healthChecks.register("text_provider", async () => providers.checkHealth("text", HEALTH_TIMEOUT_MS, HEALTH_SLOW_MS));
  ctx.healthChecks.register("speech_provider", async () => providers.checkHealth("speech", HEALTH_TIMEOUT_MS, HEALTH_SLOW_MS));
  ctx.healthChecks.registerDeployments(() => providers.deploymentStates().map((d) => ({
    model: d.model, deployment: d.deployment, status: d.status, ...(d.coolingUntil ? { cooling_until: d.coolingUntil } : {}),
  })));
}
