export {
  NO_CONTROLS, checkKeyAccess, checkKeyModel, compileAccess, parseIpOrCidr,
  type KeyAccess, type KeyControls, type KeyRateLimit,
} from "./controls";
export { KEY_PREFIX_LENGTH, generateApiKey, hashApiKey, isWellFormedApiKey } from "./key-format";
export { localRevocationBus, redisRevocationBus, type RevocationBus } from "./revocation-bus";
export {
  ApiKeyService, type ApiKeyManager, type ApiKeyServiceOptions, type ApiKeySummary, type CreatedApiKey, type KeyPrincipal, type RotatedApiKey,
} from "./service";
