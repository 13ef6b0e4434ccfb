import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { Writable } from "node:stream";
import { Readable } from "node:stream";
import { getMetricsFromStream, type PromData, type PromHistogramData, type PromMetrics } from "prom2javascript";

const sameLabels = (series: { labels: Record<string, string> }, labels: Record<string, string>) =>
  Object.entries(labels).every(([k, v]) => series.labels[k] === v);

/** A /metrics answer read by a Prometheus text-format parser. */
export class Scrape {
  constructor(readonly families: PromMetrics) {}

  /**
   * Samples whose value is NaN (prom-client writes `Nan`, an event loop gauge before its first sample) are left out:
   * Prometheus reads them (Go's ParseFloat takes any letter case), this parser refuses them.
   */
  static async parse(text: string): Promise<Scrape> {
    const readable = text.split("\n").filter((line) => !/ nan$/i.test(line)).join("\n");
    return new Scrape(await getMetricsFromStream(Readable.from([readable])));
  }

  /** A family's type as the exposition declares it (`counter`, `gauge`, `histogram`). */
  type(name: string): string | undefined {
    return this.families[name]?.type;
  }

  /** A counter's or gauge's value for the series with these labels (0 when it does not exist yet). */
  value(name: string, labels: Record<string, string> = {}): number {
    const series = (this.families[name]?.data ?? []) as PromData[];
    return series.find((s) => sameLabels(s, labels))?.value ?? 0;
  }

  /** A histogram's observation count for the series with these labels (0 when it does not exist yet). */
  count(name: string, labels: Record<string, string> = {}): number {
    const series = (this.families[name]?.data ?? []) as PromHistogramData[];
    return series.find((s) => sameLabels(s, labels))?.count ?? 0;
  }

  /** Every label value of every series of the families whose names start so. */
  labelValues(prefix: string): string[] {
    return Object.entries(this.families).filter(([name]) => name.startsWith(prefix))
      .flatMap(([, family]) => (family.data as Array<{ labels: Record<string, string> }>).flatMap((s) => Object.values(s.labels)));
  }
}

/** OTLP/HTTP JSON as the exporter sends it (the fields the tests read). */
export interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes: Array<{ key: string; value: { stringValue?: string; intValue?: string | number } }>;
  status?: { code?: number; message?: string };
}

/** A local OpenTelemetry collector: takes OTLP/HTTP JSON trace exports on POST /v1/traces. */
export class OtlpCollector {
  readonly spans: OtlpSpan[] = [];
  readonly contentTypes: string[] = [];
  private server?: Server;
  url = "";

  async start(): Promise<this> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c)).on("end", () => {
        if (req.method === "POST" && req.url === "/v1/traces") {
          this.contentTypes.push(req.headers["content-type"] ?? "");
          const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as { resourceSpans?: Array<{ scopeSpans?: Array<{ spans?: OtlpSpan[] }> }> };
          for (const rs of body.resourceSpans ?? []) for (const ss of rs.scopeSpans ?? []) this.spans.push(...(ss.spans ?? []));
          res.writeHead(200, { "content-type": "application/json" }).end("{}");
        } else res.writeHead(404).end();
      });
    });
    await new Promise<void>((resolve) => this.server?.listen(0, "127.0.0.1", resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  async close(): Promise<void> {
    await new Promise<void>((resolve) => this.server?.close(() => resolve()));
  }
}

/** A pino destination keeping every line, parsed. */
export class LogCapture extends Writable {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  readonly lines: any[] = [];
  readonly raw: string[] = [];

  override _write(chunk: Buffer, _encoding: BufferEncoding, done: () => void): void {
    for (const line of chunk.toString("utf8").split("\n")) {
      if (!line) continue;
      this.raw.push(line);
      this.lines.push(JSON.parse(line));
    }
    done();
  }
}
