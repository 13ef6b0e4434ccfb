// POST /api/auth/password-reset answers alike for a real account and an unknown address (SPEC: the same answer),
// and as soon: were the answer to wait for the reset mail, a slow mail server would tell anyone which addresses
// have accounts. A mail server of this file's own takes its time over every message.
import net from "node:net";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { startTestServer, type TestServer } from "./harness";
import { call, signup, uniqueEmail } from "./auth-helpers";

const MAIL_DELAY_MS = 1_500;

/** A minimal SMTP server that accepts every message, answering its end of DATA after MAIL_DELAY_MS. */
function slowSmtpServer(received: string[]): net.Server {
  return net.createServer((socket) => {
    socket.setEncoding("utf8");
    socket.write("220 slow.example ESMTP\r\n");
    let inData = false;
    let buffered = "";
    socket.on("data", (chunk: string) => {
      buffered += chunk;
      for (let end = buffered.indexOf("\r\n"); end !== -1; end = buffered.indexOf("\r\n")) {
        const line = buffered.slice(0, end);
        buffered = buffered.slice(end + 2);
        if (inData) {
          if (line === ".") {
            inData = false;
            setTimeout(() => {
              received.push("message");
              socket.write("250 queued\r\n");
            }, MAIL_DELAY_MS);
          }
          continue;
        }
        const verb = line.slice(0, 4).toUpperCase();
        if (verb === "DATA") {
          inData = true;
          socket.write("354 go ahead\r\n");
        } else if (verb === "QUIT") {
          socket.end("221 bye\r\n");
        } else {
          socket.write(verb === "EHLO" ? "250 slow.example\r\n" : "250 ok\r\n");
        }
      }
    });
    socket.on("error", () => undefined);
  });
}

describe("password reset against a slow mail server", () => {
  const received: string[] = [];
  const smtp = slowSmtpServer(received);
  let server: TestServer;

  beforeAll(async () => {
    await new Promise<void>((resolve) => smtp.listen(0, "127.0.0.1", resolve));
    const { port } = smtp.address() as net.AddressInfo;
    server = await startTestServer({ env: { SMTP_URL: `smtp://127.0.0.1:${port}` } });
  }, 60_000);

  afterAll(async () => {
    await server?.close();
    smtp.close();
  });

  it("answers a real account as soon as an unknown address, and mails the link after the answer", async () => {
    const email = uniqueEmail("reset-timing");
    await signup(server, email);
    const sentBefore = received.length;

    const timed = async (address: string) => {
      const started = performance.now();
      const res = await call(server, "POST", "/api/auth/password-reset", { body: { email: address } });
      return { res, ms: performance.now() - started };
    };
    const real = await timed(email);
    const unknown = await timed(uniqueEmail("reset-ghost"));
    expect(real.res.status).toBe(200);
    expect(real.res.body).toEqual(unknown.res.body);
    // it did not wait for the mail server's 1.5 s
    expect(real.ms).toBeLessThan(MAIL_DELAY_MS);
    await vi.waitFor(() => expect(received.length).toBe(sentBefore + 1), { timeout: 10_000 });
  }, 60_000);
});
