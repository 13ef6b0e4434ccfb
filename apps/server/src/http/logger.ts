import { context, trace } from "@opentelemetry/api";
import { pino, type DestinationStream, type Logger } from "pino";

/** The trace and span ids of the span active where a line is logged (tracing on), for finding a line's trace. */
function traceIds(): Record<string, string> {
  const span = trace.getSpanContext(context.active());
  return span ? { traceId: span.traceId, spanId: span.spanId } : {};
}

/**
 * `tracing`: lines carry the active span's trace id (OTEL_EXPORTER_OTLP_ENDPOINT set); off, nothing is looked up.
 * `destination`: where lines go (default stdout).
 */
export function createLogger(level: string, tracing = false, destination?: DestinationStream): Logger {
  // Authorization headers, cookies and API keys never reach the logs.
  const options = { level, redact: ["req.headers.authorization", "req.headers.cookie", "key", "*.key", "password", "*.password"], ...(tracing ? { mixin: traceIds } : {}) };
  return destination ? pino(options, destination) : pino(options);
}
