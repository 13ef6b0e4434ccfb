// Usage records are not a collection of their own: each request's record is the `meta` of its `settle` ledger
// entry (the charge), so a request costs the database one document, written in the ledger's batched flush. This
// module reads them back for GET /api/usage, walking the user's chain backwards by `_id` (see ChainReader): the
// embedded database answers any other filter by reading every user's entries.
import type { Database } from "@gw/db";
import { LRUCache } from "lru-cache";
import { ChainReader } from "../ledger/chain-reader";
import type { LedgerDoc } from "../ledger/repository";
import { ImmutableDocs } from "./immutable-docs";
import type { StoredUsage, UsageRecord } from "./record";

/**
 * How far one instance's clock may be ahead of another's. An entry's `createdAt` is when its instance wrote it, after
 * the request it records finished (`meta.createdAt`, same clock), and each entry of a chain is written after the one
 * before it: so once the walk meets an entry written this long before `from`, no entry further back is in the range.
 */
const CLOCK_SKEW_MS = 5 * 60_000;

/** The fields of a settle entry this module reads. */
interface SettleDoc {
  _id: string;
  userId: string;
  kind: string;
  createdAt: Date;
  holdId?: string;
  cost?: number;
  meta?: StoredUsage;
}

const DAY_MS = 86_400_000;
/** day number → its name: formatting a date is the costliest step of summarizing a block */
const dayNames = new Map<number, string>();

/** UTC day (YYYY-MM-DD) of a usage record, for the totals per day. */
function utcDay(at: Date): string {
  const day = Math.floor(at.getTime() / DAY_MS);
  let name = dayNames.get(day);
  if (name === undefined) {
    if (dayNames.size >= 4_096) dayNames.clear();
    name = new Date(day * DAY_MS).toISOString().slice(0, 10);
    dayNames.set(day, name);
  }
  return name;
}

export interface UsageQuery {
  userId: string;
  from: Date;
  to: Date;
  model?: string;
  /** CONTRACT 11's filters: the key (`meta.keyId`), the route, success or partial */
  keyId?: string;
  endpoint?: string;
  status?: UsageRecord["status"];
  skip: number;
  limit: number;
}

/** The filters of a usage query (what list, totals and the CSV stream share). */
export type UsageFilter = Omit<UsageQuery, "skip" | "limit">;

export interface UsageTotalsRow {
  day: string;
  model: string;
  /** undefined: requests made with a session (the playground) */
  keyId?: string;
  requests: number;
  costMicros: number;
  promptTokens: number;
  completionTokens: number;
  characters: number;
  audioSeconds: number;
  images: number;
}

function toRecord(doc: SettleDoc): UsageRecord | undefined {
  const m = doc.meta;
  if (!m) return undefined;
  return {
    id: doc.holdId ?? "",
    userId: doc.userId,
    requestId: m.requestId,
    keyId: m.keyId,
    endpoint: m.endpoint,
    model: m.model,
    deployment: m.deployment,
    type: m.type,
    promptTokens: m.promptTokens ?? 0,
    completionTokens: m.completionTokens ?? 0,
    characters: m.characters ?? 0,
    audioSeconds: m.audioSeconds ?? 0,
    images: m.images ?? 0,
    processingMs: m.processingMs,
    outputBytes: m.outputBytes,
    costMicros: doc.cost ?? 0,
    status: m.status ?? "success",
    createdAt: m.createdAt,
  };
}

/** Newest first: by the time of the request, then by position in the chain. */
const newestFirst = (a: SettleDoc, b: SettleDoc): number =>
  (b.meta?.createdAt.getTime() ?? 0) - (a.meta?.createdAt.getTime() ?? 0) || (a._id < b._id ? 1 : a._id > b._id ? -1 : 0);

/**
 * The usage of one block of a chain's positions (`v2:<userId>:<size>:<block>`: positions block·size+1 … (block+1)·size), written
 * by the first reader once the chain's head is past the block. Entries never change, so a block's summary never does
 * either: concurrent readers insert the same document, and one deleted is computed again (by an instance that has not
 * read it: each keeps the ones it read).
 */
interface UsageBlockDoc {
  _id: string;
  /** newest write time (`createdAt`) of its entries */
  writtenUntil: Date;
  /** oldest and newest request time of its usage records (absent: it has none) */
  first?: Date;
  last?: Date;
  rows: UsageTotalsRow[];
}

