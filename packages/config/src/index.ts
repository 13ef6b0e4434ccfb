export * from "./defaults";
export * from "./load";
export type { Config, ProviderEndpoint } from "./schema";
export { loadEnvFile } from "./env-file";
