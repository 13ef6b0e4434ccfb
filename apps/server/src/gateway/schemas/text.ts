import { z } from "zod";
import { messages, positiveInt, safeString, temperature } from "./common";

// The request schemas of every route are ahead-of-time compiled (`z.compile`): valid input takes a generated fast
// path, invalid input falls back to the regular parser, so the errors are the same. About 4x less parse time and
// allocation per request; see docs/performance.md.

// Fields the gateway itself interprets; anything else on /v1/* is passed through to OpenAI-compatible upstreams
// (collected from the raw body by passthroughOf, so the schemas below strip unknown keys instead of copying them).
export const CHAT_KNOWN_FIELDS = ["model", "messages", "max_tokens", "max_completion_tokens", "temperature", "stream", "stream_options", "n"];
export const COMPLETION_KNOWN_FIELDS = ["model", "prompt", "max_tokens", "temperature", "stream", "stream_options", "n"];
export const EMBEDDING_KNOWN_FIELDS = ["model", "input", "encoding_format"];

export const streamOptions = z.object({ include_usage: z.boolean().optional() }).nullish();
// Legacy completions produce and bill one choice per request; chat produces `n` (OpenAI's bound).
const singleChoice = z.literal(1).nullish();
export const MAX_CHAT_CHOICES = 128;

/** OpenAI refuses stream_options on a request that does not stream; so do we, naming it. */
export function streamOptionsNeedStream(body: { stream?: boolean | null; stream_options?: unknown }, ctx: z.RefinementCtx): void {
  if (body.stream_options != null && body.stream !== true) {
    ctx.addIssue({ code: "custom", input: body.stream_options, path: ["stream_options"], message: "is only allowed when 'stream' is enabled" });
  }
}

/**
 * OpenAI's optional sampling and bookkeeping fields, type- and range-checked with OpenAI's own rules so a wrong one is
 * a 400 for every model, never dropped or sent on. They are not in the KNOWN lists: OpenAI-compatible upstreams get
 * them from the passthrough as the client sent them; the Anthropic adapter maps or refuses them.
 */
const samplingFields = {
  top_p: z.number().min(0).max(1).nullish(),
  stop: z.union([safeString(1_000), z.array(safeString(1_000)).max(4)]).nullish(),
  presence_penalty: z.number().min(-2).max(2).nullish(),
  frequency_penalty: z.number().min(-2).max(2).nullish(),
  logit_bias: z.record(z.string().regex(/^\d+$/, "must map token ids to biases"), z.number().min(-100).max(100)).nullish(),
  seed: z.number().int().nullish(),
  user: safeString(512).nullish(),
};

// OpenAI's stored-completion fields (chat): `store` a flag, `metadata` at most 16 string pairs, keys up to 64
// characters and values up to 512. textB models ignore both, so a wrong one is caught here or nowhere.
const storedCompletion = {
  store: z.boolean().nullish(),
  metadata: z.record(z.string(), safeString(512)).superRefine((pairs, ctx) => {
    const keys = Object.keys(pairs);
    if (keys.length > 16) ctx.addIssue({ code: "custom", input: pairs, message: "must have at most 16 keys" });
    else if (keys.some((key) => key.length > 64)) ctx.addIssue({ code: "custom", input: pairs, message: "must have keys of at most 64 characters" });
  }).nullish(),
};

const responseFormat = z.looseObject({
  type: z.enum(["text", "json_object", "json_schema"]),
  json_schema: z.looseObject({ name: safeString(64) }).optional(),
}).superRefine((format, ctx) => {
  if (format.type === "json_schema" && format.json_schema === undefined) {
    ctx.addIssue({ code: "custom", input: undefined, path: ["json_schema"], message: "must be an object" });
  }
});

