// The parts of Anthropic Messages answers we read.
import { z } from "zod";

const tokens = z.number().int().nonnegative();
/** Cache writes and reads are counted apart from input_tokens (null or absent when the prompt used no cache). */
const cacheTokens = { cache_creation_input_tokens: tokens.nullish(), cache_read_input_tokens: tokens.nullish() };

export const messageResponseSchema = z.compile(z.looseObject({
  content: z.array(z.looseObject({
    type: z.string(),
    text: z.string().optional(),
    // tool_use blocks
    id: z.string().optional(),
    name: z.string().optional(),
    input: z.unknown().optional(),
  })),
  stop_reason: z.string().nullish(),
  stop_sequence: z.string().nullish(),
  usage: z.looseObject({ input_tokens: tokens.nullish(), output_tokens: tokens.nullish(), ...cacheTokens }).nullish(),
}));

export const errorEventSchema = z.compile(z.looseObject({
  type: z.literal("error"),
  error: z.looseObject({ type: z.string().optional(), message: z.string().optional() }),
}));

export const streamEventSchema = z.compile(z.discriminatedUnion("type", [
  z.looseObject({
    type: z.literal("message_start"),
    message: z.looseObject({
      usage: z.looseObject({ input_tokens: tokens.optional(), output_tokens: tokens.optional(), ...cacheTokens }).nullish(),
    }),
  }),
  z.looseObject({
    type: z.literal("content_block_delta"),
    index: z.number().int().nonnegative().optional(),
    delta: z.looseObject({ type: z.string(), text: z.string().optional(), partial_json: z.string().optional() }),
  }),
  z.looseObject({
    type: z.literal("content_block_start"),
    index: z.number().int().nonnegative().optional(),
    content_block: z.looseObject({ type: z.string(), id: z.string().optional(), name: z.string().optional() }),
  }),
  z.looseObject({
    type: z.literal("message_delta"),
    delta: z.looseObject({ stop_reason: z.string().nullish(), stop_sequence: z.string().nullish() }),
    usage: z.looseObject({ output_tokens: tokens.optional(), input_tokens: tokens.nullish(), ...cacheTokens }).nullish(),
  }),
  z.looseObject({ type: z.literal("message_stop") }),
  errorEventSchema,
  z.looseObject({ type: z.literal("content_block_stop"), index: z.number().int().nonnegative().optional() }),
  z.looseObject({ type: z.literal("ping") }),
]));

export const errorMessage = (json: unknown): unknown =>
  typeof json === "object" && json !== null && "error" in json
    ? (json.error as { message?: unknown } | null)?.message
    : undefined;
