// A setting the server cannot start with stops `npm start` with a message naming it and exit code 1, no stack trace
// (docs/configuration.md), also when the setting only fails once it is used (a port taken, a missing binary).
import { spawn } from "node:child_process";
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { DEFAULT_MODELS, DEFAULT_PLANS } from "@gw/config";
import { freePort } from "@gw/db";

const MAIN = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../dist/main.js");
const dataDirs: string[] = [];

/**
 * Root writes anywhere: `setpriv` runs a command as root without the capabilities that override file permissions, so
 * a directory's mode applies to it as to any user, wherever the checkout lives (running as another user instead needs
 * that user to read the checkout, which a root user's 0700 home forbids).
 */
const WITHOUT_ROOT_OVERRIDE = ["setpriv", "--inh-caps=-dac_override,-dac_read_search", "--bounding-set=-dac_override,-dac_read_search", "--"];

/** Runs the built server with these settings until it exits (at most 30 s); its exit code and stderr. */
async function startExpectingExit(env: Record<string, string | undefined>, options: { permissionsApply?: boolean } = {}): Promise<{ code: number | null; stderr: string }> {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), "gw-start-"));
  dataDirs.push(dataDir);
  const settings = { DATA_DIR: dataDir, SESSION_SECRET: "startup-errors-secret-startup-errors-01", ...env };
  const [command = process.execPath, ...args] = options.permissionsApply && process.getuid?.() === 0 ? [...WITHOUT_ROOT_OVERRIDE, process.execPath, MAIN] : [process.execPath, MAIN];
  const child = spawn(command, args, {
    // a setting given as undefined is left unset
    // eslint-disable-next-line no-restricted-properties -- passing PATH to a child process, not reading a setting
    env: { PATH: process.env.PATH ?? "", NODE_ENV: "test", HOST: "127.0.0.1", ...Object.fromEntries(Object.entries(settings).filter(([, v]) => v !== undefined)) },
    stdio: ["ignore", "ignore", "pipe"],
  });
  let stderr = "";
  child.stderr.on("data", (b: Buffer) => { stderr += b.toString(); });
  const timer = setTimeout(() => child.kill("SIGKILL"), 30_000);
  const code = await new Promise<number | null>((resolve) => child.once("exit", (c) => resolve(c)));
  clearTimeout(timer);
  return { code, stderr };
}

/** A line of a JavaScript stack trace. */
const STACK_LINE = /^\s+at /m;

