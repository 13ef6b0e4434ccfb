// The gateway's routes in the OpenAPI document (CONTRACT 9): request schemas generated from the zod schemas the
// routes parse with, so the document states what the routes accept; answers described after OpenAI's and
// Anthropic's references. Merged into /api/openapi.json by buildOpenApiDocument.
import type { GatewayOperation } from "@gw/api";
import { countTokensApiBody, messagesApiBody, responsesApiBody } from "@gw/providers";
import type { ErrorCode } from "@gw/shared";
import { z } from "zod";
import { imageABody, imageBBody } from "./schemas/images";
import { imageGenerationBody, moderationBody, speechBody, transcriptionFields, SPEECH_FORMATS } from "./schemas/openai-media";
import { imageTaskBody, stsTaskFields, textTaskBody, ttsTaskBody } from "./schemas/task";
import { chatBody, completionBody, embeddingBody } from "./schemas/text";

type Json = Record<string, unknown>;

/** A request schema as JSON Schema: what a client may send (the input side of transforms and defaults). */
function requestSchema(schema: z.ZodType): Json {
  const { $schema: _dialect, ...rest } = z.toJSONSchema(schema, { io: "input", unrepresentable: "any" }) as Json;
  return rest;
}

const ref = (name: string): Json => ({ $ref: `#/components/schemas/${name}` });
const json = (schema: Json) => ({ "application/json": { schema } });
const binary = { type: "string", format: "binary" };
const integer = { type: "integer" };
const string = { type: "string" };
const number = { type: "number" };
const object = (properties: Json, required: string[] = Object.keys(properties)): Json => ({ type: "object", required, properties });
const array = (items: Json): Json => ({ type: "array", items });

/** Errors every model route may answer besides its own (CONTRACT 1, 6, 7; api.md Errors). */
const MODEL_ROUTE_ERRORS: ErrorCode[] = [
  "missing_required_parameter", "invalid_parameter", "invalid_json", "unsupported_model", "invalid_api_key", "insufficient_credits",
  "request_timeout", "conflict", "payload_too_large", "unsupported_media_type", "rate_limit_exceeded", "internal_error", "upstream_error",
  "provider_not_configured", "upstream_timeout",
];
const LIST_ERRORS: ErrorCode[] = ["invalid_api_key", "rate_limit_exceeded", "internal_error"];
const FREE_ROUTE_ERRORS: ErrorCode[] = [
  "missing_required_parameter", "invalid_parameter", "invalid_json", "invalid_api_key", "request_timeout", "conflict", "payload_too_large",
  "unsupported_media_type", "rate_limit_exceeded", "internal_error",
];

const idempotencyKey = {
  name: "Idempotency-Key", in: "header", required: false,
  description: "The first successful answer is stored and replayed for repeats (api.md Idempotency)",
  schema: { type: "string", pattern: "^[\\x21-\\x7e]{1,255}$" },
};

const usage = object({ prompt_tokens: integer, completion_tokens: integer, total_tokens: integer });
const SCHEMAS: Json = {
  ChatCompletion: object({
    id: string, object: { type: "string", enum: ["chat.completion", "task.completion"] }, created: integer, model: string,
    choices: array(object({
      index: integer, message: { type: "object", required: ["role"], properties: { role: string, content: { type: ["string", "null"] } } },
      logprobs: {}, finish_reason: string,
    }, ["index", "message", "finish_reason"])),
    usage,
  }),
  TextCompletion: object({
    id: string, object: { type: "string", const: "text_completion" }, created: integer, model: string,
    choices: array(object({ text: string, index: integer, logprobs: {}, finish_reason: string }, ["text", "index", "finish_reason"])),
    usage,
  }),
  Embeddings: object({
    object: { type: "string", const: "list" },
    data: array(object({ object: { type: "string", const: "embedding" }, index: integer, embedding: { oneOf: [array(number), string] } })),
    model: string, usage: object({ prompt_tokens: integer, total_tokens: integer }),
  }),
  Model: object({
    id: string, object: { type: "string", const: "model" }, created: integer, owned_by: string,
    type: { type: "string", enum: ["text", "embedding", "image", "speech"] }, context_window: { type: ["integer", "null"] },
    pricing: { type: "object", additionalProperties: number, description: "dollars per unit named by each key" },
    endpoints: { ...array(string), description: "the routes that serve this model" },
  }),
  Images: object({ created: integer, data: array({ type: "object", properties: { url: string, b64_json: string } }) }),
  Transcription: object({ text: string, usage: object({ type: { type: "string", const: "duration" }, seconds: number }) }, ["text"]),
  TranscriptionVerbose: object({
    task: { type: "string", const: "transcribe" }, language: string, duration: number, text: string,
    segments: array(object({ id: integer, seek: integer, start: number, end: number, text: string, tokens: array(integer), temperature: number, avg_logprob: number, compression_ratio: number, no_speech_prob: number })),
    words: array(object({ word: string, start: number, end: number })),
    usage: object({ type: string, seconds: number }),
  }, ["task", "language", "duration", "text", "segments"]),
  Moderation: object({
    id: string, model: string,
    results: array(object({
      flagged: { type: "boolean" },
      categories: { type: "object", additionalProperties: { type: "boolean" } },
      category_scores: { type: "object", additionalProperties: number },
      category_applied_input_types: { type: "object", additionalProperties: array(string) },
    })),
  }),
  AnthropicError: object({
    type: { type: "string", const: "error" },
    error: object({ type: { type: "string", enum: ["invalid_request_error", "authentication_error", "billing_error", "permission_error", "not_found_error", "request_too_large", "rate_limit_error", "api_error", "overloaded_error"] }, message: string }),
  }),
};

