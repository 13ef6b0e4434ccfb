import { dollarsToMicros, newId } from "@gw/shared";
import type { TestServer } from "../harness";

export interface FundedUser {
  userId: string;
  key: string;
  keyId: string;
}

/** A user with an active API key and `dollars` of credits, created through the app's own services. */
export async function fundedUser(server: TestServer, dollars: number): Promise<FundedUser> {
  const userId = newId("usr");
  const created = await server.app.context.apiKeys.create(userId, { name: "test" });
  if (dollars > 0) await credit(server, userId, dollars);
  return { userId, key: created.key, keyId: created.id };
}

export async function credit(server: TestServer, userId: string, dollars: number): Promise<void> {
  await server.app.context.ledger.credit(userId, dollarsToMicros(dollars), { kind: "adjustment", idempotencyKey: newId("test") });
}

export async function balanceMicros(server: TestServer, userId: string): Promise<number> {
  return server.app.context.ledger.balance(userId);
}

export function authHeaders(key: string, json = true): Record<string, string> {
  return { authorization: `Bearer ${key}`, ...(json ? { "content-type": "application/json" } : {}) };
}

export async function postJson(server: TestServer, path: string, key: string, body: unknown, headers: Record<string, string> = {}, signal?: AbortSignal): Promise<Response> {
  return fetch(`${server.url}${path}`, { method: "POST", headers: { ...authHeaders(key), ...headers }, body: JSON.stringify(body), signal });
}

/**
 * A response body for assertions. Typed loosely on purpose: tests check its shape with expect(), and the
 * spec's shapes are what is being verified, so no static type is claimed for them.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function readJson(res: Response): Promise<any> {
  return res.json();
}