/**
 * The usage records of one block of the smallest level (`r2:<userId>:<size>:<block>`, beside the summaries): a page, or
 * a block the range's start cuts, reads them at once rather than the block's entries one by one. Written, and
 * computed again when missing, like a summary.
 */
interface UsageRecordsDoc {
  _id: string;
  records: SettleDoc[];
}

export const USAGE_BLOCKS_COLLECTION = "ledger_usage_blocks";
/**
 * Positions per usage block of the smallest level; a block of the next level holds this many of the one below. Small:
 * a walk reads up to one less than this many summaries per level, and this many for each block the range's start cuts.
 */
export const USAGE_BLOCK_SIZE = 16;
/** levels of blocks: 16, 256, 4,096, 65,536 and 1,048,576 positions */
const BLOCK_LEVELS = 5;
/**
 * The bound of each of an instance's two caches of block documents (summaries, records), as the sum of their JSON
 * lengths: 16 MiB holds the records of some 35,000 requests.
 */
const BLOCK_CACHE_JSON_BYTES = 16 * 2 ** 20;
/** users whose entries written by this process in a block not yet closed are kept (see `entriesWritten`) */
const OPEN_BLOCK_USERS = 1_024;
/** blocks closed by writes that wait at most for the next turn of the event loop; more are left to the first reader */
const MAX_WAITING_BLOCKS = 1_024;

function addToRows(rows: Map<string, UsageTotalsRow>, row: UsageTotalsRow): void {
  const key = `${row.day}\u0000${row.model}\u0000${row.keyId ?? ""}`;
  const into = rows.get(key);
  if (!into) {
    rows.set(key, { ...row });
    return;
  }
  into.requests += row.requests;
  into.costMicros += row.costMicros;
  into.promptTokens += row.promptTokens;
  into.completionTokens += row.completionTokens;
  into.characters += row.characters;
  into.audioSeconds += row.audioSeconds;
  into.images += row.images;
}

/** One usage record as a totals row of one request. */
function rowOf(doc: SettleDoc): UsageTotalsRow | undefined {
  const m = doc.meta;
  if (!m) return undefined;
  return {
    // no `keyId` rather than an undefined one, which a stored summary would hold as null
    day: utcDay(m.createdAt), model: m.model, ...(m.keyId !== undefined ? { keyId: m.keyId } : {}), requests: 1, costMicros: doc.cost ?? 0, promptTokens: m.promptTokens ?? 0,
    completionTokens: m.completionTokens ?? 0, characters: m.characters ?? 0, audioSeconds: m.audioSeconds ?? 0, images: m.images ?? 0,
  };
}

/** The summary of one entry (a level-0 block is the merge of its entries'). */
function entrySummary(doc: SettleDoc): UsageBlockDoc {
  const row = doc.kind === "settle" ? rowOf(doc) : undefined;
  const at = doc.meta?.createdAt;
  return row && at ? { _id: doc._id, writtenUntil: doc.createdAt, first: at, last: at, rows: [row] } : { _id: doc._id, writtenUntil: doc.createdAt, rows: [] };
}

function merge(_id: string, parts: UsageBlockDoc[]): UsageBlockDoc {
  const rows = new Map<string, UsageTotalsRow>();
  let writtenUntil = 0;
  let first: number | undefined;
  let last: number | undefined;
  for (const part of parts) {
    writtenUntil = Math.max(writtenUntil, part.writtenUntil.getTime());
    if (part.first && part.last) {
      first = Math.min(first ?? part.first.getTime(), part.first.getTime());
      last = Math.max(last ?? part.last.getTime(), part.last.getTime());
    }
    for (const row of part.rows) addToRows(rows, row);
  }
  const block: UsageBlockDoc = { _id, writtenUntil: new Date(writtenUntil), rows: [...rows.values()] };
  if (first !== undefined && last !== undefined) {
    block.first = new Date(first);
    block.last = new Date(last);
  }
  return block;
}

interface Scan {
  /** the records read one by one that match, newest first: every one of the `need` newest is among them */
  records: SettleDoc[];
  total: number;
  rows: Map<string, UsageTotalsRow>;
}

/** A full block: its summary and, when computed at the smallest level, its entries. */
interface Block {
  summary: UsageBlockDoc;
  entries?: SettleDoc[];
  /** false: a position is missing (a hole a reconcile has not filled yet), so the summary is neither stored nor kept */
  whole: boolean;
}

