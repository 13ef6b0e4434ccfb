import type { Config, CreditPackage, ModelDefinition, PlanDefinition } from "@gw/config";
import { isDuplicateKey, type Database } from "@gw/db";
import { AppError } from "@gw/shared";
import type { Logger } from "pino";

// CONTRACT 12 "catalog at run time": models (with `enabled`), plans and credit packages live in the database as
// numbered versions. Each version is one document, `_id: "catalog:<n>"`, never changed once written. Writing
// version n+1 is an insert of that id: of two admins editing version n at once, the second insert is a duplicate
// key (409 conflict), with no transaction or atomic update needed (FerretDB has neither for this). Each instance
// keeps the newest version in memory and looks for the next one by `_id` (an index lookup) every ~2 s; the request
// path reads only memory. A request resolves its model (and so its prices) once, at its start, and keeps that object:
// a new version replaces `config.models`/`plans`/`creditPackages` with new arrays of new objects and never changes
// an object a request holds.

export interface CatalogModel extends ModelDefinition {
  /** a disabled model is refused as an unknown one and absent from /v1/models */
  enabled: boolean;
}

export interface CatalogSnapshot {
  version: number;
  models: CatalogModel[];
  plans: PlanDefinition[];
  creditPackages: CreditPackage[];
}

interface VersionDoc {
  _id: string;
  version: number;
  models: CatalogModel[];
  plans: PlanDefinition[];
  creditPackages: CreditPackage[];
  createdAt: Date;
}

/** A hint only (the newest version some instance wrote): readers walk forward from it by `_id`. */
interface HeadDoc {
  _id: string;
  version: number;
}

export const CATALOG_COLLECTION = "catalog";
const HEAD_ID = "catalog:head";
const versionId = (version: number) => `catalog:${version}`;
/** how often an instance looks for a newer version (an edit is in force everywhere within this plus one lookup) */
export const CATALOG_POLL_MS = 2_000;
/** how often an edit without a version is tried again on top of a newer one before 409 */
const MAX_UNVERSIONED_ATTEMPTS = 5;


/** Drops `enabled`: the objects the gateway serves are model definitions as the config file's. */
function definition(model: CatalogModel): ModelDefinition {
  const { enabled: _enabled, ...rest } = model;
  return rest;
}

export class Catalog {
  private current: CatalogSnapshot;
  private timer: NodeJS.Timeout | undefined;
  private refreshing: Promise<void> | undefined;
  private readonly listeners: Array<() => void> = [];

  private constructor(private readonly db: Database, private readonly config: Config, private readonly logger: Logger) {
    this.current = {
      version: 0,
      models: config.models.map((m) => ({ ...m, enabled: true })),
      plans: config.plans,
      creditPackages: config.creditPackages,
    };
  }

  /** Seeds version 1 from the config (CONFIG_FILE/defaults) on the database's first start, then reads the newest. */
  static async open(db: Database, config: Config, logger: Logger): Promise<Catalog> {
    const catalog = new Catalog(db, config, logger);
    const head = await catalog.heads.findOne({ _id: HEAD_ID });
    if (!head) {
      const seed = catalog.current;
      await catalog.insert({ ...seed, version: 1 }).catch((err: unknown) => {
        if (!isDuplicateKey(err)) throw err; // another instance seeded it first
      });
      await catalog.advanceHead(1);
    }
    await catalog.walk(head?.version ?? 1);
    return catalog;
  }

  private get versions() {
    return this.db.connection.collection<VersionDoc>(CATALOG_COLLECTION);
  }

  private get heads() {
    return this.db.connection.collection<HeadDoc>(CATALOG_COLLECTION);
  }

  snapshot(): CatalogSnapshot {
    return this.current;
  }

  /** called after each new version is in force on this instance (e.g. the router rebuilds its deployments) */
  onChange(listener: () => void): void {
    this.listeners.push(listener);
  }

