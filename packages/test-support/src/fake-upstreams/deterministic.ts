// The fakes' outputs are functions of their inputs, so tests can compute exact usage and charges.
import { createHash } from "node:crypto";

export interface FakeMessage {
  role: string;
  /** OpenAI: a string, text parts or null (an assistant turn that only called tools); Anthropic: a string or blocks */
  content: unknown;
}

/** A message's text: the string, or its text parts (and tool results) joined. */
export function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content.map((part: { type?: unknown; text?: unknown; content?: unknown }) =>
    (part.type === "text" && typeof part.text === "string" ? part.text : part.type === "tool_result" ? textOf(part.content) : "")).join("");
}

/** What one image in a prompt costs at the fakes, like a real upstream's fixed share per picture. */
export const FAKE_IMAGE_TOKENS = 1000;

/** A message's prompt tokens: its words, plus FAKE_IMAGE_TOKENS per image part (OpenAI image_url, Anthropic image). */
export function promptTokensOf(content: unknown): number {
  const images = Array.isArray(content)
    ? content.filter((part: { type?: unknown }) => part.type === "image_url" || part.type === "image").length
    : 0;
  return wordCount(textOf(content)) + images * FAKE_IMAGE_TOKENS;
}

export interface FakeReply {
  content: string;
  /** the reply as streamed: one piece per word */
  pieces: string[];
  promptTokens: number;
  completionTokens: number;
  finishReason: "stop" | "length";
}

/** A "token" is a whitespace-separated word. */
export const wordCount = (text: string): number => text.split(/\s+/).filter(Boolean).length;

/** The reply is "Echo:" followed by the input's words, cut to maxTokens words. */
export function fakeReplyFor(input: string, promptTokens: number, maxTokens?: number): FakeReply {
  const words = ["Echo:", ...input.split(/\s+/).filter(Boolean)];
  const limit = maxTokens === undefined ? words.length : Math.min(words.length, maxTokens);
  const used = words.slice(0, limit);
  return {
    content: used.join(" "),
    pieces: used.map((word, i) => (i === 0 ? word : ` ${word}`)),
    promptTokens,
    completionTokens: used.length,
    finishReason: limit < words.length ? "length" : "stop",
  };
}

/** Chat (OpenAI and Anthropic fakes): prompt tokens = words (and images) of every message, reply echoes the last user message. */
export function fakeChatReply(messages: readonly FakeMessage[], maxTokens?: number, system = ""): FakeReply {
  // a tool's answer (OpenAI role "tool", or an Anthropic user turn of tool_result blocks) counts as the user's turn
  const lastUser = [...messages].reverse().find((m) => m.role === "user" || m.role === "tool");
  const promptTokens = wordCount(system) + messages.reduce((sum, m) => sum + promptTokensOf(m.content), 0);
  return fakeReplyFor(textOf(lastUser?.content), promptTokens, maxTokens);
}

/** The tool call a fake makes when it is offered tools and the last turn is the user's (not a tool result). */
export interface FakeToolCall {
  id: string;
  name: string;
  /** JSON text: {"query": <the last user message>} */
  arguments: string;
  /** the arguments as streamed: two fragments */
  fragments: [string, string];
  promptTokens: number;
  completionTokens: number;
}

export function fakeToolCall(messages: readonly FakeMessage[], toolName: string | undefined, system = ""): FakeToolCall | undefined {
  const last = messages.at(-1);
  const answeringTool = last?.role === "tool" || (Array.isArray(last?.content) && (last.content as Array<{ type?: unknown }>).some((b) => b.type === "tool_result"));
  if (toolName === undefined || answeringTool) return undefined;
  const args = JSON.stringify({ query: textOf(last?.content) });
  const cut = Math.floor(args.length / 2);
  return {
    id: `call_${createHash("sha256").update(args).digest("hex").slice(0, 12)}`,
    name: toolName,
    arguments: args,
    fragments: [args.slice(0, cut), args.slice(cut)],
    promptTokens: wordCount(system) + messages.reduce((sum, m) => sum + promptTokensOf(m.content), 0),
    completionTokens: 1 + wordCount(args),
  };
}

export function fakeCompletion(prompt: string, maxTokens?: number): FakeReply {
  return fakeReplyFor(prompt, wordCount(prompt), maxTokens);
}

export const FAKE_EMBEDDING_DIMENSIONS = 8;

/** float32-exact numbers, so the JSON and base64 encodings carry the same vector. A token array is hashed as its JSON. */
export function fakeEmbedding(input: string | readonly number[]): number[] {
  const digest = createHash("sha256").update(typeof input === "string" ? input : JSON.stringify(input)).digest();
  return Array.from({ length: FAKE_EMBEDDING_DIMENSIONS }, (_, i) => Math.fround(((digest[i] ?? 0) - 128) / 128));
}

export function encodeFloat32Base64(vector: readonly number[]): string {
  const buffer = Buffer.alloc(vector.length * 4);
  vector.forEach((value, i) => buffer.writeFloatLE(value, i * 4));
  return buffer.toString("base64");
}

/** Audio is taken as 16 kHz 8-bit mono: 16,000 bytes per second. */
export const FAKE_AUDIO_BYTES_PER_SECOND = 16_000;

export function fakeTranscription(audio: Buffer): { text: string; durationSeconds: number } {
  return { text: `transcript of ${audio.length} bytes`, durationSeconds: audio.length / FAKE_AUDIO_BYTES_PER_SECOND };
}

export function fakeSpeech(voiceId: string, outputFormat: string, text: string): Buffer {
  return Buffer.from(`FAKE-AUDIO|${voiceId}|${outputFormat}|${text}`);
}

/** A valid 1x1 transparent PNG. */
export const TINY_PNG = Buffer.from(
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=",
  "base64",
);
