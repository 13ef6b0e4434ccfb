// A fake OpenAI-compatible upstream: chat completions (with SSE), completions (with SSE), embeddings, images, models.
import { randomUUID } from "node:crypto";
import {
  encodeFloat32Base64, fakeChatReply, fakeCompletion, fakeEmbedding, fakeToolCall, wordCount, TINY_PNG, type FakeMessage, type FakeReply,
} from "./deterministic";
import { FakeServer, sendBody, sendJson, writeSse, writeWhenRead, type HandlerContext } from "./fake-server";

interface ChatBody {
  model?: unknown;
  messages?: unknown;
  max_tokens?: unknown;
  max_completion_tokens?: unknown;
  stream?: unknown;
  stream_options?: { include_usage?: unknown } | null;
  prompt?: unknown;
  echo?: unknown;
  input?: unknown;
  encoding_format?: unknown;
  n?: unknown;
  size?: unknown;
  response_format?: unknown;
  tools?: Array<{ function?: { name?: unknown } }>;
  logprobs?: unknown;
  best_of?: unknown;
}

/** A function the request offers, if any: the fake calls the first one. */
const offeredTool = (body: ChatBody): string | undefined => {
  const name = Array.isArray(body.tools) ? body.tools[0]?.function?.name : undefined;
  return typeof name === "string" ? name : undefined;
};

/** OpenAI-style logprobs for the reply's pieces (one "token" per word). */
const fakeLogprobs = (pieces: string[]) => ({ content: pieces.map((token) => ({ token, logprob: -0.5, bytes: null, top_logprobs: [] })) });

/** OpenAI's rules, as far as the fake needs them: content is a string or parts, or null on an assistant turn with tool calls. */
const isMessages = (value: unknown): value is FakeMessage[] =>
  Array.isArray(value) && value.every((m) => typeof m === "object" && m !== null && typeof m.role === "string"
    && (typeof m.content === "string" || Array.isArray(m.content) || (m.role === "assistant" && m.content == null && Array.isArray(m.tool_calls))));

const isTokens = (value: unknown): value is number[] =>
  Array.isArray(value) && value.length > 0 && value.every((t) => Number.isInteger(t) && (t as number) >= 0);

/** OpenAI's four forms of embeddings `input` as a list of texts or token arrays; undefined when none fits. */
function embeddingInputs(input: unknown): string[] | number[][] | undefined {
  if (typeof input === "string") return input ? [input] : undefined;
  if (!Array.isArray(input) || input.length === 0) return undefined;
  if (input.every((i) => typeof i === "string" && i.length > 0)) return input as string[];
  if (isTokens(input)) return [input];
  return input.every(isTokens) ? input : undefined;
}

export class FakeOpenAi extends FakeServer {
  /** false: answers (streamed or not) carry no usage, like some compatible servers */
  reportUsage = true;
  /** the next this many chat streams answer 200, the role chunk, then `data: {"error": {type: "server_error"}}` */
  erroredStreams = 0;
  /** Set: chat usage also carries these breakdowns (OpenAI's prompt_tokens_details, completion_tokens_details) */
  usageDetails: Record<string, unknown> | undefined = undefined;
  /**
   * Set: chat streams answer text chunks of about 16 KiB until this many bytes were written, no faster than the
   * gateway reads them (a long answer meeting a slow client); `flood` tells how far the last one got.
   */
  floodBytes: number | undefined = undefined;
  readonly flood = { sentBytes: 0, closed: false };

  constructor(readonly apiKey: string) {
    super();
  }

  protected override resetOptions(): void {
    this.reportUsage = true;
    this.erroredStreams = 0;
    this.usageDetails = undefined;
    this.floodBytes = undefined;
  }

  protected errorBody(status: number, message: string): unknown {
    return { error: { message, type: status >= 500 ? "server_error" : "invalid_request_error", code: null } };
  }

  protected route(ctx: HandlerContext): boolean | Promise<boolean> {
    if (ctx.req.headers.authorization !== `Bearer ${this.apiKey}`) {
      sendJson(ctx.res, 401, this.errorBody(401, "Incorrect API key provided."));
      return true;
    }
    const body = (ctx.record.json ?? {}) as ChatBody;
    const { method } = ctx.record;
    switch (`${method} ${ctx.url.pathname}`) {
      case "GET /v1/models":
        sendJson(ctx.res, 200, { object: "list", data: [{ id: "fake-model", object: "model", created: 0, owned_by: "fake" }] });
        return true;
      case "POST /v1/chat/completions":
        return this.chat(ctx, body);
      case "POST /v1/completions":
        return this.completion(ctx, body);
      case "POST /v1/embeddings":
        return this.embeddings(ctx, body);
      case "POST /v1/images/generations":
        return this.images(ctx, body);
    }
    if (method === "GET" && ctx.url.pathname.startsWith("/images/")) {
      sendBody(ctx, "image/png", TINY_PNG);
      return true;
    }
    return false;
  }

