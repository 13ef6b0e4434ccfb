export * from "./types";
export { answersNChoicesAtOnce, createProviderGateway, type ProviderGatewayOptions } from "./create-provider-gateway";
export { CATALOG_CREATED, findModel, listModels, publicPricing, type ModelListEntry, type PublicPricing } from "./catalog";
export { chatOutputText, StreamInterruptedError, deltaOutputText, withoutEcho } from "./text-stream";
export { COMPLETION_DEFAULT_MAX_TOKENS } from "./completion-as-chat";
export { countMessageTokens, countTokens, countToolCallTokens } from "./tokens";
export { FLUX_MAX_SIDE, FLUX_MIN_SIDE, FLUX_SIDE_STEP, sizeForAspectRatio } from "./flux/size";
export type { HealthReport, HealthStatus } from "./health";
export { imageFormat } from "./media-check";
