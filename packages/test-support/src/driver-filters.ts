import { mongo } from "mongoose";

/** The driver calls that take a filter: reads, and the updates that find what they change. */
const FILTERED_CALLS = ["findOne", "find", "countDocuments", "aggregate", "distinct", "updateOne", "updateMany", "findOneAndUpdate"] as const;

export interface SentFilter {
  collection: string;
  filter: unknown;
}

/**
 * Every filter the MongoDB driver is given while `run` runs, with its collection: what a test of reads by `_id` checks
 * (FerretDB's SQLite backend serves only `{_id: value}` from an index; any other filter reads the whole collection).
 */
export async function filtersSent(run: () => Promise<unknown>): Promise<SentFilter[]> {
  const sent: SentFilter[] = [];
  const prototype = mongo.Collection.prototype as unknown as Record<string, (...args: unknown[]) => unknown>;
  const originals = FILTERED_CALLS.map((name) => [name, prototype[name]] as const);
  for (const [name, original] of originals) {
    prototype[name] = function (this: mongo.Collection, ...args: unknown[]) {
      sent.push({ collection: this.collectionName, filter: args[0] });
      return original?.apply(this, args);
    };
  }
  try {
    await run();
  } finally {
    for (const [name, original] of originals) if (original) prototype[name] = original;
  }
  return sent;
}
