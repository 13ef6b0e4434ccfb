import { once } from "node:events";
import type { Response } from "express";

/**
 * RFC 4180: a field with a comma, a quote or a line break is quoted, its quotes doubled. A text that a spreadsheet
 * would read as a formula starts with `'` (OWASP's CSV injection advice); numbers are written as they are.
 */
function csvField(value: unknown): string {
  if (value === null || value === undefined) return "";
  const text = typeof value === "string" && /^[=+\-@\t\r]/.test(value) ? `'${value}` : String(value);
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

const csvLine = (values: unknown[]): string => `${values.map(csvField).join(",")}\r\n`;

/** Until the client read what was written, or left. */
async function drained(res: Response): Promise<void> {
  const stop = new AbortController();
  try {
    await Promise.race([once(res, "drain", { signal: stop.signal }), once(res, "close", { signal: stop.signal })]);
  } finally {
    stop.abort();
  }
}

/** Rows written per chunk: few enough to keep memory small, enough to keep writes few. */
const ROWS_PER_CHUNK = 200;

/**
 * Streams rows as CSV (`text/csv`, a header row of `fields`, one line per row) as they come, waiting for the client
 * to read what was written before taking more: memory stays bounded whatever the number of rows. A client that goes
 * away stops the reading (the iterator is closed).
 */
export async function streamCsv(res: Response, filename: string, fields: string[], rows: AsyncIterable<Record<string, unknown>>): Promise<void> {
  res.status(200);
  res.setHeader("Content-Type", "text/csv; charset=utf-8");
  res.setHeader("Content-Disposition", `attachment; filename="${filename}"`);
  let chunk = csvLine(fields);
  let pending = 0;
  for await (const row of rows) {
    if (res.destroyed) break;
    chunk += csvLine(fields.map((f) => row[f]));
    pending += 1;
    if (pending < ROWS_PER_CHUNK) continue;
    const flushed = res.write(chunk);
    chunk = "";
    pending = 0;
    if (!flushed) await drained(res);
  }
  res.end(chunk);
}