export class UsageRepository {
  private readonly reader: ChainReader;
  /** the block documents read or written: they never change, so a repeated read costs only the head and the tail */
  private readonly summaries: ImmutableDocs<UsageBlockDoc>;
  private readonly blockRecords: ImmutableDocs<UsageRecordsDoc>;
  /** scans in progress, shared by a page and its totals (asked at once) */
  private readonly scans = new Map<string, { need: number; scan: Promise<Scan> }>();
  /** per user, the entries this process wrote in the newest smallest block it wrote in, by position */
  private readonly open = new Map<string, { block: number; entries: Map<number, SettleDoc> }>();
  /**
   * Per user and level, the summaries this process wrote after writes, by block index, until the next level's block
   * merges them. A block closed by writes of the next parent may be stored before that merge runs, so each level keeps
   * the blocks of two parents; older ones (merged by another instance) are dropped.
   */
  private readonly parts = new LRUCache<string, Map<number, Map<number, UsageBlockDoc>>>({ max: OPEN_BLOCK_USERS });
  /** `<userId>:<block>` → the entries of a smallest block being summarized after writes that this process wrote */
  private readonly written = new Map<string, Map<number, SettleDoc>>();
  /** blocks closed by writes that need reads or a larger block's merge, waiting for the next turn (see `entriesWritten`) */
  private waiting: Array<{ userId: string; seq: number; block: number; entries: Map<number, SettleDoc> }> = [];
  private summarizeSoon: NodeJS.Immediate | undefined;
  /** summaries being written after writes */
  private readonly builds = new Set<Promise<void>>();

  constructor(db: Database, private readonly blockSize = USAGE_BLOCK_SIZE) {
    this.reader = new ChainReader(db);
    this.summaries = new ImmutableDocs(db.connection.collection<UsageBlockDoc>(USAGE_BLOCKS_COLLECTION), BLOCK_CACHE_JSON_BYTES);
    this.blockRecords = new ImmutableDocs(db.connection.collection<UsageRecordsDoc>(USAGE_BLOCKS_COLLECTION), BLOCK_CACHE_JSON_BYTES);
  }

  /** Settle entries with a usage record (a settle of a hold opened outside the gateway has none) in the query. */
  private matches(doc: SettleDoc, q: UsageFilter): boolean {
    const m = doc.meta;
    if (doc.kind !== "settle" || !m) return false;
    const at = m.createdAt.getTime();
    return at >= q.from.getTime() && at < q.to.getTime() && (!q.model || m.model === q.model) && (!q.keyId || m.keyId === q.keyId)
      && (!q.endpoint || m.endpoint === q.endpoint) && (!q.status || (m.status ?? "success") === q.status);
  }

  /** A scan that finds at least the `need` newest records of the query (0: totals only). */
  private scan(q: UsageFilter, need: number): Promise<Scan> {
    const key = JSON.stringify([q.userId, q.from, q.to, q.model, q.keyId, q.endpoint, q.status]);
    const running = this.scans.get(key);
    if (running && running.need >= need) return running.scan;
    const scan = this.walk(q, need).finally(() => {
      if (this.scans.get(key)?.scan === scan) this.scans.delete(key);
    });
    this.scans.set(key, { need, scan });
    return scan;
  }

  /**
   * Told of entries the ledger just inserted (one chain's, in order). When they close a block of the smallest level,
   * its summary is written off the request path, from the entries this process wrote and the others read by `_id`,
   * with each larger block that closes at the same position. Readers then find a chain summarized up to
   * its last full block, however much was written since they last looked: the first read after a burst does not build
   * the burst's summaries from its entries. A summary that fails or is not written (MAX_WAITING_BLOCKS) is left to the
   * first reader that needs it.
   */
  entriesWritten(docs: readonly LedgerDoc[]): void {
    for (const doc of docs) {
      const block = Math.ceil(doc.seq / this.blockSize) - 1;
      let open = this.open.get(doc.userId);
      if (open?.block !== block) {
        // entries of an older block: another instance closed it (or will), reading them by `_id`
        open = { block, entries: new Map() };
        this.open.delete(doc.userId);
        this.open.set(doc.userId, open);
        // the user whose block was opened longest ago goes first
        if (this.open.size > OPEN_BLOCK_USERS) this.open.delete(this.open.keys().next().value as string);
      }
      open.entries.set(doc.seq, doc as unknown as SettleDoc);
      if (doc.seq % this.blockSize !== 0) continue;
      this.open.delete(doc.userId);
      if (open.entries.size === this.blockSize && doc.seq % this.size(1) !== 0) {
        // the common case, all this process's own: summarized here, without a turn of promises
        const summary = merge(this.blockId(doc.userId, 0, block), [...open.entries.values()].map(entrySummary));
        this.store(doc.userId, 0, block, summary, true);
        continue;
      }
      if (this.waiting.length < MAX_WAITING_BLOCKS) this.waiting.push({ userId: doc.userId, seq: doc.seq, block, entries: open.entries });
      this.summarizeSoon ??= setImmediate(() => this.summarizeWaiting());
    }
  }

