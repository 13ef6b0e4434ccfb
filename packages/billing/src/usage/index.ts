export * from "./record";
export { UsageRepository, USAGE_BLOCKS_COLLECTION, type UsageFilter, type UsageQuery, type UsageTotalsRow } from "./usage-repository";
