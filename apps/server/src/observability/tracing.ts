import type { Tracer } from "@opentelemetry/api";
import type { Config } from "@gw/config";

export type OtlpSettings = NonNullable<Config["observability"]["otlp"]>;

/** The tracer of an app whose tracing is on, and how to flush and stop it. */
export interface Tracing {
  tracer: Tracer;
  shutdown(): Promise<void>;
}

/**
 * Starts the OpenTelemetry SDK: spans batched and exported as OTLP/HTTP JSON to `{endpoint}/v1/traces`. The SDK is
 * loaded here, on demand, so that a gateway without OTEL_EXPORTER_OTLP_ENDPOINT never loads it. Registering the
 * provider also installs the AsyncLocalStorage context manager, which gives log lines their trace id.
 */
export async function startTracing(otlp: OtlpSettings): Promise<Tracing> {
  const [{ NodeTracerProvider, BatchSpanProcessor }, { OTLPTraceExporter }, { resourceFromAttributes }] = await Promise.all([
    import("@opentelemetry/sdk-trace-node"),
    import("@opentelemetry/exporter-trace-otlp-http"),
    import("@opentelemetry/resources"),
  ]);
  const exporter = new OTLPTraceExporter({ url: `${otlp.endpoint}/v1/traces`, headers: otlp.headers });
  const provider = new NodeTracerProvider({
    resource: resourceFromAttributes({ "service.name": otlp.serviceName }),
    spanProcessors: [new BatchSpanProcessor(exporter)],
  });
  provider.register();
  return { tracer: provider.getTracer("ai-gateway"), shutdown: () => provider.shutdown() };
}
