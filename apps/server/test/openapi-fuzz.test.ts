// The OpenAPI document describes exactly what the server accepts and answers: schemathesis (PyPI; installed by
// `node scripts/install-tools.mjs schemathesis`, which .ci/run and `npm test` call) generates requests from the
// document, valid and invalid, and runs them against a real server with fake upstreams, a session and a funded API
// key of one verified account. Zero failures of any check below.
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_PLANS } from "@gw/config";
import { startFakeUpstreams, type FakeUpstreams } from "@gw/test-support";
import { verifiedUser } from "./auth-helpers";
import { startTestServer, type TestServer } from "./harness";
import { credit } from "./support/gateway-fixtures";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..");
const SCHEMATHESIS = path.join(ROOT, ".tools/schemathesis/bin/schemathesis");

/**
 * What is checked: no 5xx but the documented 503s, statuses, content types, headers and bodies as documented, a
 * request valid by the document accepted and an invalid one refused, a missing required header refused, and an
 * undeclared method on a declared path answered 405 with `Allow`.
 */
const CHECKS = [
  "not_a_server_error", "status_code_conformance", "content_type_conformance", "response_headers_conformance",
  "response_schema_conformance", "positive_data_acceptance", "negative_data_rejection", "missing_required_header",
  "unsupported_method",
];

/**
 * Test cases per operation and phase: enough for every documented bound to be tried, within ~4 minutes on 2 cores.
 * The gateway's operations get fewer: each valid request runs a whole model call against the fake upstreams.
 */
const MAX_EXAMPLES = { api: 20, gateway: 5 };

/**
 * The document's operations in two runs, each against its own base URL: schemathesis sends every operation to
 * `--url` + its path, ignoring the path-level `servers` that put the gateway's operations (tagged Gateway, keyed by
 * their full path: /v1/chat/completions, /api/v1/task …) at the origin rather than under /api.
 */
const RUNS = [
  { name: "api", selection: ["--exclude-tag", "Gateway"], base: (origin: string, basePath: string) => `${origin}${basePath}` },
  { name: "gateway", selection: ["--include-tag", "Gateway"], base: (origin: string) => origin },
] as const;

/**
 * Operations, or checks of an operation, left out of the run, each with why it cannot be fuzzed meaningfully. Other
 * checks still run on an operation that only has some checks left out.
 */
export const EXCLUSIONS: Array<{ operationId: string; checks?: string[]; reason: string }> = [
  { operationId: "auth-logout", reason: "revokes the session every other operation is fuzzed with" },
  { operationId: "auth-deleteAccount", reason: "deletes the account every other operation is fuzzed with" },
  { operationId: "auth-signup", checks: ["positive_data_acceptance"], reason: "the password rules (upper and lower case, a digit, a special character, not a common password: CONTRACT 2) are more than a schema states: 400 weak_password" },
  { operationId: "auth-changePassword", checks: ["positive_data_acceptance"], reason: "the current password is a secret no schema states: a wrong one is 401 invalid_credentials, and a generated new one rarely passes the password rules (400 weak_password, CONTRACT 2)" },
  { operationId: "billing-webhook", checks: ["positive_data_acceptance"], reason: "a valid request carries an HMAC of its body no generator can make: a wrong one is 400 (CONTRACT 6)" },
  { operationId: "auth-verifyEmail", checks: ["positive_data_acceptance"], reason: "the token of an e-mailed link is a secret no schema states: an unknown one is 400 invalid_token (CONTRACT 1)" },
  { operationId: "auth-confirmPasswordReset", checks: ["positive_data_acceptance"], reason: "the token of an e-mailed link is a secret no schema states: an unknown one is 400 invalid_token (CONTRACT 1)" },
  { operationId: "admin-setPlans", checks: ["positive_data_acceptance"], reason: "each plan is checked by CONFIG_FILE's rules (known fields, whole cents, whole micro-dollars, ids unique in the list) that the document states only in words (400 invalid_parameter naming the field)" },
  { operationId: "admin-setCreditPackages", checks: ["positive_data_acceptance"], reason: "each package is checked by CONFIG_FILE's rules (whole cents, total = amount + bonus) that the document states only in words (400 invalid_parameter naming the field)" },
  ...[
    "gatewayPostV1ChatCompletions", "gatewayPostV1Completions", "gatewayPostV1Embeddings", "gatewayPostV1ImagesGenerations", "gatewayPostV1AudioSpeech",
    "gatewayPostV1AudioTranscriptions", "gatewayPostApiV1Task", "gatewayPostApiV1ImageAGenerate", "gatewayPostApiV1ImageB1", "gatewayPostV1Responses",
    "gatewayPostV1Messages", "gatewayPostV1MessagesCountTokens",
  ].map((operationId) => ({
    operationId, checks: ["positive_data_acceptance"],
    reason: "a valid request names a model the operator configured for the route (GET /v1/models lists them, with their endpoints): any other is 400 unsupported_model (SPEC 4), and the configuration is no part of the document's schemas",
  })),
  ...["keys-create", "keys-update"].map((operationId) => ({
    operationId, checks: ["positive_data_acceptance"],
    reason: "a key's controls are checked against more than a schema states (CONTRACT 10): allowed_ips entries must parse as IP addresses or CIDRs, v4 or v6 (a grammar no portable pattern spells), allowed_models must be configured models, expires_at must lie ahead of the clock, rate_limit within the plan's: 400 invalid_parameter naming the field",
  })),
  { operationId: "usage-list", checks: ["positive_data_acceptance"], reason: "`from` and `to` must name days that exist and span at most 366 days: rules across parameters and the calendar that no schema states (400 invalid_parameter)" },
];

