import { normalizeEmail, type User } from "@gw/auth";
import type { AppContext } from "../app-context";

/** CONTRACT 12: the verified, live, not suspended accounts whose e-mail is in ADMIN_EMAILS. */
export function isAdmin(ctx: Pick<AppContext, "config">, user: User): boolean {
  if (!user.emailVerified || user.deletedAt || user.suspendedAt) return false;
  return adminEmails(ctx).has(user.email);
}

const adminEmails = (ctx: Pick<AppContext, "config">): Set<string> => new Set(ctx.config.adminEmails.map(normalizeEmail));

/** The admins there are now, by id. */
export async function activeAdminIds(ctx: Pick<AppContext, "config" | "auth">): Promise<string[]> {
  const ids: string[] = [];
  for (const email of adminEmails(ctx)) {
    const user = await ctx.auth.users.findByEmail(email);
    if (user && isAdmin(ctx, user)) ids.push(user.id);
  }
  return ids;
}
