import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { initTRPC } from "@trpc/server";
import { createOpenApiNodeHttpHandler, type OpenApiMeta } from "trpc-to-openapi";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { lockBodyCoercion } from "./strict-body-types";

const t = initTRPC.meta<OpenApiMeta>().create();
const bodyShape = () => z.object({
  n: z.number(),
  flag: z.boolean().optional(),
  nested: z.object({ m: z.number() }).optional(),
  opted_in: z.coerce.number().optional(),
});
const echo = z.record(z.string(), z.unknown());

const router = t.router({
  locked: t.procedure.meta({ openapi: { method: "POST", path: "/locked" } }).input(bodyShape()).output(echo).mutation(({ input }) => input),
  query: t.procedure.meta({ openapi: { method: "GET", path: "/query" } }).input(z.object({ page: z.number() })).output(echo).query(({ input }) => input),
});
// the same routes without the lock show what the adapter does on its own
const unlocked = t.router({
  locked: t.procedure.meta({ openapi: { method: "POST", path: "/locked" } }).input(bodyShape()).output(echo).mutation(({ input }) => input),
});

async function serve(r: typeof router | typeof unlocked): Promise<{ server: Server; url: string }> {
  const handler = createOpenApiNodeHttpHandler({ router: r, createContext: () => ({}) });
  const server = createServer((req, res) => void handler(req, res));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

const post = (url: string, body: unknown) =>
  fetch(`${url}/locked`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });

describe("lockBodyCoercion", () => {
  let strict: { server: Server; url: string };
  let loose: { server: Server; url: string };
  beforeAll(async () => {
    lockBodyCoercion(router);
    lockBodyCoercion(router); // a second app instance in the same process must not throw
    strict = await serve(router);
    loose = await serve(unlocked);
  });
  afterAll(() => {
    strict.server.close();
    loose.server.close();
  });

  it("the adapter alone coerces JSON strings to numbers (the bug being guarded against)", async () => {
    const res = await post(loose.url, { n: "10" });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ n: 10 });
  });

  it("rejects strings and booleans where a JSON body expects numbers, nested too", async () => {
    expect((await post(strict.url, { n: "10" })).status).toBe(400);
    expect((await post(strict.url, { n: true })).status).toBe(400);
    expect((await post(strict.url, { n: 1, flag: "true" })).status).toBe(400);
    expect((await post(strict.url, { n: 1, nested: { m: "2" } })).status).toBe(400);
  });

  it("accepts real numbers and keeps explicit z.coerce fields and query strings coercing", async () => {
    const ok = await post(strict.url, { n: 10, flag: true, nested: { m: 2 }, opted_in: "3" });
    expect(ok.status).toBe(200);
    expect(await ok.json()).toEqual({ n: 10, flag: true, nested: { m: 2 }, opted_in: 3 });
    const query = await fetch(`${strict.url}/query?page=2`);
    expect(await query.json()).toEqual({ page: 2 });
  });
});