  /** Summarizes the blocks closed by the writes of the last turn at once: their summaries go in one insert. */
  private summarizeWaiting(): void {
    clearImmediate(this.summarizeSoon);
    this.summarizeSoon = undefined;
    for (const { userId, seq, block, entries } of this.waiting.splice(0)) {
      const build = this.summarize(userId, seq, block, entries).finally(() => this.builds.delete(build));
      this.builds.add(build);
    }
  }

  /** Writes the summaries of the blocks that position `seq` closes (`block`: the smallest one's index). */
  private async summarize(userId: string, seq: number, block: number, entries: Map<number, SettleDoc>): Promise<void> {
    const key = `${userId}:${block}`;
    this.written.set(key, entries);
    try {
      let level = 0;
      while (level + 1 < BLOCK_LEVELS && seq % this.size(level + 1) === 0) level++;
      await this.block(userId, level, seq / this.size(level) - 1, undefined, true);
    } catch {
      // nothing lost: the first reader that needs these summaries computes them
    } finally {
      this.written.delete(key);
    }
  }

  /** Writes the summaries of the blocks closed by writes now, and waits for them (before the database closes). */
  async close(): Promise<void> {
    this.summarizeWaiting();
    await Promise.all(this.builds);
    await this.summaries.flush();
  }

  /** The entries of a full smallest block that exist, in order: those being summarized after this process wrote them, the rest by `_id`. */
  private async blockEntries(userId: string, index: number): Promise<SettleDoc[]> {
    const from = index * this.size(0) + 1;
    const to = (index + 1) * this.size(0);
    const known = this.written.get(`${userId}:${index}`);
    if (!known) return this.read(userId, from, to);
    const positions = Array.from({ length: to - from + 1 }, (_, i) => from + i);
    const read = await Promise.all(positions.map((seq) => known.get(seq) ?? this.reader.at(userId, seq) as Promise<SettleDoc | null>));
    return read.filter((doc): doc is SettleDoc => doc !== null);
  }

  /** The entries at positions from…to that exist (in order), by `_id`, at once. */
  private async read(userId: string, from: number, to: number): Promise<SettleDoc[]> {
    return (await this.reader.range(userId, from, to)) as unknown as SettleDoc[];
  }

  /** positions in a block of this level (0: the smallest) */
  private size(level: number): number {
    return this.blockSize ** (level + 1);
  }

  /**
   * A full block's summary: stored, or computed and stored for the next reader, from its entries (level 0, returned
   * too) or from its `blockSize` sub-blocks' summaries.
   */
  private blockId(userId: string, level: number, index: number): string {
    // the rows' shape (v2: per day, model and key) and the size in the id: a build with other rows or sizes does not read these
    return `v2:${userId}:${this.size(level)}:${index.toString().padStart(12, "0")}`;
  }

  /**
   * Asks for the stored summaries of blocks `from`…`to` of a level at once (a walk takes them one after the other),
   * so that their lookups are pipelined rather than each waiting for the one before. Not those found missing before:
   * below the range's start, a walk seldom reaches (and so computes) them.
   */
  private prefetch(stored: Map<string, Promise<UsageBlockDoc | null>>, userId: string, level: number, from: number, to: number): void {
    for (let index = Math.max(0, from); index <= to; index++) {
      const id = this.blockId(userId, level, index);
      // one the walk does not reach must not fail the process when it fails: one it reaches is computed again
      if (!stored.has(id) && !this.summaries.missedBefore(id)) stored.set(id, this.summaries.get(id).catch(() => null));
    }
  }

