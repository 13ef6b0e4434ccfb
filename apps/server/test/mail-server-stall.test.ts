// A sign-up answers once its verification mail is handed to the mail server, and a mail failure never fails the
// sign-up (the user can ask for a new link). A mail server that accepts the connection, greets and then says nothing
// more (overloaded, or a firewall dropping the rest) must not keep the sign-up waiting: nodemailer's own default is
// 10 minutes of silence.
import net from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestServer, type TestServer } from "./harness";
import { call, uniqueEmail } from "./auth-helpers";

describe("sign-up against a mail server that stops answering", () => {
  const sockets = new Set<net.Socket>();
  const smtp = net.createServer((socket) => {
    sockets.add(socket);
    socket.on("error", () => undefined);
    socket.write("220 stalled.example ESMTP\r\n"); // and nothing after it: EHLO is never answered
  });
  let server: TestServer;

  beforeAll(async () => {
    await new Promise<void>((resolve) => smtp.listen(0, "127.0.0.1", resolve));
    const { port } = smtp.address() as net.AddressInfo;
    server = await startTestServer({ env: { SMTP_URL: `smtp://127.0.0.1:${port}` } });
  });

  afterAll(async () => {
    await server?.close();
    for (const socket of sockets) socket.destroy();
    await new Promise<void>((resolve) => smtp.close(() => resolve()));
  });

  it("answers 201 within the mail timeout, the account created", async () => {
    const email = uniqueEmail("stalled-mail");
    const started = Date.now();
    const res = await fetch(`${server.url}/api/auth/signup`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ email, password: "Quartz-Lamp-92", name: "Stalled Mail" }),
      signal: AbortSignal.timeout(40_000),
    });
    expect(res.status).toBe(201);
    expect(await res.json()).toMatchObject({ success: true, user: { email } });
    expect(Date.now() - started).toBeLessThan(25_000);
    const login = await call(server, "POST", "/api/auth/login", { body: { email, password: "Quartz-Lamp-92" } });
    expect(login.status).toBe(200);
  }, 60_000);
});