export const chatBody = z.compile(z.object({
  model: z.string(),
  messages,
  max_tokens: positiveInt.nullish(),
  max_completion_tokens: positiveInt.nullish(),
  temperature: temperature.nullish(),
  stream: z.boolean().nullish(),
  stream_options: streamOptions,
  n: z.number().int().min(1).max(MAX_CHAT_CHOICES).nullish(),
  ...samplingFields,
  logprobs: z.boolean().nullish(),
  top_logprobs: z.number().int().min(0).max(20).nullish(),
  response_format: responseFormat.nullish(),
  tools: z.array(z.looseObject({ type: safeString(64) })).max(128).nullish(),
  tool_choice: z.union([z.enum(["none", "auto", "required"]), z.looseObject({ type: safeString(64) })]).nullish(),
  parallel_tool_calls: z.boolean().nullish(),
  ...storedCompletion,
}).superRefine((body, ctx) => {
  streamOptionsNeedStream(body, ctx);
  if (body.top_logprobs != null && body.logprobs !== true) {
    ctx.addIssue({ code: "custom", input: body.top_logprobs, path: ["top_logprobs"], message: "requires 'logprobs' to be true" });
  }
  // A forced call with nothing to call: OpenAI refuses it; a Messages model would otherwise answer in text
  const forcesCall = body.tool_choice === "required" || (typeof body.tool_choice === "object" && body.tool_choice !== null);
  if (forcesCall && !body.tools?.length) {
    ctx.addIssue({ code: "custom", input: body.tool_choice, path: ["tool_choice"], message: "forces a tool call, so 'tools' must offer at least one tool" });
  }
}));
export type ChatBody = z.output<typeof chatBody>;

export const completionBody = z.compile(z.object({
  model: z.string(),
  prompt: z.union([safeString(400_000), z.array(safeString(400_000)).length(1).transform((a) => a[0] ?? "")]),
  max_tokens: positiveInt.nullish(),
  temperature: temperature.nullish(),
  stream: z.boolean().nullish(),
  stream_options: streamOptions,
  n: singleChoice,
  ...samplingFields,
  // the legacy API's logprobs is a count, not a flag
  logprobs: z.number().int().min(0).max(5).nullish(),
  echo: z.boolean().nullish(),
  suffix: safeString(400_000).nullish(),
  // the upstream generates (and bills) this many completions to return the best one; sent through, sized in the hold
  best_of: z.number().int().min(1).max(20).nullish(),
}).superRefine((body, ctx) => {
  streamOptionsNeedStream(body, ctx);
  // OpenAI's rule too: which candidate is best is known only once all are written
  if (body.stream === true && body.best_of != null && body.best_of > 1) {
    ctx.addIssue({ code: "custom", input: body.best_of, path: ["best_of"], message: "must be 1 when 'stream' is enabled (the best of several completions cannot be streamed)" });
  }
}));
export type CompletionBody = z.output<typeof completionBody>;

const embeddingText = safeString(400_000).min(1);
const MAX_EMBEDDING_INPUTS = 2048;
const tokenId = z.number().int().min(0);
const tokenArray = z.array(tokenId).min(1);

/**
 * OpenAI's four forms of `input`: a string, an array of strings, one array of token ids, or an array of token
 * arrays; never empty, never mixed, at most 2048 inputs (one token array is one input: its length is bounded by the
 * model's context window instead). Normalized to one list of inputs, each a string or a token array.
 */
const embeddingInput = z.union([
  embeddingText.transform((text) => [text]),
  z.array(z.union([embeddingText, tokenId, tokenArray])).min(1).superRefine((items, ctx) => {
    const kindOf = (item: unknown) => (typeof item === "string" ? "string" : typeof item === "number" ? "token id" : "token array");
    const first = kindOf(items[0]);
    if (first !== "token id" && items.length > MAX_EMBEDDING_INPUTS) {
      ctx.addIssue({ code: "too_big", origin: "array", maximum: MAX_EMBEDDING_INPUTS, inclusive: true, input: items });
    }
    const index = items.findIndex((item) => kindOf(item) !== first);
    if (index >= 0) {
      ctx.addIssue({ code: "custom", input: items[index], path: [index], message: `must be a ${first}, like the first item (strings, token ids and token arrays do not mix)` });
    }
  }).transform((items): string[] | number[][] => (typeof items[0] === "number" ? [items as number[]] : items as string[] | number[][])),
]);

export const embeddingBody = z.compile(z.object({
  model: z.string(),
  input: embeddingInput,
  encoding_format: z.enum(["float", "base64"]).nullish(),
  // checked here, sent upstream through the passthrough
  dimensions: positiveInt.nullish(),
  user: safeString(512).nullish(),
}));
export type EmbeddingBody = z.output<typeof embeddingBody>;

/** Unknown fields of an OpenAI request, forwarded untouched. */
export function passthroughOf(body: Record<string, unknown>, known: string[]): Record<string, unknown> | undefined {
  const out: Record<string, unknown> = {};
  let any = false;
  for (const [k, v] of Object.entries(body)) {
    if (known.includes(k)) continue;
    out[k] = v;
    any = true;
  }
  return any ? out : undefined;
}