  /**
   * A full block of the smallest level: its usage records, stored (one read), or from its entries (`read`: just read
   * for its summary; else read now), the records stored.
   */
  private async recordsOf(userId: string, index: number, read?: SettleDoc[]): Promise<SettleDoc[]> {
    const id = `r2:${userId}:${this.size(0)}:${index.toString().padStart(12, "0")}`;
    const stored = read ? null : await this.blockRecords.get(id);
    if (stored) return stored.records;
    const entries = read ?? await this.blockEntries(userId, index);
    const records = entries.filter((doc) => doc.kind === "settle" && doc.meta)
      .map(({ _id, userId: user, kind, createdAt, holdId, cost, meta }) => ({ _id, userId: user, kind, createdAt, holdId, cost, meta }));
    if (entries.length === this.size(0)) await this.blockRecords.put({ _id: id, records });
    return entries;
  }

  /**
   * `closing`: the block a write just closed, summarized by its writer: not looked up, as no reader can have needed it
   * yet, and not kept in the cache (the writer reads none back) but only until the larger block it is part of closes.
   */
  private async block(userId: string, level: number, index: number, prefetched?: Map<string, Promise<UsageBlockDoc | null>>, closing = false): Promise<Block> {
    const size = this.size(level);
    const id = this.blockId(userId, level, index);
    const written = this.parts.get(userId)?.get(level)?.get(index);
    if (written) return { summary: written, whole: true };
    const stored = closing ? null : await (prefetched?.get(id) ?? this.summaries.get(id));
    if (stored) return { summary: stored, whole: true };
    if (level === 0) {
      const entries = await this.blockEntries(userId, index);
      const block = { summary: merge(id, entries.map(entrySummary)), entries, whole: entries.length === size };
      if (block.whole) await this.store(userId, level, index, block.summary, closing);
      return block;
    }
    const parts = await Promise.all(Array.from({ length: this.blockSize }, (_, i) => this.block(userId, level - 1, index * this.blockSize + i, undefined, closing && i === this.blockSize - 1)));
    const block = { summary: merge(id, parts.map((p) => p.summary)), whole: parts.every((p) => p.whole) };
    if (closing) for (let i = 0; i < this.blockSize; i++) this.parts.get(userId)?.get(level - 1)?.delete(index * this.blockSize + i);
    if (block.whole) await this.store(userId, level, index, block.summary, closing);
    return block;
  }

  /** Stores a whole block's summary; one its writer summarized (`closing`) is kept for the next level's block only. */
  private store(userId: string, level: number, index: number, summary: UsageBlockDoc, closing: boolean): Promise<void> | undefined {
    if (!closing) return this.summaries.put(summary);
    let levels = this.parts.get(userId);
    if (!levels) {
      levels = new Map();
      this.parts.set(userId, levels);
    }
    let kept = levels.get(level);
    if (!kept) {
      kept = new Map();
      levels.set(level, kept);
    }
    kept.set(index, summary);
    const oldest = (Math.floor(index / this.blockSize) - 1) * this.blockSize;
    if (kept.size > 2 * this.blockSize) for (const at of kept.keys()) if (at < oldest) kept.delete(at);
    // not waited for: the writer reads none back, and one that fails is computed by the first reader that needs it
    this.summaries.put(summary, false).catch(() => undefined);
    return undefined;
  }

