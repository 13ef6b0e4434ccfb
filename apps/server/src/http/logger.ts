import { pino, type Logger } from "pino";

export function createLogger(level: string): Logger {
  // Authorization headers, cookies and API keys never reach the logs.
  return pino({ level, redact: ["req.headers.authorization", "req.headers.cookie", "key", "*.key", "password", "*.password"] });
}
