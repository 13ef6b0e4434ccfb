// A fake OpenAI chat completions upstream (https://platform.openai.com/docs/api-reference/chat) whose streams never end:
// a role chunk, then one content chunk every `intervalMs` until the client goes. Non-streamed calls answer "ok" at once.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";

export interface EndlessUpstream {
  url: string;
  server: Server;
  close(): void;
}

export function startEndlessChatUpstream(intervalMs: number): Promise<EndlessUpstream> {
  const server = createServer((req, res) => {
    let raw = "";
    req.on("data", (c: Buffer) => { raw += c.toString(); });
    req.on("end", () => {
      const body = JSON.parse(raw) as { model: string; stream?: boolean };
      const base = { id: "chatcmpl-endless", created: Math.floor(Date.now() / 1000), model: body.model };
      if (!body.stream) {
        res.writeHead(200, { "content-type": "application/json" });
        res.end(JSON.stringify({ ...base, object: "chat.completion", choices: [{ index: 0, message: { role: "assistant", content: "ok" }, finish_reason: "stop" }], usage: { prompt_tokens: 5, completion_tokens: 1, total_tokens: 6 } }));
        return;
      }
      res.writeHead(200, { "content-type": "text/event-stream" });
      const chunk = (delta: Record<string, string>) => `data: ${JSON.stringify({ ...base, object: "chat.completion.chunk", choices: [{ index: 0, delta, finish_reason: null }] })}\n\n`;
      res.write(chunk({ role: "assistant", content: "" }));
      const timer = setInterval(() => res.write(chunk({ content: "word " })), intervalMs);
      res.on("close", () => clearInterval(timer));
    });
  });
  const close = () => {
    server.closeAllConnections();
    server.close();
  };
  return new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server, close })));
}