const ok = (description: string, content: Json) => ({ 200: { description, content } });
const sse = { "text/event-stream": { schema: { type: "string", description: "server-sent events (api.md Streaming)" } } };

/** `gatewayPostV1ChatCompletions`, `gatewayGetV1ResponsesId` … */
function operationId(method: string, path: string): string {
  return `gateway${method[0]?.toUpperCase()}${method.slice(1)}${path.replace(/[{}]/g, "").replace(/[^A-Za-z0-9]+(.)?/g, (_m, c: string | undefined) => (c ?? "").toUpperCase())}`;
}

const jsonPost = (path: string, summary: string, body: z.ZodType, answer: Json, errors = MODEL_ROUTE_ERRORS): GatewayOperation => ({
  path, method: "post", errors,
  operation: {
    operationId: operationId("post", path),
    summary, tags: ["Gateway"], parameters: [idempotencyKey],
    requestBody: { required: true, content: json(requestSchema(body)) },
    responses: answer,
  },
});

/** Multipart fields as the form sends them: every field a string, the audio a file. */
function formSchema(fields: z.ZodType, file: string, extra: Json = {}): Json {
  const schema = requestSchema(fields);
  const properties = { ...(schema.properties as Json), ...extra, [file]: binary };
  return { ...schema, properties, required: [...((schema.required as string[] | undefined) ?? []), file] };
}

const modelEntry = (path: string): GatewayOperation => ({
  path, method: "get", errors: [...LIST_ERRORS, "invalid_parameter", "not_found"],
  operation: {
    operationId: operationId("get", path), summary: "One model's entry (models.retrieve)", tags: ["Gateway"],
    parameters: [{ name: "id", in: "path", required: true, schema: string }],
    responses: ok("the model", json(ref("Model"))),
  },
});
const modelList = (path: string): GatewayOperation => ({
  path, method: "get", errors: LIST_ERRORS,
  operation: {
    operationId: operationId("get", path), summary: "Every model, with the endpoints that serve it", tags: ["Gateway"],
    responses: ok("the model list", json(object({ object: { type: "string", const: "list" }, data: array(ref("Model")) }))),
  },
});

/** /v1/responses and /v1/messages: the shapes of OpenAI's Responses and Anthropic's Messages references (CONTRACT 9). */
const responseObject = object({
  id: string, object: { type: "string", const: "response" }, created_at: integer, status: string, model: string,
  output: array({ type: "object", required: ["type"], properties: { type: string } }),
  usage: object({ input_tokens: integer, output_tokens: integer, total_tokens: integer }),
}, ["id", "object", "created_at", "status", "model", "output"]);
const messageObject = object({
  id: string, type: { type: "string", const: "message" }, role: { type: "string", const: "assistant" }, model: string,
  content: array({ type: "object", required: ["type"], properties: { type: string } }), stop_reason: { type: ["string", "null"] },
  stop_sequence: { type: ["string", "null"] }, usage: object({ input_tokens: integer, output_tokens: integer }),
});
/** Anthropic's error envelope, every status /v1/messages answers (CONTRACT 9). */
const anthropicErrors: Json = Object.fromEntries([
  ["400", "invalid_request_error"], ["401", "authentication_error"], ["402", "billing_error"], ["403", "permission_error"],
  ["404", "not_found_error"], ["409", "invalid_request_error (Idempotency-Key)"], ["413", "request_too_large"], ["415", "invalid_request_error"],
  ["429", "rate_limit_error"], ["500", "api_error"], ["502", "api_error"], ["503", "overloaded_error"], ["504", "api_error"],
].map(([status, type]) => [status, { description: type, content: json(ref("AnthropicError")) }]));

