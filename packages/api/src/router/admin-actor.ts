import type { ConsoleActor } from "../console/service";
import type { ApiContext } from "../trpc";

/** The acting admin, for the audit log. */
export const actorOf = (ctx: ApiContext & { admin: { id: string; email: string } }): ConsoleActor => ({
  user_id: ctx.admin.id, email: ctx.admin.email, via: "api", ip: ctx.req.ip ?? null,
});
