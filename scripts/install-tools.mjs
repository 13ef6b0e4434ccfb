#!/usr/bin/env node
// Builds the local helper binaries the project runs (FerretDB for the embedded database,
// stripe-mock for tests) from their Go modules, once, into TOOLS_DIR (default .tools/bin).
// Usage: node scripts/install-tools.mjs [--unless-mongodb-uri] [ferretdb] [stripe-mock]
// --unless-mongodb-uri (`npm start`): FerretDB is not built when MONGODB_URI is set, in the environment or in the
// project's .env (CONTRACT 15: with a database of its own, a machine needs no Go).
import { execFileSync } from "node:child_process";
import { cpSync, chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseEnv } from "node:util";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const binDir = path.resolve(root, process.env.TOOLS_DIR ?? ".tools/bin");

const TOOLS = {
  // FerretDB embeds build/version/version.txt, which its module zip leaves empty: written before the build.
  // Patched (see PATCHES): `build` names the patch level, so a binary built without it is rebuilt.
  ferretdb: { module: "github.com/FerretDB/FerretDB", version: "v1.24.2", build: "gw1", pkg: "./cmd/ferretdb", versionFile: "build/version/version.txt" },
  "stripe-mock": { module: "github.com/stripe/stripe-mock", version: "v0.203.0", pkg: "." },
};

/**
 * Source changes applied before a build, each found exactly once or the build stops.
 *
 * FerretDB's SQLite backend creates every collection's unique `_id_` index on the expression
 * `_ferretdb_sjson->"_id"` but queries, updates and deletes by `_id` with `_ferretdb_sjson->'$._id'`: the same value,
 * another expression, so SQLite never uses the index and every `_id` lookup reads the whole table (~0.9 s for one
 * document among 200,000). Querying with the index's own expression makes it an index search (~50 µs), on existing
 * databases too, since their tables already carry that index.
 */
const PATCHES = {
  ferretdb: [{
    file: "internal/backends/sqlite/metadata/metadata.go",
    from: `IDColumn = DefaultColumn + "->'$._id'"`,
    to: `IDColumn = DefaultColumn + "->\\"_id\\""`,
  }],
};

function applyPatches(name, srcDir) {
  for (const { file, from, to } of PATCHES[name] ?? []) {
    const target = path.join(srcDir, file);
    const text = readFileSync(target, "utf8");
    if (text.split(from).length !== 2) throw new Error(`[install-tools] ${name}: ${file} no longer holds \`${from}\` once; the patch needs updating`);
    writeFileSync(target, text.replace(from, () => to));
  }
}

function go(args, cwd) {
  try {
    return execFileSync("go", args, { cwd, encoding: "utf8", stdio: ["ignore", "pipe", "inherit"] });
  } catch (err) {
    if (err.code === "ENOENT") {
      console.error("[install-tools] Go is needed to build FerretDB and stripe-mock and is not on PATH.");
      console.error("[install-tools] Install Go >= 1.21 (https://go.dev/dl/); it fetches the toolchain the modules pin.");
      process.exit(1);
    }
    throw err;
  }
}

function makeWritable(dir) {
  chmodSync(dir, 0o755);
  for (const entry of readdirSync(dir)) {
    const p = path.join(dir, entry);
    if (statSync(p).isDirectory()) makeWritable(p);
    else chmodSync(p, 0o644);
  }
}