  /**
   * The user's chain from its head back to the range's start. Positions above the last multiple of `blockSize` are
   * read entry by entry, at once; below it, the chain is taken in the largest full blocks that end at the cursor: a
   * block whose records all fall in the range and none can be on the page is counted from its summary, one with no
   * record in the range is skipped, any other is taken in its sub-blocks (its entries at the smallest level).
   */
  private async walk(q: UsageFilter, need: number): Promise<Scan> {
    const result: Scan = { records: [], total: 0, rows: new Map() };
    const head = await this.reader.head(q.userId);
    if (!head) return result;
    const stopBefore = q.from.getTime() - CLOCK_SKEW_MS;
    let stopped = false;
    const visit = (doc: SettleDoc): void => {
      stopped ||= doc.createdAt.getTime() < stopBefore;
      if (!this.matches(doc, q)) return;
      result.records.push(doc);
      result.total += 1;
      const row = rowOf(doc);
      if (row) addToRows(result.rows, row);
    };
    const prefetched = new Map<string, Promise<UsageBlockDoc | null>>();
    /** true: the walk is over (this block and all before it were written before the range began) */
    const take = async (level: number, index: number): Promise<boolean> => {
      const { summary, entries } = await this.block(q.userId, level, index, prefetched);
      if (summary.writtenUntil.getTime() < stopBefore) return true;
      if (!summary.first || !summary.last || summary.last < q.from || summary.first >= q.to) return false;
      // a summary's rows are per day, model and key: an endpoint or status filter needs the entries themselves
      const whole = summary.first >= q.from && summary.last < q.to && !q.endpoint && !q.status;
      if (whole && !this.mayHoldPage(result.records, need, summary.last)) {
        for (const row of summary.rows) {
          if ((q.model && row.model !== q.model) || (q.keyId && row.keyId !== q.keyId)) continue;
          addToRows(result.rows, row);
          result.total += row.requests;
        }
        return false;
      }
      if (level === 0) {
        for (const doc of await this.recordsOf(q.userId, index, entries)) visit(doc);
        return stopped;
      }
      this.prefetch(prefetched, q.userId, level - 1, index * this.blockSize, (index + 1) * this.blockSize - 1);
      for (let part = this.blockSize - 1; part >= 0; part--) if (await take(level - 1, index * this.blockSize + part)) return true;
      return false;
    };
    // the positions above the last full block, the head (read already) among them unless it closes that block
    let cursor = head.seq - (head.seq % this.blockSize);
    if (cursor < head.seq) for (const doc of [head as unknown as SettleDoc, ...await this.read(q.userId, cursor + 1, head.seq - 1)]) visit(doc);
    while (cursor >= 1 && !stopped) {
      // cursor is a multiple of the smallest size
      let level = BLOCK_LEVELS - 1;
      while (level > 0 && cursor % this.size(level) !== 0) level--;
      // the run of blocks of this level down to the next larger block
      const index = cursor / this.size(level) - 1;
      const larger = level + 1 < BLOCK_LEVELS ? this.size(level + 1) : cursor;
      this.prefetch(prefetched, q.userId, level, index - ((cursor % larger) / this.size(level) - 1), index);
      stopped = await take(level, index);
      cursor -= this.size(level);
    }
    result.records.sort(newestFirst);
    return result;
  }

  /**
   * false when `need` records already read come before every record of a block whose newest is at `last`. The walk
   * reads positions downwards, so the records read are all at higher positions than the block's: one of the block's
   * requested at the same time as the nth comes after it (newestFirst), and only a later one could be on the page.
   */
  private mayHoldPage(records: SettleDoc[], need: number, last: Date): boolean {
    if (need === 0) return false;
    if (records.length < need) return true;
    records.sort(newestFirst);
    const nth = records[need - 1]?.meta?.createdAt;
    return !nth || last.getTime() > nth.getTime();
  }

  /**
   * Every record of the range, newest first, in bounded memory (GET /api/usage?format=csv): the chain is walked back
   * by `_id` in batches of `batchSize` positions. A record's request time is at most its entry's write time, and an
   * entry further back was written at most CLOCK_SKEW_MS after any entry already read: so a record newer than the
   * oldest write time read plus that skew can come after no record still unread, and is yielded in order.
   */
  async *stream(q: UsageFilter, batchSize = 256): AsyncGenerator<UsageRecord> {
    const head = await this.reader.head(q.userId);
    const stopBefore = q.from.getTime() - CLOCK_SKEW_MS;
    let waiting: SettleDoc[] = [];
    let oldestWrite = Infinity;
    for (let top = head?.seq ?? 0; top >= 1 && oldestWrite >= stopBefore; top -= batchSize) {
      for (const doc of await this.read(q.userId, Math.max(1, top - batchSize + 1), top)) {
        oldestWrite = Math.min(oldestWrite, doc.createdAt.getTime());
        if (this.matches(doc, q)) waiting.push(doc);
      }
      waiting.sort(newestFirst);
      const bound = oldestWrite + CLOCK_SKEW_MS;
      const ready = waiting.findIndex((doc) => (doc.meta?.createdAt.getTime() ?? 0) <= bound);
      const now = ready < 0 ? waiting : waiting.slice(0, ready);
      waiting = ready < 0 ? [] : waiting.slice(ready);
      yield* now.map(toRecord).filter((r): r is UsageRecord => r !== undefined);
    }
    yield* waiting.map(toRecord).filter((r): r is UsageRecord => r !== undefined);
  }

  async list(q: UsageQuery): Promise<{ records: UsageRecord[]; total: number }> {
    const { records, total } = await this.scan(q, q.skip + q.limit);
    const page = records.slice(q.skip, q.skip + q.limit);
    return { records: page.map(toRecord).filter((r): r is UsageRecord => r !== undefined), total };
  }

  /** Totals per (day, model, key) over the range. */
  async totals(q: UsageFilter): Promise<UsageTotalsRow[]> {
    return [...(await this.scan(q, 0)).rows.values()];
  }
}