export function gatewayOperations(): { operations: GatewayOperation[]; schemas: Json } {
  const chat = { ...json(ref("ChatCompletion")), ...sse };
  const operations: GatewayOperation[] = [
    jsonPost("/v1/chat/completions", "Chat completions (OpenAI), every text model", chatBody, ok("the answer, or its stream", chat)),
    jsonPost("/v1/completions", "Legacy completions (deprecated)", completionBody, ok("the answer, or its stream", { ...json(ref("TextCompletion")), ...sse })),
    jsonPost("/v1/embeddings", "Embeddings", embeddingBody, ok("the vectors", json(ref("Embeddings")))),
    jsonPost("/v1/images/generations", "Images (OpenAI), any image model; moderated", imageGenerationBody, ok("the images", json(ref("Images")))),
    jsonPost("/v1/audio/speech", `Text to speech (OpenAI); response_format ${SPEECH_FORMATS.join(", ")} (aac and flac: 400)`, speechBody,
      ok("the audio bytes", Object.fromEntries(["audio/mpeg", "audio/opus", "audio/wav", "audio/pcm"].map((type) => [type, { schema: binary }])))),
    {
      path: "/v1/audio/transcriptions", method: "post", errors: MODEL_ROUTE_ERRORS,
      operation: {
        operationId: operationId("post", "/v1/audio/transcriptions"), summary: "Speech to text (OpenAI), multipart", tags: ["Gateway"], parameters: [idempotencyKey],
        requestBody: { required: true, content: { "multipart/form-data": { schema: formSchema(transcriptionFields, "file") } } },
        responses: ok("the transcript in the asked format", {
          "application/json": { schema: { anyOf: [ref("Transcription"), ref("TranscriptionVerbose")] } },
          "text/plain": { schema: string }, "text/vtt": { schema: string },
        }),
      },
    },
    jsonPost("/v1/moderations", "Moderation (OpenAI shape) by the gateway's own policy; free", moderationBody, ok("one result per input", json(ref("Moderation"))), FREE_ROUTE_ERRORS),
    modelList("/v1/models"), modelList("/api/v1/models"), modelEntry("/v1/models/{id}"), modelEntry("/api/v1/models/{id}"),
    {
      path: "/api/v1/task", method: "post", errors: [...MODEL_ROUTE_ERRORS, "content_policy_violation"],
      operation: {
        operationId: operationId("post", "/api/v1/task"), summary: "One task endpoint: text, image or speech by model (SPEC 4.1)", tags: ["Gateway"], parameters: [idempotencyKey],
        requestBody: {
          required: true,
          content: {
            "application/json": { schema: { anyOf: [textTaskBody, imageTaskBody, ttsTaskBody].map(requestSchema) } },
            "multipart/form-data": { schema: formSchema(stsTaskFields, "audio", { voice: string }) },
          },
        },
        responses: ok("by model: task.completion, image.generation, speech.generation or transcription", { ...json({ type: "object", required: ["id", "object", "created", "model"], properties: { id: string, object: string, created: integer, model: string } }), ...sse }),
      },
    },
    jsonPost("/api/v1/imageA/generate", "Image endpoint A (SPEC 4.2); moderated", imageABody, ok("the images", json(object({
      status: { type: "string", const: "success" }, images: array(object({ url: string, id: string, created_at: { type: "string", format: "date-time" } })), prompt: string, model: string,
    }))), [...MODEL_ROUTE_ERRORS, "content_policy_violation"]),
    jsonPost("/api/v1/imageB.1", "Image endpoint B (SPEC 4.3); moderated", imageBBody, ok("the image", json(object({
      id: string, created: integer, images: array(object({ url: string, width: integer, height: integer })), prompt: string, model: string, seed: integer, status: { type: "string", const: "complete" },
    }))), [...MODEL_ROUTE_ERRORS, "content_policy_violation"]),
    {
      path: "/v1/responses", method: "post", errors: MODEL_ROUTE_ERRORS,
      operation: {
        operationId: operationId("post", "/v1/responses"), summary: "Responses (OpenAI), every text model", tags: ["Gateway"], parameters: [idempotencyKey],
        requestBody: { required: true, content: json(requestSchema(responsesApiBody)) }, responses: ok("the response, or its typed events", { ...json(responseObject), ...sse }),
      },
    },
    ...(["get", "delete"] as const).map((method): GatewayOperation => ({
      path: "/v1/responses/{id}", method, errors: [...LIST_ERRORS, "not_found"],
      operation: {
        operationId: operationId(method, "/v1/responses/{id}"), summary: method === "get" ? "A stored response of the caller's account" : "Deletes a stored response", tags: ["Gateway"],
        parameters: [{ name: "id", in: "path", required: true, schema: string }],
        responses: ok(method === "get" ? "the response" : "deleted", json(method === "get" ? responseObject : object({ id: string, object: { type: "string", const: "response" }, deleted: { type: "boolean" } }))),
      },
    })),
    {
      path: "/v1/messages", method: "post", anthropicKey: true, errors: [],
      operation: {
        operationId: operationId("post", "/v1/messages"), summary: "Messages (Anthropic), every text model", tags: ["Gateway"],
        parameters: [idempotencyKey, { name: "anthropic-version", in: "header", required: false, schema: string }],
        requestBody: { required: true, content: json(requestSchema(messagesApiBody)) },
        responses: { ...ok("the message, or its events", { ...json(messageObject), ...sse }), ...anthropicErrors },
      },
    },
    {
      path: "/v1/messages/count_tokens", method: "post", anthropicKey: true, errors: [],
      operation: {
        operationId: operationId("post", "/v1/messages/count_tokens"), summary: "Counts a Messages request's input tokens; free", tags: ["Gateway"],
        parameters: [{ name: "anthropic-version", in: "header", required: false, schema: string }],
        requestBody: { required: true, content: json(requestSchema(countTokensApiBody)) },
        responses: { ...ok("the count", json(object({ input_tokens: integer }))), ...anthropicErrors },
      },
    },
  ];
  return { operations, schemas: SCHEMAS };
}
