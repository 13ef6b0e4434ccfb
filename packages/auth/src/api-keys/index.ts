export { KEY_PREFIX_LENGTH, generateApiKey, hashApiKey, isWellFormedApiKey } from "./key-format";
export { localRevocationBus, redisRevocationBus, type RevocationBus } from "./revocation-bus";
export {
  ApiKeyService, type ApiKeyManager, type ApiKeyServiceOptions, type ApiKeySummary, type CreatedApiKey, type KeyPrincipal,
} from "./service";
