// A fast fake OpenAI-compatible upstream for the bench: answers chat completions after a fixed delay
// (argv[2] ms, default 20), streamed or not. Prints its URL on stdout.
// It shares the machine with the gateway under test, so it does as little as it can per request: the answers
// are serialised once per model, and the request body is only searched for the two fields that matter.
import { createServer } from "node:http";

const delayMs = Number(process.argv[2] ?? 20);
const reply = "Echo: hello";
const answers = new Map();

function answersFor(model) {
  let a = answers.get(model);
  if (a) return a;
  const text = JSON.stringify({
    id: "c1", object: "chat.completion", created: 0, model,
    choices: [{ index: 0, message: { role: "assistant", content: reply }, finish_reason: "stop" }],
    usage: { prompt_tokens: 1, completion_tokens: 2, total_tokens: 3 },
  });
  const base = { id: "c1", object: "chat.completion.chunk", created: 0, model };
  const events = [
    { ...base, choices: [{ index: 0, delta: { role: "assistant", content: "Echo:" }, finish_reason: null }] },
    { ...base, choices: [{ index: 0, delta: { content: " hello" }, finish_reason: null }] },
    { ...base, choices: [{ index: 0, delta: {}, finish_reason: "stop" }] },
    { ...base, choices: [], usage: { prompt_tokens: 1, completion_tokens: 2, total_tokens: 3 } },
  ].map((e) => `data: ${JSON.stringify(e)}\n\n`);
  a = {
    json: Buffer.from(text),
    // The first delta goes alone, so a client measuring time to first token sees it before the rest.
    streamHead: events[0],
    streamTail: `${events.slice(1).join("")}data: [DONE]\n\n`,
  };
  answers.set(model, a);
  return a;
}

const server = createServer((req, res) => {
  let body = "";
  req.setEncoding("utf8");
  req.on("data", (c) => { body += c; });
  req.on("end", () => {
    const model = /"model"\s*:\s*"([^"]*)"/.exec(body)?.[1] ?? "unknown";
    const stream = /"stream"\s*:\s*true/.test(body);
    const a = answersFor(model);
    setTimeout(() => {
      if (stream) {
        res.writeHead(200, { "content-type": "text/event-stream" });
        res.write(a.streamHead);
        res.end(a.streamTail);
        return;
      }
      res.writeHead(200, { "content-type": "application/json", "content-length": a.json.length });
      res.end(a.json);
    }, delayMs);
  });
});
server.keepAliveTimeout = 60_000;
server.listen(0, "127.0.0.1", () => {
  process.stdout.write(`${JSON.stringify({ url: `http://127.0.0.1:${server.address().port}` })}\n`);
});
