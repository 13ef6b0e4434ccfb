import type { OpenAPIObject } from "trpc-to-openapi";

type JsonObject = Record<string, unknown>;
const isObject = (v: unknown): v is JsonObject => typeof v === "object" && v !== null && !Array.isArray(v);

const escapeHtml = (text: string) =>
  text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");

const json = (value: unknown) => `<pre>${escapeHtml(JSON.stringify(value, null, 2))}</pre>`;

function requestPart(operation: JsonObject): string {
  const parts: string[] = [];
  if (Array.isArray(operation.parameters) && operation.parameters.length > 0) {
    const rows = operation.parameters.filter(isObject).map((p) =>
      `<tr><td><code>${escapeHtml(String(p.name))}</code></td><td>${escapeHtml(String(p.in))}</td><td>${p.required ? "yes" : "no"}</td></tr>`);
    parts.push(`<h4>Parameters</h4><table><tr><th>name</th><th>in</th><th>required</th></tr>${rows.join("")}</table>`);
  }
  const body = isObject(operation.requestBody) && isObject(operation.requestBody.content) ? operation.requestBody.content["application/json"] : undefined;
  if (isObject(body)) parts.push(`<h4>Request body (application/json)</h4>${json(body.schema)}`);
  return parts.join("");
}

function responsesPart(operation: JsonObject): string {
  if (!isObject(operation.responses)) return "";
  const items = Object.entries(operation.responses).filter((e): e is [string, JsonObject] => isObject(e[1])).map(([status, response]) => {
    const content = isObject(response.content) ? response.content["application/json"] : undefined;
    const schema = isObject(content) ? content.schema : undefined;
    const shown = isObject(schema) && typeof schema.$ref === "string" ? `<p>Body: <code>${escapeHtml(schema.$ref.replace("#/components/schemas/", ""))}</code></p>` : schema ? json(schema) : "";
    return `<li><strong>${escapeHtml(status)}</strong> ${escapeHtml(String(response.description ?? ""))}${status.startsWith("2") ? shown : ""}</li>`;
  });
  return `<h4>Responses</h4><ul>${items.join("")}</ul>`;
}

/** A readable reference of the OpenAPI document, rendered on the server (no CDN, no client script). */
export function renderDocsPage(doc: OpenAPIObject): string {
  const sections: string[] = [];
  for (const [path, item] of Object.entries(doc.paths ?? {})) {
    if (!isObject(item)) continue;
    // the gateway's paths are full (their path item names the origin as its server); the others are under /api
    const shownPath = Array.isArray(item.servers) ? path : `/api${path}`;
    for (const [method, operation] of Object.entries(item)) {
      if (!isObject(operation) || method === "servers") continue;
      const auth = Array.isArray(operation.security) ? "session cookie or API key as the route requires" : "none";
      sections.push(`<section id="${escapeHtml(String(operation.operationId ?? ""))}">
<h3><span class="method ${escapeHtml(method)}">${escapeHtml(method.toUpperCase())}</span> <code>${escapeHtml(shownPath)}</code></h3>
<p>${escapeHtml(String(operation.summary ?? ""))}</p><p class="auth">Authentication: ${escapeHtml(auth)}</p>
${requestPart(operation)}${responsesPart(operation)}</section>`);
    }
  }
  const schemas = doc.components?.schemas ?? {};
  const schemaList = Object.entries(schemas).map(([name, schema]) => `<h3 id="schema-${escapeHtml(name)}">${escapeHtml(name)}</h3>${json(schema)}`);
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(doc.info.title)} reference</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>
body{font-family:system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem;line-height:1.45;color:#1b1f24}
section{border-top:1px solid #d0d7de;padding:.5rem 0}pre{background:#f6f8fa;padding:.75rem;overflow:auto;font-size:.85rem}
.method{display:inline-block;min-width:4.5rem;text-align:center;border-radius:4px;color:#fff;font-size:.8rem;padding:.1rem .4rem}
.get{background:#0969da}.post{background:#1a7f37}.delete{background:#cf222e}.put,.patch{background:#9a6700}
.auth{color:#57606a;font-size:.9rem}table{border-collapse:collapse}td,th{border:1px solid #d0d7de;padding:.2rem .5rem}
</style></head><body>
<h1>${escapeHtml(doc.info.title)} <small>${escapeHtml(doc.info.version)}</small></h1>
<p>${escapeHtml(doc.info.description ?? "")}</p>
<p>Machine-readable document: <a href="/api/openapi.json">/api/openapi.json</a></p>
<h2>Operations</h2>${sections.join("\n")}
<h2>Schemas</h2>${schemaList.join("\n")}
</body></html>`;
}
