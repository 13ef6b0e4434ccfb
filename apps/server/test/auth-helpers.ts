import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import type { TestServer } from "./harness";

/** What these helpers need of a server: its URL and mail outbox (an in-process TestServer or a spawned one). */
export type ServerAddress = Pick<TestServer, "url" | "outboxDir">;

/** Limits high enough that suites about other things never trip them (auth-limits.test.ts uses the defaults). */
export const RELAXED_LIMITS: Record<string, string> = {
  LIMIT_REGISTER: "1000/3600",
  LIMIT_LOGIN_IP: "1000/3600",
  LIMIT_LOGIN_ACCOUNT: "1000/900",
  LIMIT_PASSWORD_RESET: "1000/3600",
};

export const PASSWORD = "Quartz-Lamp-92";

export interface JsonResponse {
  status: number;
  headers: Headers;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- test assertions walk arbitrary JSON
  body: any;
}

export async function call(server: ServerAddress, method: string, route: string, options: { body?: unknown; cookie?: string; headers?: Record<string, string>; raw?: string } = {}): Promise<JsonResponse> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.cookie) headers.cookie = options.cookie;
  let body: string | undefined;
  if (options.raw !== undefined) {
    body = options.raw;
    headers["content-type"] ??= "application/json";
  } else if (options.body !== undefined) {
    body = JSON.stringify(options.body);
    headers["content-type"] = "application/json";
  }
  const res = await fetch(`${server.url}${route}`, { method, headers, body, redirect: "manual" });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : undefined };
}

/** `name=value` of a Set-Cookie in the response, for sending back. */
export function cookieFrom(headers: Headers, name: string): string | undefined {
  const line = headers.getSetCookie().find((c) => c.startsWith(`${name}=`));
  return line?.split(";")[0];
}

export const sessionCookie = (headers: Headers): string | undefined => cookieFrom(headers, "gw_session");

let counter = 0;
export const uniqueEmail = (tag = "user"): string => `${tag}-${Date.now()}-${counter++}@example.com`;

export async function signup(server: ServerAddress, email = uniqueEmail(), password = PASSWORD, name = "Test User"): Promise<JsonResponse> {
  const res = await call(server, "POST", "/api/auth/signup", { body: { email, password, name } });
  if (res.status !== 201) throw new Error(`signup failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res;
}

export async function login(server: ServerAddress, email: string, password = PASSWORD): Promise<string> {
  const res = await call(server, "POST", "/api/auth/login", { body: { email, password } });
  const cookie = sessionCookie(res.headers);
  if (res.status !== 200 || !cookie) throw new Error(`login failed: ${res.status} ${JSON.stringify(res.body)}`);
  return cookie;
}

interface OutboxMail { to: string; subject: string; text: string; html: string }

/** Every mail written to the outbox for `to`, oldest first. */
export function mailsTo(server: ServerAddress, to: string): OutboxMail[] {
  let files: string[];
  try {
    files = readdirSync(server.outboxDir).sort();
  } catch {
    return [];
  }
  return files
    .map((f) => JSON.parse(readFileSync(path.join(server.outboxDir, f), "utf8")) as OutboxMail)
    .filter((m) => m.to === to);
}

/** The token of the newest link to `page` (verify-email or reset-password) mailed to `to`. */
export function tokenFromMail(server: ServerAddress, to: string, page: "verify-email" | "reset-password"): string {
  const mails = mailsTo(server, to).filter((m) => m.text.includes(`/${page}?token=`));
  const last = mails.at(-1);
  if (!last) throw new Error(`no ${page} mail for ${to}`);
  const match = new RegExp(`/${page}\\?token=([A-Za-z0-9_%-]+)`).exec(last.text);
  if (!match?.[1]) throw new Error("no token in mail");
  return decodeURIComponent(match[1]);
}

/** Signs up, verifies the e-mail and logs in. */
export async function verifiedUser(server: ServerAddress, email = uniqueEmail()): Promise<{ email: string; cookie: string; id: string }> {
  const created = await signup(server, email);
  const token = tokenFromMail(server, email, "verify-email");
  const verified = await call(server, "POST", "/api/auth/verify-email", { body: { token } });
  if (verified.status !== 200) throw new Error(`verify failed: ${verified.status}`);
  return { email, cookie: await login(server, email), id: created.body.user.id as string };
}
