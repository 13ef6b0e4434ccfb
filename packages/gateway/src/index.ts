// The gateway's domain: a metered model call (hold → upstream → settle, or release) for plain and streamed calls,
// prices and cost functions, moderation of image prompts, and the stores of once-only and stored answers.
export { CreditHold, type KeyBudget } from "./metered-call/credit-hold";
export { MeteredCall, Metering, type CallObservation, type MeteredRequest, type MeteringDeps, type PlainCall, type UsageRecord } from "./metered-call/metered-call";
export { meteredTextStream, type EventSink, type TextCallUsage, type TextStream } from "./metered-call/text-stream";
export {
  AUDIO_BYTES_PER_SECOND_FLOOR, IMAGE_PART_TOKENS, MIN_BILLED_SECONDS, TOKENS_PER_MESSAGE, TOKENS_PER_REPLY,
  audioCost, billedSeconds, characterCost, dearestOf, imageCost, imageUnitPrice, textCost,
} from "./pricing/pricing";
export { completionBudget, completionPromptTokens, countPromptTokens, type Tokenizer } from "./pricing/text-budget";
export { declaredAudioSeconds, heldAudioSeconds, producedAudioSeconds } from "./pricing/audio-duration";
export { checkLocalPolicy, moderateImagePrompt, type ModerationCategory } from "./moderation/index";
export { IdempotencyStore, type BeginResult, type StoredAnswer } from "./idempotency/idempotency-store";
export { ResponseStore, RESPONSE_RETENTION_DAYS } from "./responses/response-store";
