export * from "./defaults";
export { catalogSchemas, type CreditPackage, type DeploymentDefinition, type LimitName, type LimitRule, type ModelDefinition, type ModelPricing, type ModelType, type PlanDefinition, type Protocol, type ProviderName } from "./catalog-schema";
export { ConfigError } from "./config-error";
export { loadConfig } from "./load";
export { SESSION_SECRET_MIN_LENGTH, type Config } from "./schema";
export { loadEnvFile } from "./env-file";
export { embeddedDatabaseEnv } from "./child-env";
