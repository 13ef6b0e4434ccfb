import net from "node:net";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
  /** from the last byte sent to the answer */
  waitedMs: number;
  closed: boolean;
}

/** Sends `head` and the `parts` of a body over a raw socket, `gapMs` apart, then waits (at most 10 s) for the answer. */
export function rawPost(url: string, head: string, parts: Buffer[], gapMs = 0): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(new URL(url).port), "127.0.0.1");
    const chunks: Buffer[] = [];
    let lastSent = Date.now();
    socket.on("data", (c: Buffer) => chunks.push(c));
    socket.on("error", reject);
    const giveUp = setTimeout(() => socket.destroy(), 10_000);
    socket.on("close", () => {
      clearTimeout(giveUp);
      const text = Buffer.concat(chunks).toString();
      const [top = "", body = ""] = text.split("\r\n\r\n");
      const [statusLine = "", ...lines] = top.split("\r\n");
      const headers = Object.fromEntries(lines.map((l) => [l.slice(0, l.indexOf(":")).toLowerCase(), l.slice(l.indexOf(":") + 1).trim()]));
      resolve({ status: Number(statusLine.split(" ")[1] ?? 0), headers, body, waitedMs: Date.now() - lastSent, closed: true });
    });
    void (async () => {
      socket.write(head);
      for (const part of parts) {
        if (gapMs > 0) await sleep(gapMs);
        socket.write(part);
        lastSent = Date.now();
      }
    })();
  });
}