  private usage(reply: Pick<FakeReply, "promptTokens" | "completionTokens">) {
    return { prompt_tokens: reply.promptTokens, completion_tokens: reply.completionTokens, total_tokens: reply.promptTokens + reply.completionTokens, ...this.usageDetails };
  }

  private badRequest(ctx: HandlerContext, message: string): true {
    sendJson(ctx.res, 400, this.errorBody(400, message));
    return true;
  }

  private async chat(ctx: HandlerContext, body: ChatBody): Promise<boolean> {
    if (!isMessages(body.messages) || body.messages.length === 0) return this.badRequest(ctx, "messages must be a non-empty array");
    // OpenAI reads either name (its reasoning models only the newer one)
    const limit = body.max_completion_tokens ?? body.max_tokens;
    const maxTokens = typeof limit === "number" ? limit : undefined;
    const reply = fakeChatReply(body.messages, maxTokens);
    const call = fakeToolCall(body.messages, offeredTool(body));
    // like OpenAI, `n` choices are all written and billed (the fake's are the same answer n times)
    const choices = typeof body.n === "number" && body.n > 1 ? body.n : 1;
    const answered = call ?? reply;
    const usage = this.usage({ promptTokens: answered.promptTokens, completionTokens: answered.completionTokens * choices });
    const id = `chatcmpl-${randomUUID()}`;
    const model = String(body.model);
    const created = Math.floor(Date.now() / 1000);
    const logprobs = body.logprobs === true;
    if (body.stream === true && this.erroredStreams > 0) {
      this.erroredStreams--;
      const error = { message: "The server had an error while processing your request. Sorry about that!", type: "server_error", param: null, code: null };
      await writeSse(ctx, [
        `data: ${JSON.stringify({ id, object: "chat.completion.chunk", created, model, choices: [{ index: 0, delta: { role: "assistant", content: "" }, finish_reason: null }] })}\n\n`,
        `data: ${JSON.stringify({ error })}\n\n`,
      ], () => this.pause());
      return true;
    }
    if (body.stream === true && this.floodBytes !== undefined) {
      await this.floodStream(ctx, this.floodBytes, (choices) => `data: ${JSON.stringify({ id, object: "chat.completion.chunk", created, model, choices })}\n\n`);
      return true;
    }
    if (body.stream !== true) {
      const toolCall = call && { id: call.id, type: "function", function: { name: call.name, arguments: call.arguments } };
      sendBody(ctx, "application/json", JSON.stringify({
        id, object: "chat.completion", created, model, system_fingerprint: "fp_fake",
        choices: Array.from({ length: choices }, (_, index) => ({
          index,
          message: toolCall ? { role: "assistant", content: null, tool_calls: [toolCall], refusal: null } : { role: "assistant", content: reply.content, refusal: null },
          logprobs: logprobs && !call ? fakeLogprobs(reply.pieces) : null,
          finish_reason: call ? "tool_calls" : reply.finishReason,
        })),
        ...(this.reportUsage ? { usage } : {}),
      }));
      return true;
    }
    const chunk = (choices: unknown[], extra: Record<string, unknown> = {}) =>
      `data: ${JSON.stringify({ id, object: "chat.completion.chunk", created, model, choices, ...extra })}\n\n`;
    const indexes = Array.from({ length: choices }, (_, index) => index);
    const events = call
      ? [
        chunk([{ index: 0, delta: { role: "assistant", content: null, tool_calls: [{ index: 0, id: call.id, type: "function", function: { name: call.name, arguments: "" } }] }, finish_reason: null }]),
        ...call.fragments.map((part) => chunk([{ index: 0, delta: { tool_calls: [{ index: 0, function: { arguments: part } }] }, finish_reason: null }])),
        chunk([{ index: 0, delta: {}, finish_reason: "tool_calls" }]),
      ]
      : [
        // `n` choices interleave, piece by piece, as OpenAI streams them
        ...indexes.map((index) => chunk([{ index, delta: { role: "assistant", content: "" }, finish_reason: null }])),
        ...reply.pieces.flatMap((piece) => indexes.map((index) => chunk([{ index, delta: { content: piece }, logprobs: logprobs ? fakeLogprobs([piece]) : null, finish_reason: null }]))),
        ...indexes.map((index) => chunk([{ index, delta: {}, finish_reason: reply.finishReason }])),
      ];
    if (this.reportUsage && body.stream_options?.include_usage === true) events.push(chunk([], { usage }));
    events.push("data: [DONE]\n\n");
    await writeSse(ctx, events, () => this.pause());
    return true;
  }

