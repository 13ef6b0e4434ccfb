// A fake Anthropic Messages server written from Anthropic's public API reference (not from the gateway's adapter):
// POST /v1/messages with x-api-key and anthropic-version, its validation errors, JSON answers and SSE streams.
import http from "node:http";
import type { AddressInfo } from "node:net";

export interface RecordedRequest { headers: http.IncomingHttpHeaders; json: Record<string, unknown> }
export type Handler = (req: RecordedRequest, res: http.ServerResponse) => void | Promise<void>;

export interface DocsAnthropic {
  url: string;
  requests: RecordedRequest[];
  /** handlers for the next requests, in order; then the default */
  queue: Handler[];
  close(): Promise<void>;
}

export function anthropicError(res: http.ServerResponse, status: number, type: string, message: string, headers: Record<string, string> = {}): void {
  res.writeHead(status, { "content-type": "application/json", "request-id": "req_fake", ...headers });
  res.end(JSON.stringify({ type: "error", error: { type, message }, request_id: "req_fake" }));
}

type Block = Record<string, unknown>;
const blocksOf = (content: unknown): Block[] => (typeof content === "string" ? [{ type: "text", text: content }] : (content as Block[]));

/** Anthropic's request checks that matter to a translation: returns the error message, or undefined. */
export function validateMessages(body: Record<string, unknown>): string | undefined {
  if (typeof body.model !== "string") return "model: Field required";
  if (typeof body.max_tokens !== "number") return "max_tokens: Field required";
  const messages = body.messages as Array<{ role: string; content: unknown }>;
  if (!Array.isArray(messages) || messages.length === 0) return "messages: at least one message is required";
  if (body.temperature !== undefined && (typeof body.temperature !== "number" || body.temperature < 0 || body.temperature > 1)) return "temperature: Input should be less than or equal to 1";
  if (body.top_p !== undefined && (typeof body.top_p !== "number" || body.top_p < 0 || body.top_p > 1)) return "top_p: Input should be less than or equal to 1";
  if (body.stop_sequences !== undefined) {
    const s = body.stop_sequences as unknown[];
    if (!Array.isArray(s) || s.some((x) => typeof x !== "string" || x.trim() === "")) return "stop_sequences: each stop sequence must contain non-whitespace";
  }
  if (body.system !== undefined) {
    if (typeof body.system !== "string" && !(Array.isArray(body.system) && body.system.every((b: Block) => b.type === "text" && typeof b.text === "string" && b.text !== ""))) return "system: Input should be a valid string or list of text blocks";
  }
  const tools = (body.tools as Array<{ name: string; input_schema?: { type?: string } }> | undefined) ?? [];
  for (const t of tools) {
    if (!/^[a-zA-Z0-9_-]{1,128}$/.test(t.name)) return "tools.0.custom.name: String should match pattern '^[a-zA-Z0-9_-]{1,128}$'";
    if (t.input_schema?.type !== "object") return "tools.0.custom.input_schema.type: Input should be 'object'";
  }
  if (body.tool_choice !== undefined && tools.length === 0 && (body.tool_choice as Block).type !== "none") return "tool_choice may only be specified while providing tools.";
  const toolBlocks = messages.some((m) => Array.isArray(m.content) && (m.content as Block[]).some((b) => b.type === "tool_use" || b.type === "tool_result"));
  if (toolBlocks && tools.length === 0) return "Requests which include `tool_use` or `tool_result` blocks must define tools.";
  for (const [i, m] of messages.entries()) {
    if (m.role !== "user" && m.role !== "assistant") return `messages.${i}.role: Input should be 'user' or 'assistant'`;
    const last = i === messages.length - 1;
    if (typeof m.content === "string") {
      if (m.content === "" && !(last && m.role === "assistant")) return `messages.${i}: all messages must have non-empty content except for the optional final assistant message`;
      if (last && m.role === "assistant" && /\s$/.test(m.content)) return "messages: final assistant content cannot end with trailing whitespace";
      continue;
    }
    if (!Array.isArray(m.content)) return `messages.${i}.content: Input should be a valid list`;
    if (m.content.length === 0 && !(last && m.role === "assistant")) return `messages.${i}: all messages must have non-empty content except for the optional final assistant message`;
    const tail = (m.content as Block[]).at(-1);
    if (last && m.role === "assistant" && tail?.type === "text" && /\s$/.test(String(tail.text))) return "messages: final assistant content cannot end with trailing whitespace";
    for (const [j, b] of (m.content as Block[]).entries()) {
      if (b.type === "text" && (typeof b.text !== "string" || b.text === "")) return `messages.${i}.content.${j}.text: text content blocks must be non-empty`;
      if (b.type === "image") {
        const src = b.source as Block;
        if (src.type === "base64" && !["image/jpeg", "image/png", "image/gif", "image/webp"].includes(src.media_type as string)) return `messages.${i}.content.${j}.image.source.base64.media_type: Input should be 'image/jpeg', 'image/png', 'image/gif' or 'image/webp'`;
        if (src.type === "url" && !/^https?:\/\//.test(src.url as string)) return `messages.${i}.content.${j}.image.source.url: Only http(s) URLs are supported`;
        if (m.role !== "user") return `messages.${i}: image blocks only in user turns`;
      }
      if (b.type === "tool_use" && m.role !== "assistant") return `messages.${i}.content.${j}: tool_use only in assistant turns`;
      if (b.type === "tool_result" && m.role !== "user") return `messages.${i}.content.${j}: tool_result only in user turns`;
    }
    // every tool_use of an assistant turn answered in the next (user) message, tool_results first
    const uses = (m.content as Block[]).filter((b) => b.type === "tool_use").map((b) => b.id as string);
    if (uses.length > 0) {
      const next = messages[i + 1];
      const nextBlocks = next ? blocksOf(next.content) : [];
      const results = nextBlocks.filter((b) => b.type === "tool_result").map((b) => b.tool_use_id as string);
      const missing = uses.filter((id) => !results.includes(id));
      if (next && missing.length > 0) return `messages.${i + 1}: \`tool_use\` ids were found without \`tool_result\` blocks immediately after: ${missing.join(", ")}. Each \`tool_use\` block must have a corresponding \`tool_result\` block in the next message.`;
    }
    const results = (m.content as Block[]).filter((b) => b.type === "tool_result");
    if (results.length > 0) {
      const prev = messages[i - 1];
      const prevUses = prev ? blocksOf(prev.content).filter((b) => b.type === "tool_use").map((b) => b.id) : [];
      for (const r of results) if (!prevUses.includes(r.tool_use_id)) return `messages.${i}.content: unexpected \`tool_use_id\` found in \`tool_result\` blocks: ${String(r.tool_use_id)}. Each \`tool_result\` block must have a corresponding \`tool_use\` block in the previous message.`;
      const firstNonResult = (m.content as Block[]).findIndex((b) => b.type !== "tool_result");
      const lastResult = (m.content as Block[]).map((b) => b.type).lastIndexOf("tool_result");
      if (firstNonResult !== -1 && firstNonResult < lastResult) return `messages.${i}: tool_result blocks must come first in the user message`;
    }
  }
  return undefined;
}

export interface Reply { content: Block[]; stop_reason: string; usage: Record<string, number> }

/** A reply of words; stop at max_tokens words with stop_reason max_tokens. */
export function textReply(body: Record<string, unknown>, words: string[], usage: Record<string, number> = { input_tokens: 100 }): Reply {
  const max = body.max_tokens as number;
  const cut = words.slice(0, max);
  return { content: [{ type: "text", text: cut.join(" ") }], stop_reason: cut.length < words.length ? "max_tokens" : "end_turn", usage: { ...usage, output_tokens: cut.length } };
}

export function sendJson(res: http.ServerResponse, body: Record<string, unknown>, reply: Reply): void {
  res.writeHead(200, { "content-type": "application/json", "request-id": "req_fake" });
  res.end(JSON.stringify({
    id: "msg_01XFDUDYJgAACzvnptvVoYEL", type: "message", role: "assistant", model: body.model, content: reply.content,
    stop_reason: reply.stop_reason, stop_sequence: null, usage: reply.usage,
  }));
}

export function sse(res: http.ServerResponse, name: string, data: unknown): void {
  res.write(`event: ${name}\ndata: ${JSON.stringify(data)}\n\n`);
}

/** The documented event order; `cutAfter` events, the connection is destroyed. */
export function sendStream(res: http.ServerResponse, body: Record<string, unknown>, reply: Reply, opts: { cutAfterDeltas?: number; errorAfterDeltas?: { type: string; message: string }; splitJson?: boolean } = {}): void {
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", "request-id": "req_fake" });
  const { output_tokens: out, ...promptUsage } = reply.usage;
  sse(res, "message_start", { type: "message_start", message: { id: "msg_1", type: "message", role: "assistant", model: body.model, content: [], stop_reason: null, stop_sequence: null, usage: { ...promptUsage, output_tokens: 1 } } });
  sse(res, "ping", { type: "ping" });
  let deltas = 0;
  const afterDelta = (): boolean => {
    deltas++;
    if (opts.cutAfterDeltas !== undefined && deltas >= opts.cutAfterDeltas) { setTimeout(() => res.destroy(), 200); return true; }
    if (opts.errorAfterDeltas && deltas >= 1) { sse(res, "error", { type: "error", error: opts.errorAfterDeltas }); res.end(); return true; }
    return false;
  };
  for (const [index, block] of reply.content.entries()) {
    if (block.type === "text") {
      sse(res, "content_block_start", { type: "content_block_start", index, content_block: { type: "text", text: "" } });
      const words = (block.text as string).split(" ");
      for (const [i, w] of words.entries()) {
        sse(res, "content_block_delta", { type: "content_block_delta", index, delta: { type: "text_delta", text: i === 0 ? w : ` ${w}` } });
        if (afterDelta()) return;
      }
    } else if (block.type === "tool_use") {
      sse(res, "content_block_start", { type: "content_block_start", index, content_block: { type: "tool_use", id: block.id, name: block.name, input: {} } });
      const json = JSON.stringify(block.input);
      sse(res, "content_block_delta", { type: "content_block_delta", index, delta: { type: "input_json_delta", partial_json: "" } });
      const pieces = json === "{}" ? [] : [json.slice(0, 5), json.slice(5)];
      for (const p of pieces) {
        sse(res, "content_block_delta", { type: "content_block_delta", index, delta: { type: "input_json_delta", partial_json: p } });
        if (afterDelta()) return;
      }
    }
    sse(res, "content_block_stop", { type: "content_block_stop", index });
  }
  sse(res, "message_delta", { type: "message_delta", delta: { stop_reason: reply.stop_reason, stop_sequence: null }, usage: { output_tokens: out } });
  sse(res, "message_stop", { type: "message_stop" });
  res.end();
}

/** The default behaviour: validate like Messages, then answer "Hello there friend" (streamed or not). */
export const defaultHandler: Handler = (req, res) => {
  const problem = validateMessages(req.json);
  if (problem) return anthropicError(res, 400, "invalid_request_error", problem);
  const reply = textReply(req.json, ["Hello", "there", "friend"]);
  if (req.json.stream === true) sendStream(res, req.json, reply);
  else sendJson(res, req.json, reply);
};

export async function startDocsAnthropic(apiKey = "sk-ant-test"): Promise<DocsAnthropic> {
  const fake: DocsAnthropic = { url: "", requests: [], queue: [], close: async () => undefined };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      if (req.method !== "POST" || req.url !== "/v1/messages") return anthropicError(res, 404, "not_found_error", "Not found");
      if (req.headers["x-api-key"] !== apiKey) return anthropicError(res, 401, "authentication_error", "invalid x-api-key");
      if (req.headers["anthropic-version"] !== "2023-06-01") return anthropicError(res, 400, "invalid_request_error", "anthropic-version: header is required");
      let json: Record<string, unknown>;
      try {
        json = JSON.parse(Buffer.concat(chunks).toString("utf8")) as Record<string, unknown>;
      } catch {
        return anthropicError(res, 400, "invalid_request_error", "invalid JSON");
      }
      const recorded = { headers: req.headers, json };
      fake.requests.push(recorded);
      void (fake.queue.shift() ?? defaultHandler)(recorded, res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  fake.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  fake.close = () => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()); });
  return fake;
}
