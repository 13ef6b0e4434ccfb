// Classifies what undici throws so the client knows whether to retry and which AppError to surface.

export type TransportFailure = "connection" | "timeout" | "too-large" | "other";

const CONNECTION_CODES = new Set([
  "ECONNREFUSED", "ECONNRESET", "EPIPE", "ENOTFOUND", "EAI_AGAIN", "EHOSTUNREACH", "ENETUNREACH",
  "UND_ERR_SOCKET", "UND_ERR_CONNECT_TIMEOUT", "UND_ERR_CLOSED",
]);

const TIMEOUT_CODES = new Set(["UND_ERR_HEADERS_TIMEOUT", "UND_ERR_BODY_TIMEOUT", "ETIMEDOUT"]);

function codeOf(err: unknown): string | undefined {
  if (typeof err !== "object" || err === null) return undefined;
  const code = (err as { code?: unknown }).code;
  if (typeof code === "string") return code;
  // fetch-style wrappers keep the system error in `cause`
  return codeOf((err as { cause?: unknown }).cause);
}

export function classifyTransportError(err: unknown): TransportFailure {
  const code = codeOf(err);
  if (code === undefined) return "other";
  if (CONNECTION_CODES.has(code)) return "connection";
  if (TIMEOUT_CODES.has(code)) return "timeout";
  if (code === "UND_ERR_RES_EXCEEDED_MAX_SIZE") return "too-large";
  return "other";
}
