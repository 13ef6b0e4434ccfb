// The operator console (CONTRACT 12): what the /api/admin routes and `npm run admin` do. Each action that changes
// something writes one audit entry (who, what, on whom, before and after).
import type { HistoryView, NewRedemptionCode, RedemptionCodeView, SubscriptionView } from "@gw/billing";
import type { User } from "@gw/auth";
import { AppError, invalidParameter, microsToDollars, newId } from "@gw/shared";
import type { AppContext } from "../app-context";
import { activeAdminIds, isAdmin } from "./admins";
import type { AuditActor, AuditEntry } from "./audit-log";
import { spend30d } from "./spend";

/** Who acts, and from where (the audit log's actor and IP). */
export interface ConsoleActor extends AuditActor {
  ip: string | null;
}

export type UserStatus = "active" | "suspended";

export interface AdminUserRow {
  id: string;
  email: string;
  name: string;
  plan: string;
  /** dollars */
  balance: number;
  /** dollars charged for requests over the last 30 days */
  spend_30d: number;
  status: UserStatus;
  created_at: string;
}

export interface AdminKeyRow {
  id: string;
  name: string;
  prefix: string;
  created_at: string;
  last_used: string | null;
  usage_count: number;
}

export interface AdminUserDetail {
  user: AdminUserRow & { email_verified: boolean; admin: boolean };
  balance: number;
  subscription: SubscriptionView | null;
  keys: AdminKeyRow[];
  usage_30d: { requests: number; cost: number; by_model: Array<{ model: string; requests: number; cost: number }> };
}

const statusOf = (user: User): UserStatus => (user.suspendedAt ? "suspended" : "active");

/** A live (not deleted) account, else 404 not_found. */
async function liveUser(ctx: AppContext, userId: string): Promise<User> {
  const user = await ctx.auth.users.findById(userId);
  if (!user || user.deletedAt) throw new AppError("not_found", `No user with id '${userId}'.`);
  return user;
}

/** `spend30`: the account's 30-day spend, when the caller reads it too */
async function userRow(ctx: AppContext, user: User, spend30 = spend30d(ctx, user.id)): Promise<AdminUserRow> {
  const [plan, balance, spend] = await Promise.all([ctx.plans.planFor(user.id), ctx.ledger.balance(user.id), spend30]);
  return {
    id: user.id, email: user.email, name: user.name, plan: plan.id, balance: microsToDollars(balance),
    spend_30d: microsToDollars(spend.cost), status: statusOf(user), created_at: user.createdAt.toISOString(),
  };
}

/** Paging through the user list: where the previous page ended, as an opaque string. */
const encodeCursor = (user: User): string => Buffer.from(`${user.createdAt.getTime()}.${user.id}`).toString("base64url");

function decodeCursor(cursor: string): { createdAt: Date; id: string } {
  const match = /^(\d{1,16})\.([A-Za-z0-9_]{1,64})$/.exec(Buffer.from(cursor, "base64url").toString("utf8"));
  if (!match?.[1] || !match[2]) throw invalidParameter("cursor", "must be the next_cursor of a previous page");
  return { createdAt: new Date(Number(match[1])), id: match[2] };
}

export async function record(ctx: AppContext, actor: ConsoleActor, entry: Pick<AuditEntry, "action" | "target" | "before" | "after">): Promise<void> {
  const { ip, ...who } = actor;
  await ctx.audit.append({ ...entry, actor: who, ip });
}