describe("start-up errors", () => {
  afterAll(() => {
    for (const dir of dataDirs) rmSync(dir, { recursive: true, force: true });
  });

  it("a PORT already in use: exit 1 naming PORT, no stack trace", async () => {
    const port = await freePort();
    const taken = net.createServer();
    await new Promise<void>((resolve) => taken.listen(port, "127.0.0.1", resolve));
    try {
      const { code, stderr } = await startExpectingExit({ PORT: String(port) });
      expect(code).toBe(1);
      expect(stderr).toContain(`PORT ${port} is already in use`);
      expect(stderr).not.toMatch(STACK_LINE);
    } finally {
      await new Promise((resolve) => taken.close(resolve));
    }
  }, 60_000);

  it("a HOST that does not resolve: exit 1 naming HOST, no stack trace", async () => {
    const { code, stderr } = await startExpectingExit({ PORT: String(await freePort()), HOST: "no-such-host.invalid" });
    expect(code).toBe(1);
    expect(stderr).toContain("HOST no-such-host.invalid");
    expect(stderr).not.toMatch(STACK_LINE);
  }, 60_000);

  it("a FERRETDB_BIN that does not exist: exit 1 naming FERRETDB_BIN, no stack trace", async () => {
    const { code, stderr } = await startExpectingExit({ PORT: String(await freePort()), FERRETDB_BIN: "/nonexistent/ferretdb" });
    expect(code).toBe(1);
    expect(stderr).toContain("FerretDB binary /nonexistent/ferretdb could not be run");
    expect(stderr).toContain("FERRETDB_BIN");
    expect(stderr).not.toMatch(STACK_LINE);
  }, 60_000);

  it("a MONGODB_URI that is malformed or unreachable: exit 1 naming MONGODB_URI, no stack trace", async () => {
    for (const uri of ["localhost:27017", `mongodb://127.0.0.1:${await freePort()}/gateway`]) {
      const { code, stderr } = await startExpectingExit({ PORT: String(await freePort()), MONGODB_URI: uri });
      expect(code).toBe(1);
      expect(stderr).toContain("MONGODB_URI: cannot connect to the database");
      expect(stderr).not.toMatch(STACK_LINE);
    }
  }, 60_000);

  it("a base URL, PUBLIC_URL or STRIPE_API_BASE that is not http(s): exit 1 naming the variable, no stack trace", async () => {
    // "localhost:8080" parses as a URL whose scheme is "localhost:": it used to start, then every call was a 502
    const settings: Array<[string, string]> = [["TEXTA_BASE_URL", "localhost:8080"], ["SPEECH_BASE_URL", "ftp://127.0.0.1/"], ["PUBLIC_URL", "gateway.example.com:443"], ["STRIPE_API_BASE", "mailto:ops@example.com"]];
    for (const [name, value] of settings) {
      const { code, stderr } = await startExpectingExit({ PORT: String(await freePort()), [name]: value });
      expect(code, name).toBe(1);
      expect(stderr, name).toContain(`${name} must be an http:// or https:// URL`);
      expect(stderr, name).not.toMatch(STACK_LINE);
    }
  }, 120_000);

  it("a numeric setting left empty (PORT=, UPSTREAM_MAX_RETRIES=): exit 1 naming it, no stack trace", async () => {
    // an empty value was read as 0: `PORT=` listened on a random port, mailed links pointing at http://localhost:0
    for (const name of ["PORT", "UPSTREAM_MAX_RETRIES", "SESSION_TTL_DAYS"]) {
      const { code, stderr } = await startExpectingExit({ PORT: String(await freePort()), [name]: "" });
      expect(code, name).toBe(1);
      expect(stderr, name).toContain("must be a number, not empty");
      expect(stderr, name).toContain(`at ${name}`);
      expect(stderr, name).not.toMatch(STACK_LINE);
    }
  }, 120_000);

  it("a LIMIT_ variable that names no limit (LIMIT_REGISTRATION): exit 1 naming it and the known ones, no stack trace", async () => {
    // it was ignored: the server started with the default limit while the operator believed theirs applied
    const { code, stderr } = await startExpectingExit({ PORT: String(await freePort()), LIMIT_REGISTRATION: "20/3600" });
    expect(code).toBe(1);
    expect(stderr).toContain("LIMIT_REGISTRATION names no limit");
    expect(stderr).toContain("LIMIT_REGISTER");
    expect(stderr).not.toMatch(STACK_LINE);
  }, 60_000);

  it("a timeout longer than Node's longest timer (UPSTREAM_TIMEOUT_MS=3000000000): exit 1 naming it, no stack trace", async () => {
    // it started, and Node ran each such timer after 1 ms: every upstream call (or body read) timed out at once
    for (const name of ["UPSTREAM_TIMEOUT_MS", "UPSTREAM_CONNECT_TIMEOUT_MS", "BODY_IDLE_TIMEOUT_MS"]) {
      const { code, stderr } = await startExpectingExit({ PORT: String(await freePort()), [name]: "3000000000" });
      expect(code, name).toBe(1);
      expect(stderr, name).toContain("(about 24 days, Node's longest timer)");
      expect(stderr, name).toContain(`at ${name}`);
      expect(stderr, name).not.toMatch(STACK_LINE);
    }
  }, 120_000);

  it("a session lifetime past any date (SESSION_TTL_DAYS=1000000000): exit 1 naming it, no stack trace", async () => {
    // it started, and every login then answered 500: the session's expiry was no date
    for (const name of ["SESSION_TTL_DAYS", "SESSION_MAX_DAYS"]) {
      const { code, stderr } = await startExpectingExit({ PORT: String(await freePort()), [name]: "1000000000" });
      expect(code, name).toBe(1);
      expect(stderr, name).toContain("must be at most 3650 days (ten years)");
      expect(stderr, name).toContain(`at ${name}`);
      expect(stderr, name).not.toMatch(STACK_LINE);
    }
  }, 120_000);

  it("a PASSWORD_MIN_LENGTH above the longest password taken (300 > 256): exit 1 naming it, no stack trace", async () => {
    // it started, and no password could then be both long enough and short enough: every sign-up was refused
    const { code, stderr } = await startExpectingExit({ PORT: String(await freePort()), PASSWORD_MIN_LENGTH: "300" });
    expect(code).toBe(1);
    expect(stderr).toContain("must be at most 256, the longest password taken");
    expect(stderr).toContain("at PASSWORD_MIN_LENGTH");
    expect(stderr).not.toMatch(STACK_LINE);
  }, 60_000);

  it("a MAIL_FROM without an address (\"AI Gateway\"): exit 1 naming MAIL_FROM, no stack trace", async () => {
    // it started, and every mail then left with an empty envelope sender (MAIL FROM:<>) and a From of no address
    for (const from of ["AI Gateway", "AI Gateway <no-reply>"]) {
      const { code, stderr } = await startExpectingExit({ PORT: String(await freePort()), MAIL_FROM: from });
      expect(code, from).toBe(1);
      expect(stderr, from).toContain("MAIL_FROM must be an e-mail address");
      expect(stderr, from).not.toMatch(STACK_LINE);
    }
  }, 120_000);

  it("a Stripe key of the wrong kind (a secret key as the publishable one, and so on): exit 1 naming it, no stack trace", async () => {
    // it started: a secret key set as STRIPE_PUBLISHABLE_KEY was then handed to anyone by GET /api/billing/config
    const settings: Array<[string, string, string]> = [
      ["STRIPE_PUBLISHABLE_KEY", `sk_${"live"}_startupErrors`, "STRIPE_PUBLISHABLE_KEY must be a publishable key (pk_...)"],
      ["STRIPE_SECRET_KEY", "pk_test_startupErrors", "STRIPE_SECRET_KEY must be a secret or restricted key"],
      ["STRIPE_WEBHOOK_SECRET", "sk_test_startupErrors", "STRIPE_WEBHOOK_SECRET must be the endpoint's signing secret (whsec_...)"],
    ];
    for (const [name, value, message] of settings) {
      const { code, stderr } = await startExpectingExit({ PORT: String(await freePort()), [name]: value });
      expect(code, name).toBe(1);
      expect(stderr, name).toContain(message);
      expect(stderr, name).not.toContain(value);
      expect(stderr, name).not.toMatch(STACK_LINE);
    }
  }, 120_000);

  it("settings in the .env file are read at start (CONTRACT 15): a bad one there stops the start naming it", async () => {
    const file = path.join(mkdtempSync(path.join(os.tmpdir(), "gw-start-")), ".env");
    dataDirs.push(path.dirname(file));
    writeFileSync(file, "# from the env file\nUPSTREAM_MAX_RETRIES=lots\n");
    const { code, stderr } = await startExpectingExit({ PORT: String(await freePort()), ENV_FILE: file });
    expect(code).toBe(1);
    expect(stderr).toContain("UPSTREAM_MAX_RETRIES");
    expect(stderr).not.toMatch(STACK_LINE);
  }, 60_000);

  it("a CONFIG_FILE limit whose name is no limit (\"loginIP\"): exit 1 naming it, no stack trace", async () => {
    // it was kept and never read: the server started with loginIp at its default
    const file = path.join(mkdtempSync(path.join(os.tmpdir(), "gw-start-")), "config.json");
    dataDirs.push(path.dirname(file));
    writeFileSync(file, JSON.stringify({ limits: { loginIP: { points: 3, duration: 60 } } }));
    const { code, stderr } = await startExpectingExit({ PORT: String(await freePort()), CONFIG_FILE: file });
    expect(code).toBe(1);
    expect(stderr).toContain("Unrecognized key: \"loginIP\"");
    expect(stderr).toContain("at limits");
    expect(stderr).not.toMatch(STACK_LINE);
  }, 60_000);

  it("a CONFIG_FILE credit package whose total is not amount + bonus: exit 1 naming it, no stack trace", async () => {
    // it started: GET /api/billing/config showed total 10 for a package whose purchase granted 10 + 1
    const file = path.join(mkdtempSync(path.join(os.tmpdir(), "gw-start-")), "config.json");
    dataDirs.push(path.dirname(file));
    writeFileSync(file, JSON.stringify({ creditPackages: [{ amount: 10, bonus: 0, total: 10 }, { amount: 50, bonus: 5, total: 50 }] }));
    const { code, stderr } = await startExpectingExit({ PORT: String(await freePort()), CONFIG_FILE: file });
    expect(code).toBe(1);
    expect(stderr).toContain("total must be amount + bonus");
    expect(stderr).toContain("at creditPackages[1].total");
    expect(stderr).not.toMatch(STACK_LINE);
  }, 60_000);

  it("a CONFIG_FILE model entry without prices, with prices in dollars, a misspelt field, a wrong type or a taken id: exit 1 naming it, no stack trace", async () => {
    // all started: no pricing answered 500 to every GET /v1/models, dollars (0.001) charged a thousandth of the price,
    // "inputPer1K" made the input free, and a second "textA-4" was listed but never reached
    const dir = mkdtempSync(path.join(os.tmpdir(), "gw-start-"));
    dataDirs.push(dir);
    const textA4 = DEFAULT_MODELS[0];
    if (textA4?.id !== "textA-4") throw new Error("textA-4 is not the first default model");
    const cases: Array<[Record<string, unknown>, string, string]> = [
      // a new model (an entry with a default's id patches it, keeping the default's prices)
      [{ ...textA4, id: "textA-4-custom", pricing: undefined }, "expected object, received undefined", "at models[0].pricing"],
      [{ ...textA4, pricing: { inputPer1k: 0.001, outputPer1k: 0.002 } }, "must be whole micro-dollars (1 USD = 1000000)", "at models[0].pricing.inputPer1k"],
      [{ ...textA4, pricing: { inputPer1K: 1000, outputPer1k: 2000 } }, "Unrecognized key: \"inputPer1K\"", "at models[0].pricing"],
      [{ ...textA4, pricing: { inputPer1k: -1000, outputPer1k: 2000 } }, "expected number to be >=0", "at models[0].pricing.inputPer1k"],
      [{ ...textA4, type: "Text" }, "Invalid option", "at models[0].type"],
      [{ ...textA4, protocol: "flux" }, "this protocol cannot serve a model of this type", "at models[0].protocol"],
      [{ ...textA4, contextWindow: -1 }, "expected number to be >0", "at models[0].contextWindow"],
      [{ ...textA4, baseUrl: "localhost:8080" }, "must be an http:// or https:// URL", "at models[0].baseUrl"],
    ];
    for (const [entry, rule, at] of cases) {
      const file = path.join(dir, "config.json");
      writeFileSync(file, JSON.stringify({ models: [entry, ...DEFAULT_MODELS.slice(1)] }));
      const { code, stderr } = await startExpectingExit({ PORT: String(await freePort()), CONFIG_FILE: file });
      expect(code, rule).toBe(1);
      expect(stderr, rule).toContain(rule);
      expect(stderr, rule).toContain(at);
      expect(stderr, rule).not.toMatch(STACK_LINE);
    }
    const file = path.join(dir, "config.json");
    writeFileSync(file, JSON.stringify({ models: [...DEFAULT_MODELS, textA4] }));
    const { code, stderr } = await startExpectingExit({ PORT: String(await freePort()), CONFIG_FILE: file });
    expect(code).toBe(1);
    expect(stderr).toContain("the id \"textA-4\" is already taken by an earlier entry");
    expect(stderr).toContain(`at models[${DEFAULT_MODELS.length}].id`);
  }, 120_000);

  it("a CONFIG_FILE plan without its limits, with a price as text, a misspelt field or a taken id: exit 1 naming it, no stack trace", async () => {
    // all started: a plan without requestsPerMinute never limited its subscribers (X-RateLimit-Limit: undefined)
    const dir = mkdtempSync(path.join(os.tmpdir(), "gw-start-"));
    dataDirs.push(dir);
    const [free, ...paid] = DEFAULT_PLANS;
    if (free?.id !== "free") throw new Error("free is not the first default plan");
    const cases: Array<[object[], string, string]> = [
      [[{ id: "free" }, ...paid], "expected number, received undefined", "at plans[0].requestsPerMinute"],
      [[free, { ...paid[0], price: "20" }], "expected number, received string", "at plans[1].price"],
      [[{ ...free, requestsPerMinute: 0 }, ...paid], "expected number to be >0", "at plans[0].requestsPerMinute"],
      [[{ ...free, concurrentRequest: 2 }, ...paid], "Unrecognized key: \"concurrentRequest\"", "at plans[0]"],
      [[free, ...paid, { ...free, name: "Free again" }], "the id \"free\" is already taken by an earlier plan", `at plans[${DEFAULT_PLANS.length}].id`],
    ];
    for (const [plans, rule, at] of cases) {
      const file = path.join(dir, "config.json");
      writeFileSync(file, JSON.stringify({ plans }));
      const { code, stderr } = await startExpectingExit({ PORT: String(await freePort()), CONFIG_FILE: file });
      expect(code, rule).toBe(1);
      expect(stderr, rule).toContain(rule);
      expect(stderr, rule).toContain(at);
      expect(stderr, rule).not.toMatch(STACK_LINE);
    }
  }, 120_000);

  it("a DATA_DIR this user may not write in: exit 1 naming DATA_DIR, no stack trace", async () => {
    // it stopped with a bare "EACCES: permission denied, mkdir '…'" (or "open '…/session-secret'") naming no setting
    const parent = mkdtempSync(path.join(os.tmpdir(), "gw-start-ro-"));
    dataDirs.push(parent);
    chmodSync(parent, 0o555);
    for (const dataDir of [parent, path.join(parent, "data")]) {
      const { code, stderr } = await startExpectingExit({ PORT: String(await freePort()), DATA_DIR: dataDir }, { permissionsApply: true });
      expect(code, dataDir).toBe(1);
      expect(stderr, dataDir).toContain(`DATA_DIR ${dataDir} is not writable`);
      expect(stderr, dataDir).not.toMatch(STACK_LINE);
    }
  }, 60_000);

  it("SESSION_SECRET unset and DATA_DIR's generated session-secret file empty: exit 1 naming both, no stack trace", async () => {
    // it started with an empty secret, and every login was a 500 ("Empty password" sealing the session)
    const dataDir = mkdtempSync(path.join(os.tmpdir(), "gw-start-secret-"));
    dataDirs.push(dataDir);
    writeFileSync(path.join(dataDir, "session-secret"), "\n");
    const { code, stderr } = await startExpectingExit({ PORT: String(await freePort()), DATA_DIR: dataDir, SESSION_SECRET: undefined });
    expect(code).toBe(1);
    expect(stderr).toContain(`SESSION_SECRET is unset and ${path.join(dataDir, "session-secret")} holds 0 characters`);
    expect(stderr).not.toMatch(STACK_LINE);
  }, 60_000);

  it("PORT=0 without PUBLIC_URL: exit 1 naming both, no stack trace", async () => {
    // it started on a free port with PUBLIC_URL http://localhost:0: verification links and every signed-in POST failed
    const { code, stderr } = await startExpectingExit({ PORT: "0" });
    expect(code).toBe(1);
    expect(stderr).toContain("PORT=0 (a free port picked at start) needs PUBLIC_URL");
    expect(stderr).not.toMatch(STACK_LINE);
  }, 60_000);
});