  /** Looks for newer versions every CATALOG_POLL_MS until `stop`. */
  start(): void {
    this.timer ??= setInterval(() => {
      this.refresh().catch((err: unknown) => this.logger.warn({ err }, "catalog: refresh failed; serving the version in memory"));
    }, CATALOG_POLL_MS);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  /** Brings this instance to the newest version (one `_id` lookup when nothing changed). */
  refresh(): Promise<void> {
    this.refreshing ??= this.walk(this.current.version + 1).finally(() => {
      this.refreshing = undefined;
    });
    return this.refreshing;
  }

  /**
   * Writes the version after `expected` (the newest when omitted) made by `change`, which validates and may throw.
   * 409 conflict when another edit got there first.
   */
  async commit(expected: number | undefined, change: (base: CatalogSnapshot) => Omit<CatalogSnapshot, "version">): Promise<{ before: CatalogSnapshot; after: CatalogSnapshot }> {
    // an edit that names no version applies to the newest: when another got there first, it is applied again on top
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.commitOnce(expected, change);
      } catch (err) {
        if (expected !== undefined || attempt >= MAX_UNVERSIONED_ATTEMPTS || !(err instanceof AppError && err.code === "conflict")) throw err;
      }
    }
  }

  private async commitOnce(expected: number | undefined, change: (base: CatalogSnapshot) => Omit<CatalogSnapshot, "version">): Promise<{ before: CatalogSnapshot; after: CatalogSnapshot }> {
    await this.refresh();
    const before = this.current;
    if (expected !== undefined && expected !== before.version) throw stale(before.version);
    const after: CatalogSnapshot = { ...change(before), version: before.version + 1 };
    try {
      await this.insert(after);
    } catch (err) {
      if (isDuplicateKey(err)) throw stale(before.version + 1);
      throw err;
    }
    await this.advanceHead(after.version).catch((err: unknown) => this.logger.warn({ err }, "catalog: head not advanced (readers walk past it)"));
    this.apply(after);
    return { before, after };
  }

  private async insert(snapshot: CatalogSnapshot): Promise<void> {
    await this.versions.insertOne({ _id: versionId(snapshot.version), ...snapshot, createdAt: new Date() });
  }

  /** Two first upserts at once (two instances seeding) race: the loser's is a duplicate key, and then an update. */
  private async advanceHead(version: number): Promise<void> {
    const advance = () => this.heads.updateOne({ _id: HEAD_ID }, { $max: { version } }, { upsert: true });
    await advance().catch((err: unknown) => {
      if (!isDuplicateKey(err)) throw err;
      return advance();
    });
  }

  /** reads version `from`, `from + 1`, … while they exist, and puts the last one found in force */
  private async walk(from: number): Promise<void> {
    let found: VersionDoc | null = null;
    for (let version = Math.max(from, this.current.version + 1); ; version++) {
      const doc = await this.versions.findOne({ _id: versionId(version) });
      if (!doc) break;
      found = doc;
    }
    if (found && found.version > this.current.version) {
      this.apply({ version: found.version, models: found.models, plans: found.plans, creditPackages: found.creditPackages });
    }
  }

  private apply(snapshot: CatalogSnapshot): void {
    if (snapshot.version <= this.current.version) return;
    this.current = snapshot;
    // new arrays of new objects: a request holding an object of the previous version keeps it as it was
    this.config.models = snapshot.models.filter((m) => m.enabled).map(definition);
    this.config.plans = snapshot.plans.map((p) => ({ ...p }));
    this.config.creditPackages = snapshot.creditPackages.map((p) => ({ ...p }));
    for (const listener of this.listeners) {
      try {
        listener();
      } catch (err) {
        this.logger.error({ err }, "catalog: a listener failed on a new version");
      }
    }
  }
}

const stale = (version: number) =>
  new AppError("conflict", `The catalog changed since you read it (now at version ${version}): read it again and reapply your edit.`);