// `go install mod@version` also asks the proxy for the module's version list (deprecation check),
// which some proxies refuse; downloading the pinned version and building inside it needs only the zip.
function build(name) {
  const tool = TOOLS[name];
  if (!tool) throw new Error(`unknown tool ${name}; known: ${Object.keys(TOOLS).join(", ")}`);
  const out = path.join(binDir, name);
  // A stamp beside the binary records the version it was built from, so a version bump rebuilds it
  // (a binary without a stamp predates stamps and is kept).
  const stamp = `${out}.version`;
  const built = tool.build ? `${tool.version}+${tool.build}` : tool.version;
  if (existsSync(out) && (!existsSync(stamp) || readFileSync(stamp, "utf8").trim() === built)) return;
  console.log(`[install-tools] building ${name} ${tool.version} (once)...`);
  mkdirSync(binDir, { recursive: true });
  const info = JSON.parse(go(["mod", "download", "-json", `${tool.module}@${tool.version}`], binDir));
  let srcDir = info.Dir;
  let tmp;
  if (tool.versionFile || PATCHES[name]) {
    // The module cache is read-only: build from a writable copy.
    tmp = mkdtempSync(path.join(os.tmpdir(), `${name}-src-`));
    cpSync(info.Dir, tmp, { recursive: true });
    makeWritable(tmp);
    if (tool.versionFile) writeFileSync(path.join(tmp, tool.versionFile), `${tool.version}\n`);
    applyPatches(name, tmp);
    srcDir = tmp;
  }
  try {
    // Module zips ship a partial vendor/ (stripe-mock), which go build would otherwise insist on.
    // Built beside the target and renamed into place: a running binary is never overwritten in place.
    go(["build", "-mod=mod", "-trimpath", "-o", `${out}.tmp`, tool.pkg], srcDir);
    renameSync(`${out}.tmp`, out);
  } finally {
    if (tmp) rmSync(tmp, { recursive: true, force: true });
  }
  writeFileSync(stamp, `${built}\n`);
  console.log(`[install-tools] ${name} -> ${out}`);
}

// Python tools from PyPI, each in a virtual environment of its own under .tools/<name> (the API fuzz test's schemathesis).
const PYTHON_TOOLS = {
  schemathesis: { package: "schemathesis", version: "4.32.5" },
};

function python(args, cwd) {
  for (const exe of ["python3", "python"]) {
    try {
      return execFileSync(exe, args, { cwd, encoding: "utf8", stdio: ["ignore", "pipe", "inherit"] });
    } catch (err) {
      if (err.code !== "ENOENT") throw err;
    }
  }
  console.error("[install-tools] Python >= 3.9 (python3, with its venv module) is needed for the API fuzz test's schemathesis and is not on PATH.");
  process.exit(1);
}

function installPython(name) {
  const tool = PYTHON_TOOLS[name];
  const dir = path.resolve(root, ".tools", name);
  const stamp = path.join(dir, "installed.version");
  if (existsSync(stamp) && readFileSync(stamp, "utf8").trim() === tool.version) return;
  console.log(`[install-tools] installing ${tool.package} ${tool.version} from PyPI into ${dir} (once)...`);
  rmSync(dir, { recursive: true, force: true });
  python(["-m", "venv", dir], root);
  execFileSync(path.join(dir, "bin", "pip"), ["install", "--quiet", "--disable-pip-version-check", `${tool.package}==${tool.version}`], { stdio: ["ignore", "inherit", "inherit"] });
  writeFileSync(stamp, `${tool.version}\n`);
  console.log(`[install-tools] ${name} -> ${path.join(dir, "bin", name)}`);
}

/** MONGODB_URI as the server will read it: the process environment first, else the .env the server loads. */
function mongodbUri() {
  if (process.env.MONGODB_URI) return process.env.MONGODB_URI;
  const file = process.env.ENV_FILE ?? path.join(root, ".env");
  if (file === "" || !existsSync(file)) return undefined;
  return parseEnv(readFileSync(file, "utf8")).MONGODB_URI || undefined;
}

const args = process.argv.slice(2);
const unlessMongodbUri = args.includes("--unless-mongodb-uri");
let wanted = args.filter((arg) => arg !== "--unless-mongodb-uri");
if (wanted.length === 0) wanted = [...Object.keys(TOOLS), ...Object.keys(PYTHON_TOOLS)];
if (unlessMongodbUri && wanted.includes("ferretdb") && mongodbUri()) {
  console.log("[install-tools] MONGODB_URI is set: FerretDB is not needed, not built");
  wanted = wanted.filter((name) => name !== "ferretdb");
}
for (const name of wanted) {
  if (name in PYTHON_TOOLS) installPython(name);
  else build(name);
}