  private async floodStream(ctx: HandlerContext, bytes: number, chunk: (choices: unknown[]) => string): Promise<void> {
    const { res } = ctx;
    const flood = this.flood;
    flood.sentBytes = 0;
    flood.closed = false;
    res.on("close", () => { flood.closed = true; });
    res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
    const piece = chunk([{ index: 0, delta: { content: " lorem ipsum".repeat(1365) }, finish_reason: null }]);
    await writeWhenRead(res, chunk([{ index: 0, delta: { role: "assistant", content: "" }, finish_reason: null }]));
    while (flood.sentBytes < bytes && !res.destroyed) {
      flood.sentBytes += piece.length;
      await writeWhenRead(res, piece);
    }
    if (!res.destroyed) res.end(`${chunk([{ index: 0, delta: {}, finish_reason: "length" }])}data: [DONE]\n\n`);
  }

  private async completion(ctx: HandlerContext, body: ChatBody): Promise<boolean> {
    if (typeof body.prompt !== "string") return this.badRequest(ctx, "prompt must be a string");
    const reply = fakeCompletion(body.prompt, typeof body.max_tokens === "number" ? body.max_tokens : undefined);
    // like OpenAI, best_of candidates are all generated and billed; one is returned
    if (typeof body.best_of === "number") reply.completionTokens *= body.best_of;
    const head = { id: `cmpl-${randomUUID()}`, object: "text_completion", created: Math.floor(Date.now() / 1000), model: String(body.model) };
    const echo = body.echo === true ? body.prompt : "";
    if (body.stream !== true) {
      sendBody(ctx, "application/json", JSON.stringify({
        ...head,
        // like OpenAI, `echo: true` repeats the prompt before the completion (its tokens billed as prompt only)
        choices: [{ text: echo + reply.content, index: 0, logprobs: null, finish_reason: reply.finishReason }],
        ...(this.reportUsage ? { usage: this.usage(reply) } : {}),
      }));
      return true;
    }
    // OpenAI's legacy stream: one chunk per word, the finish reason on a last chunk of empty text, then usage when asked
    const chunk = (choices: unknown[], extra: Record<string, unknown> = {}) => `data: ${JSON.stringify({ ...head, choices, ...extra })}\n\n`;
    const events = [
      ...(echo ? [echo] : []).concat(reply.pieces).map((text) => chunk([{ text, index: 0, logprobs: null, finish_reason: null }])),
      chunk([{ text: "", index: 0, logprobs: null, finish_reason: reply.finishReason }]),
    ];
    if (this.reportUsage && body.stream_options?.include_usage === true) events.push(chunk([], { usage: this.usage(reply) }));
    events.push("data: [DONE]\n\n");
    await writeSse(ctx, events, () => this.pause());
    return true;
  }

  private embeddings(ctx: HandlerContext, body: ChatBody): boolean {
    const inputs = embeddingInputs(body.input);
    if (!inputs) return this.badRequest(ctx, "input must be a string, an array of strings, an array of token ids or an array of token arrays");
    const base64 = body.encoding_format === "base64";
    // a text's tokens are its words; a token array's are its ids
    const promptTokens = inputs.reduce((sum: number, input) => sum + (typeof input === "string" ? wordCount(input) : input.length), 0);
    sendBody(ctx, "application/json", JSON.stringify({
      object: "list",
      data: inputs.map((input, index: number) => {
        const vector = fakeEmbedding(input);
        return { object: "embedding", index, embedding: base64 ? encodeFloat32Base64(vector) : vector };
      }),
      model: String(body.model),
      ...(this.reportUsage ? { usage: { prompt_tokens: promptTokens, total_tokens: promptTokens } } : {}),
    }));
    return true;
  }

  private images(ctx: HandlerContext, body: ChatBody): boolean {
    if (typeof body.prompt !== "string" || body.prompt.length === 0) return this.badRequest(ctx, "prompt is required");
    const n = typeof body.n === "number" ? body.n : 1;
    if (!Number.isInteger(n) || n < 1 || n > 10) return this.badRequest(ctx, "n must be between 1 and 10");
    if (typeof body.size !== "string" || !/^\d+x\d+$/.test(body.size)) return this.badRequest(ctx, "size must look like WxH");
    const b64 = body.response_format === "b64_json";
    const id = randomUUID();
    sendBody(ctx, "application/json", JSON.stringify({
      created: Math.floor(Date.now() / 1000),
      data: Array.from({ length: n }, (_, i) =>
        b64 ? { b64_json: TINY_PNG.toString("base64"), revised_prompt: body.prompt } : { url: `${this.url}/images/${id}-${i}.png`, revised_prompt: body.prompt }),
    }));
    return true;
  }
}
