// A fast fake OpenAI-compatible upstream for the bench: answers chat completions after a fixed delay
// (argv[2] ms, default 20), streamed or not. Prints its URL on stdout.
// It shares the 2 cores with the gateway under test, so it does as little as it can per request: HTTP/1.1 is
// parsed straight off the socket (request line and headers are only searched for the body's length), the answers
// are serialised once per model with their status line and headers, and the body is only searched for the two
// fields that matter. node:http cost ~3x the CPU per request, taken from the gateway during its run.
import { createServer } from "node:net";

const delayMs = Number(process.argv[2] ?? 20);
const reply = "Echo: hello";
const answers = new Map();
const HEAD_END = Buffer.from("\r\n\r\n");

function answersFor(model) {
  let a = answers.get(model);
  if (a) return a;
  const json = JSON.stringify({
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
  const chunk = (text) => `${Buffer.byteLength(text).toString(16)}\r\n${text}\r\n`;
  a = {
    json: Buffer.from(`HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(json)}\r\n\r\n${json}`),
    // The first delta goes alone, so a client measuring time to first token sees it before the rest.
    streamHead: Buffer.from(`HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n${chunk(events[0])}`),
    streamTail: Buffer.from(`${chunk(`${events.slice(1).join("")}data: [DONE]\n\n`)}0\r\n\r\n`),
  };
  answers.set(model, a);
  return a;
}

function answer(socket, body) {
  const text = body.toString("latin1");
  const a = answersFor(/"model"\s*:\s*"([^"]*)"/.exec(text)?.[1] ?? "unknown");
  const stream = /"stream"\s*:\s*true/.test(text);
  // One delay for every request: timers fire in order, so answers on one connection keep the requests' order.
  setTimeout(() => {
    if (socket.destroyed) return;
    if (stream) {
      socket.write(a.streamHead);
      socket.write(a.streamTail);
    } else {
      socket.write(a.json);
    }
  }, delayMs);
}

/** Decodes a chunked body at the start of `buf`: [body, bytes used], or undefined while incomplete. */
function dechunk(buf) {
  const parts = [];
  let at = 0;
  for (;;) {
    const eol = buf.indexOf("\r\n", at);
    if (eol === -1) return undefined;
    const size = parseInt(buf.toString("latin1", at, eol), 16);
    if (Number.isNaN(size)) throw new Error("bad chunk size");
    if (size === 0) {
      const end = buf.indexOf(HEAD_END, eol);
      return end === -1 ? undefined : [Buffer.concat(parts), end + 4];
    }
    if (buf.length < eol + 2 + size + 2) return undefined;
    parts.push(buf.subarray(eol + 2, eol + 2 + size));
    at = eol + 2 + size + 2;
  }
}

const server = createServer((socket) => {
  socket.setNoDelay(true);
  let pending = Buffer.alloc(0);
  socket.on("data", (data) => {
    pending = pending.length === 0 ? data : Buffer.concat([pending, data]);
    try {
      // Every complete request in the buffer (a client may pipeline).
      for (;;) {
        const headEnd = pending.indexOf(HEAD_END);
        if (headEnd === -1) return;
        const head = pending.toString("latin1", 0, headEnd).toLowerCase();
        const length = /\r\ncontent-length:\s*(\d+)/.exec(head);
        let body;
        let used;
        if (length) {
          used = headEnd + 4 + Number(length[1]);
          if (pending.length < used) return;
          body = pending.subarray(headEnd + 4, used);
        } else if (/\r\ntransfer-encoding:[^\r]*chunked/.test(head)) {
          const decoded = dechunk(pending.subarray(headEnd + 4));
          if (!decoded) return;
          body = decoded[0];
          used = headEnd + 4 + decoded[1];
        } else {
          body = Buffer.alloc(0);
          used = headEnd + 4;
        }
        pending = pending.subarray(used);
        answer(socket, body);
      }
    } catch {
      socket.destroy();
    }
  });
  socket.on("error", () => socket.destroy());
});
server.listen(0, "127.0.0.1", () => {
  process.stdout.write(`${JSON.stringify({ url: `http://127.0.0.1:${server.address().port}` })}\n`);
});
