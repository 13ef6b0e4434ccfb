// The parts of OpenAI's answers we read. Loose objects: upstreams add fields freely. Compiled (`z.compile`) like the
// gateway's request schemas: one of them parses every upstream answer.
import { z } from "zod";

const usage = z.looseObject({
  prompt_tokens: z.number().int().nonnegative(),
  completion_tokens: z.number().int().nonnegative().optional(),
}).nullish();

export const chatResponseSchema = z.compile(z.looseObject({
  choices: z.array(z.looseObject({
    index: z.number().optional(),
    message: z.looseObject({ content: z.string().nullish() }),
    finish_reason: z.string().nullish(),
    logprobs: z.unknown().optional(),
  })).min(1),
  usage,
}));

export const chatChunkSchema = z.compile(z.looseObject({
  choices: z.array(z.looseObject({
    index: z.number().int().nonnegative().optional(),
    delta: z.looseObject({ content: z.string().nullish() }).nullish(),
    finish_reason: z.string().nullish(),
    logprobs: z.unknown().optional(),
  })).optional(),
  usage,
}));

export const completionResponseSchema = z.compile(z.looseObject({
  choices: z.array(z.looseObject({ text: z.string(), finish_reason: z.string().nullish(), logprobs: z.unknown().optional() })).min(1),
  usage,
}));

export const completionChunkSchema = z.compile(z.looseObject({
  choices: z.array(z.looseObject({ text: z.string().nullish(), finish_reason: z.string().nullish(), logprobs: z.unknown().optional() })).optional(),
  usage,
}));

export const embeddingsResponseSchema = z.compile(z.looseObject({
  data: z.array(z.looseObject({
    index: z.number().int().nonnegative(),
    // float arrays, or little-endian float32 in base64 when encoding_format is base64
    embedding: z.union([z.array(z.number()), z.string()]),
  })),
  usage: z.looseObject({ prompt_tokens: z.number().int().nonnegative() }).nullish(),
}));

export const errorMessage = (json: unknown): unknown =>
  typeof json === "object" && json !== null && "error" in json
    ? (json.error as { message?: unknown } | null)?.message
    : undefined;
