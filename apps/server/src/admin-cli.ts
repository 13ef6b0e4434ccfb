// `npm run admin -- <command>`: the operator console's work from a shell, without the server (CONTRACT 12), against
// MONGODB_URI or the embedded FerretDB under DATA_DIR. Each change goes through the same functions as /api/admin
// (ledger entries, key eviction, audit log with actor `via: "cli"`).
// Exit codes: 0 done; 1 refused (the error's code is named: not_found, invalid_parameter, conflict); 2 bad usage;
// 3 could not run (configuration, database).
import path from "node:path";
import { adminConsole, type ConsoleActor } from "@gw/api";
import { loadConfig, type Config } from "@gw/config";
import { connectDatabase, startFerretdb, type Database, type EmbeddedMongo } from "@gw/db";
import { dollarsToMicros, isAppError, microsToDollars, systemClock } from "@gw/shared";
import type { AppContext } from "./context";
import { createLogger } from "./http/logger";
import { createServices } from "./services";
import { withSessionSecret } from "./session-secret";

const USAGE = `Usage: npm run admin -- <command>
  credit <email> <usd> <reason>   add (or, negative, take back) credits: an adjustment ledger entry
  suspend <email>                 suspend the account: keys refused, sessions revoked, login refused
  unsuspend <email>               lift the suspension
  users [query]                   list users (newest first), optionally those whose e-mail or name contains query
Options: --json  print the result as JSON`;

const ACTOR: ConsoleActor = { user_id: null, email: null, via: "cli", ip: null };

/** A command-line mistake: exit code 2 with the usage. */
class UsageError extends Error {}

/** A signed dollar amount with at most two decimals, not 0. */
function parseAmount(raw: string | undefined): number {
  if (raw === undefined || !/^[+-]?\d{1,7}(\.\d{1,2})?$/.test(raw)) {
    throw new UsageError(`bad amount '${raw ?? ""}': give US dollars with at most two decimals, e.g. 5 or -2.50`);
  }
  const dollars = Number(raw);
  if (dollars === 0) throw new UsageError("bad amount '0': an adjustment must not be 0");
  if (Math.abs(dollars) > 1_000_000) throw new UsageError(`bad amount '${raw}': at most 1000000 dollars either way`);
  return dollarsToMicros(dollars);
}

type Output = { text: string; json: unknown };

/** Reads the command line (before any database is opened: a mistake costs nothing) into the work to do. */
function parse(command: string | undefined, args: string[]): (ctx: AppContext) => Promise<Output> {
  switch (command) {
    case "credit": {
      const [email, rawAmount, ...reasonWords] = args;
      if (!email) throw new UsageError("credit needs <email> <usd> <reason>");
      const amount = parseAmount(rawAmount);
      const reason = reasonWords.join(" ").trim();
      if (!reason) throw new UsageError("credit needs a <reason>");
      return async (ctx) => {
        const user = await adminConsole.userByEmail(ctx, email);
        const result = await adminConsole.credit(ctx, ACTOR, user.id, { amount, reason });
        return {
          text: `${amount > 0 ? "Credited" : "Debited"} $${Math.abs(microsToDollars(amount)).toFixed(2)} to ${user.email} (${user.id}); balance $${result.balance.toFixed(2)}.`,
          json: { ...result, user_id: user.id, email: user.email },
        };
      };
    }
    case "suspend":
    case "unsuspend": {
      const [email, ...rest] = args;
      if (!email || rest.length > 0) throw new UsageError(`${command} needs exactly one <email>`);
      return async (ctx) => {
        const user = await adminConsole.userByEmail(ctx, email);
        const result = command === "suspend" ? await adminConsole.suspend(ctx, ACTOR, user.id) : await adminConsole.unsuspend(ctx, ACTOR, user.id);
        return { text: `${user.email} (${user.id}) is ${result.user.status}.`, json: result };
      };
    }
    case "users": {
      const query = args.join(" ").trim() || undefined;
      return async (ctx) => {
        const { users } = await adminConsole.listUsers(ctx, { query, limit: 100 });
        const lines = users.map((u) => [u.id, u.email, u.status, u.plan, `$${u.balance.toFixed(2)}`, u.created_at].join("\t"));
        return { text: users.length ? ["id\temail\tstatus\tplan\tbalance\tcreated_at", ...lines].join("\n") : "No users found.", json: { users } };
      };
    }
    default:
      throw new UsageError(command ? `unknown command '${command}'` : "no command given");
  }
}

async function openDatabase(config: Config): Promise<{ db: Database; embedded?: EmbeddedMongo }> {
  if (config.mongodbUri) return { db: await connectDatabase(config.mongodbUri) };
  // the same database as `npm start` without MONGODB_URI: the embedded FerretDB under DATA_DIR
  const embedded = await startFerretdb({ dir: path.join(config.dataDir, "ferretdb"), binary: config.ferretdbBin });
  return { db: await connectDatabase(embedded.uri), embedded };
}

async function main(argv: string[]): Promise<number> {
  const json = argv.includes("--json");
  const [command, ...args] = argv.filter((a) => a !== "--json");
  if (command === undefined || command === "help" || command === "--help" || command === "-h") {
    console.log(USAGE);
    return command === undefined ? 2 : 0;
  }
  let work: (ctx: AppContext) => Promise<Output>;
  try {
    work = parse(command, args);
  } catch (err) {
    console.error(`error: ${err instanceof Error ? err.message : String(err)}\n\n${USAGE}`);
    return 2;
  }
  let config: Config;
  try {
    config = withSessionSecret(loadConfig());
  } catch (err) {
    console.error(`error: ${err instanceof Error ? err.message : String(err)}`);
    return 3;
  }
  let opened: { db: Database; embedded?: EmbeddedMongo };
  try {
    opened = await openDatabase(config);
  } catch (err) {
    console.error(`error: could not open the database: ${err instanceof Error ? err.message : String(err)}`);
    return 3;
  }
  const hooks: Array<() => Promise<void> | void> = [];
  try {
    const ctx = await createServices({
      config, db: opened.db, clock: systemClock, logger: createLogger("warn"), onShutdown: (fn) => hooks.push(fn),
    });
    const output = await work(ctx);
    console.log(json ? JSON.stringify(output.json, null, 2) : output.text);
    return 0;
  } catch (err) {
    if (isAppError(err) && err.status < 500) {
      console.error(json ? JSON.stringify({ error: { code: err.code, message: err.message } }) : `error: ${err.code}: ${err.message}`);
      return 1;
    }
    console.error(`error: ${err instanceof Error ? err.message : String(err)}`);
    return 3;
  } finally {
    for (const hook of hooks.reverse()) await Promise.resolve(hook()).catch(() => undefined);
    await opened.db.close();
    await opened.embedded?.stop();
  }
}

// Ctrl-C mid-run exits through process.exit, whose 'exit' hook stops the embedded FerretDB (as `npm run reconcile`).
for (const [signal, code] of [["SIGINT", 130], ["SIGTERM", 143], ["SIGHUP", 129]] as const) process.on(signal, () => process.exit(code));

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(`error: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(3);
  },
);