/** schemathesis.toml: the credentials by security scheme, and the checks left out per operation. */
function configFile(session: string, apiKey: string): string {
  const lines = [
    "[auth.openapi.session]", `api_key = ${JSON.stringify(session)}`,
    "[auth.openapi.apiKey]", `bearer = ${JSON.stringify(apiKey)}`,
    "[auth.openapi.anthropicApiKey]", `api_key = ${JSON.stringify(apiKey)}`,
    // the checks are chosen here rather than on the command line, where they would override the operations' below
    "[checks]", "enabled = false",
    ...CHECKS.flatMap((check) => [`[checks.${check}]`, "enabled = true"]),
  ];
  for (const { operationId, checks } of EXCLUSIONS) {
    if (!checks) continue;
    lines.push("[[operations]]", `include-operation-id = ${JSON.stringify(operationId)}`);
    for (const check of checks) lines.push(`checks.${check}.enabled = false`);
  }
  return `${lines.join("\n")}\n`;
}

interface RunResult { code: number | null; output: string }

/** Runs in `cwd` (its cache folder, .schemathesis, goes there). */
function schemathesis(args: string[], cwd: string): Promise<RunResult> {
  // eslint-disable-next-line no-restricted-properties -- passing PATH to a child process, not reading a setting
  const child = spawn(SCHEMATHESIS, args, { cwd, env: { PATH: process.env.PATH ?? "", HOME: cwd, NO_COLOR: "1" }, stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  child.stdout.on("data", (b: Buffer) => { output += b.toString(); });
  child.stderr.on("data", (b: Buffer) => { output += b.toString(); });
  return new Promise((resolve) => child.once("exit", (code) => resolve({ code, output })));
}

describe("the OpenAPI document against the server, fuzzed", () => {
  let fakes: FakeUpstreams;
  let server: TestServer;
  let reportDir: string;

  beforeAll(async () => {
    fakes = await startFakeUpstreams();
    // limits out of the way: a 429 is documented, but would leave most generated requests untried
    const plans = DEFAULT_PLANS.map((p) => ({ ...p, requestsPerMinute: 1_000_000, concurrentRequests: 100 }));
    server = await startTestServer({ env: fakes.env, config: { plans } });
    reportDir = mkdtempSync(path.join(os.tmpdir(), "gw-fuzz-"));
  }, 60_000);

  afterAll(async () => {
    await server?.close();
    await fakes?.close();
    if (reportDir) rmSync(reportDir, { recursive: true, force: true });
  });

  it("finds no request the server answers otherwise than the document says", async () => {
    if (!existsSync(SCHEMATHESIS)) throw new Error(`${SCHEMATHESIS} is missing: run \`node scripts/install-tools.mjs schemathesis\` (needs python3)`);
    // the session's account and the key's are two, so that fuzzing the key routes with the session (revoke included)
    // never revokes the key the other operations run with
    const user = await verifiedUser(server);
    const keyOwner = await verifiedUser(server);
    const key = await server.app.context.apiKeys.create(keyOwner.id, { name: "fuzz" });
    await credit(server, keyOwner.id, 1_000);
    const session = /^[^=]+=([^;]*)/.exec(user.cookie)?.[1] ?? "";
    const config = path.join(reportDir, "schemathesis.toml");
    writeFileSync(config, configFile(session, key.key));
    const doc = (await (await fetch(`${server.url}/api/openapi.json`)).json()) as { servers: Array<{ url: string }> };
    const basePath = new URL(doc.servers[0]?.url ?? "http://x/api").pathname;

    const excluded = EXCLUSIONS.filter((e) => !e.checks).flatMap(({ operationId }) => ["--exclude-operation-id", operationId]);
    const failures: string[] = [];
    for (const run of RUNS) {
      const { code, output } = await schemathesis([
        "--config-file", config,
        "run",
        `${server.url}/api/openapi.json`,
        "--url", run.base(server.url, basePath),
        ...run.selection,
        "--max-examples", String(MAX_EXAMPLES[run.name]),
        "--seed", "38",
        // one worker: with two, Hypothesis (Python 3.11) describing its filters from two threads at once fails on
        // a race in the ast module ("AST constructor recursion depth mismatch"), a runtime error of the tool itself
        "--workers", "1",
        "--request-timeout", "30",
        "--suppress-health-check", "all",
        "--no-shrink",
        "--phases", "examples,coverage,fuzzing",
        "--report-dir", path.join(reportDir, run.name),
        ...excluded,
      ], reportDir);
      if (code !== 0) {
        console.error(output);
        failures.push(`${run.name} run (exit ${String(code)}):\n${output.slice(-20_000)}`);
      }
    }
    expect(failures.join("\n\n")).toBe("");
  }, 480_000);
});
