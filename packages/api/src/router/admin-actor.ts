import { invalidParameter } from "@gw/shared";
import type { ConsoleActor } from "../console/service";
import type { ApiContext } from "../trpc";

/** The acting admin, for the audit log. */
export const actorOf = (ctx: ApiContext & { admin: { id: string; email: string } }): ConsoleActor => ({
  user_id: ctx.admin.id, email: ctx.admin.email, via: "api", ip: ctx.req.ip ?? null,
});

/** Path ids arrive percent-encoded from the REST adapter (as in the key routes). */
export function pathId(id: string): string {
  try {
    return decodeURIComponent(id);
  } catch {
    throw invalidParameter("id", "malformed percent-encoding");
  }
}

