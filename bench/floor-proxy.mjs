// The floor: the least a Node proxy on the gateway's stack does for the same request, with none of the gateway's
// work (no key check, limits, credit hold, validation, metering, ledger). node:http in, one undici Agent out (the
// gateway's upstream client settings: keep-alive, 256 connections per origin), the request body parsed and
// re-serialised, a non-streamed answer parsed and re-serialised, a streamed one piped through.
// run.mjs measures it beside the gateway at every step, so a run shows what the machine allows any such proxy that day.
// argv: <instant upstream url> <slow upstream url>; textA-4 goes to the first, every other model to the second.
// Prints {url} on stdout; stops with its parent (IPC disconnect) or on SIGTERM.
import http from "node:http";
import { Agent } from "undici";

const [instant = "", slow = ""] = process.argv.slice(2);
const agent = new Agent({ connections: 256, keepAliveTimeout: 30_000, keepAliveMaxTimeout: 600_000 });
const originFor = (model) => new URL(model === "textA-4" ? instant : slow).origin;

async function forward(req, res, raw) {
  const body = JSON.parse(raw);
  const upstream = await agent.request({
    origin: originFor(body.model), path: "/v1/chat/completions", method: "POST",
    headers: { "content-type": "application/json", authorization: "Bearer bench" }, body: JSON.stringify(body),
  });
  if (body.stream) {
    res.writeHead(upstream.statusCode, { "content-type": "text/event-stream", "cache-control": "no-cache" });
    for await (const chunk of upstream.body) res.write(chunk);
    res.end();
    return;
  }
  const answer = JSON.stringify(JSON.parse(await upstream.body.text()));
  res.writeHead(upstream.statusCode, { "content-type": "application/json", "content-length": Buffer.byteLength(answer) });
  res.end(answer);
}

const server = http.createServer((req, res) => {
  let raw = "";
  req.setEncoding("utf8");
  req.on("data", (chunk) => { raw += chunk; });
  req.on("end", () => {
    forward(req, res, raw).catch((err) => {
      res.writeHead(502, { "content-type": "text/plain" });
      res.end(String(err));
    });
  });
});
server.keepAliveTimeout = 65_000;
server.listen(0, "127.0.0.1", () => console.log(JSON.stringify({ url: `http://127.0.0.1:${server.address().port}` })));
const stop = () => server.close(() => void agent.close().then(() => process.exit(0)));
process.on("SIGTERM", stop);
process.on("disconnect", stop);