export const adminConsole = {
  isAdmin,

  /** The account with this e-mail (the CLI names users by e-mail); 404 not_found when there is none. */
  async userByEmail(ctx: AppContext, email: string): Promise<User> {
    const user = await ctx.auth.users.findByEmail(email);
    if (!user || user.deletedAt) throw new AppError("not_found", `No user with e-mail '${email}'.`);
    return user;
  },

  async listUsers(ctx: AppContext, opts: { query?: string; status?: UserStatus; limit: number; cursor?: string }): Promise<{ users: AdminUserRow[]; next_cursor: string | null }> {
    const after = opts.cursor === undefined ? undefined : decodeCursor(opts.cursor);
    const found = await ctx.auth.users.search({ query: opts.query, status: opts.status, limit: opts.limit + 1, after });
    const page = found.slice(0, opts.limit);
    const last = page[page.length - 1];
    return {
      users: await Promise.all(page.map((user) => userRow(ctx, user))),
      next_cursor: found.length > opts.limit && last ? encodeCursor(last) : null,
    };
  },

  async userDetail(ctx: AppContext, userId: string): Promise<AdminUserDetail> {
    const user = await liveUser(ctx, userId);
    const spend30 = spend30d(ctx, user.id);
    const [row, subscription, keys, spend] = await Promise.all([
      userRow(ctx, user, spend30),
      ctx.billing.subscription(user.id),
      ctx.apiKeys.listActive(user.id),
      spend30,
    ]);
    return {
      user: { ...row, email_verified: user.emailVerified, admin: isAdmin(ctx, user) },
      balance: row.balance,
      subscription: subscription.subscription,
      keys: keys.map((k) => ({
        id: k.id, name: k.name, prefix: k.prefix, created_at: k.createdAt.toISOString(),
        last_used: k.lastUsedAt?.toISOString() ?? null, usage_count: k.usageCount,
      })),
      usage_30d: {
        requests: spend.requests,
        cost: microsToDollars(spend.cost),
        by_model: [...spend.by_model].map(([model, m]) => ({ model, requests: m.requests, cost: microsToDollars(m.cost) })),
      },
    };
  },

  async userLedger(ctx: AppContext, userId: string, opts: { limit: number; before?: number }): Promise<HistoryView> {
    await liveUser(ctx, userId);
    return ctx.billing.history(userId, opts);
  },

  /** A signed adjustment in micro-dollars (never below zero: 409 conflict naming the balance). */
  async credit(ctx: AppContext, actor: ConsoleActor, userId: string, input: { amount: number; reason: string }): Promise<{ success: true; amount: number; balance: number }> {
    await liveUser(ctx, userId);
    const adjusted = await ctx.billing.adjustCredits(userId, input.amount, {
      idempotencyKey: newId("adj"), meta: { reason: input.reason, by: actor.email ?? actor.via },
    });
    await record(ctx, actor, {
      action: "user.credit", target: { type: "user", id: userId },
      before: { balance: microsToDollars(adjusted.balanceBefore) },
      after: { balance: microsToDollars(adjusted.balance), amount: microsToDollars(input.amount), reason: input.reason },
    });
    return { success: true, amount: microsToDollars(input.amount), balance: microsToDollars(adjusted.balance) };
  },

  /**
   * Suspends the account: marked first (so the session reader refuses it), then every session revoked, then every
   * key marked and evicted on every instance (the key revocation's path). In that order, a key created by a session
   * at the same time is caught either by the key marking or by its creation's own session check (revoked).
   */
  async suspend(ctx: AppContext, actor: ConsoleActor, userId: string): Promise<{ success: true; user: AdminUserRow }> {
    const user = await liveUser(ctx, userId);
    if (actor.user_id === userId && isAdmin(ctx, user)) {
      const others = (await activeAdminIds(ctx)).filter((id) => id !== userId);
      if (others.length === 0) throw new AppError("conflict", "You are the last active admin: you cannot suspend yourself.");
    }
    await ctx.auth.users.setSuspended(userId, new Date(ctx.clock.now()));
    await ctx.auth.sessions.revokeAllForUser(userId);
    const keys = await ctx.apiKeys.setUserSuspended(userId, true);
    await record(ctx, actor, {
      action: "user.suspend", target: { type: "user", id: userId },
      before: { status: statusOf(user) }, after: { status: "suspended", keys_refused: keys },
    });
    return { success: true, user: await userRow(ctx, await liveUser(ctx, userId)) };
  },

  async unsuspend(ctx: AppContext, actor: ConsoleActor, userId: string): Promise<{ success: true; user: AdminUserRow }> {
    const user = await liveUser(ctx, userId);
    await ctx.auth.users.setSuspended(userId, null);
    await ctx.apiKeys.setUserSuspended(userId, false);
    await record(ctx, actor, {
      action: "user.unsuspend", target: { type: "user", id: userId },
      before: { status: statusOf(user) }, after: { status: "active" },
    });
    return { success: true, user: await userRow(ctx, await liveUser(ctx, userId)) };
  },

  async revokeKeys(ctx: AppContext, actor: ConsoleActor, userId: string): Promise<{ success: true; revoked: number }> {
    await liveUser(ctx, userId);
    const before = (await ctx.apiKeys.listActive(userId)).length;
    const revoked = await ctx.apiKeys.revokeAllKeysForUser(userId);
    await record(ctx, actor, {
      action: "user.revoke_keys", target: { type: "user", id: userId },
      before: { active_keys: before }, after: { active_keys: 0, revoked },
    });
    return { success: true, revoked };
  },

  async createCode(ctx: AppContext, actor: ConsoleActor, input: NewRedemptionCode): Promise<RedemptionCodeView> {
    const created = await ctx.billing.redemptions.create(input, actor.user_id ?? actor.via);
    await record(ctx, actor, {
      action: "redemption_code.create", target: { type: "redemption_code", id: created.code },
      before: null, after: { amount: created.amount, max_redemptions: created.max_redemptions, expires_at: created.expires_at },
    });
    return created;
  },

  listCodes: (ctx: AppContext, opts: { limit: number; before?: string }) => ctx.billing.redemptions.list(opts),

  audit: (ctx: AppContext, opts: { limit: number; before?: string }) => ctx.audit.list(opts),
};
