// The AppContext type lives in @gw/api so tRPC procedures and Express routes share one definition.
export type { ApiKeyVerifier, AppContext, PlanResolver, Principal, SessionReader } from "@gw/api";
