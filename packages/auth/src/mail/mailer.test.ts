import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import pino from "pino";
import { afterEach, describe, expect, it } from "vitest";
import { systemClock } from "@gw/shared";
import { createMailer } from "./mailer";

describe("the outbox mailer", () => {
  let dataDir = "";
  afterEach(async () => {
    await rm(dataDir, { recursive: true, force: true });
  });

  it("shows a reader of the outbox only whole mails while mails are being written", async () => {
    dataDir = await mkdtemp(path.join(tmpdir(), "gw-outbox-"));
    const outbox = path.join(dataDir, "outbox");
    const mailer = createMailer({ from: "gateway@example.test", dataDir }, systemClock, pino({ level: "silent" }));
    // mails of 2 MB are written in several chunks, so a file written in place would be seen half-written
    const html = "x".repeat(2 * 1024 * 1024);
    let sending = true;
    const sent = Promise.all(
      Array.from({ length: 20 }, (_, i) => mailer.send({ to: `user${i}@example.test`, subject: "s", text: "t", html })),
    ).finally(() => {
      sending = false;
    });
    let reads = 0;
    while (sending) {
      const files = await readdir(outbox).catch(() => [] as string[]);
      for (const file of files) {
        const mail = JSON.parse(await readFile(path.join(outbox, file), "utf8")) as { html: string };
        expect(mail.html.length).toBe(html.length);
        reads += 1;
      }
      await new Promise((r) => setImmediate(r));
    }
    await sent;
    expect(reads).toBeGreaterThan(0);
    expect((await readdir(outbox)).length).toBe(20);
  });
});
