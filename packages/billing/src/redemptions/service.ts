import { AppError, microsToDollars, randomBase62 } from "@gw/shared";
import type { BillingDeps } from "../runtime";
import { redemptionStore, type RedemptionCodeRecord, type RedemptionStore } from "./store";

/**
 * A claim untouched for this long belongs to a request that stopped midway (a crash): a retry of the same user
 * takes it over, and a redemption that finds every slot taken frees the slots of such claims that never credited.
 * Far longer than any request runs, so a live (if slow) request is never taken over.
 */
const ABANDONED_AFTER_MS = 5 * 60_000;

/** CONTRACT 12's view of a code (dollars at the edge). */
export interface RedemptionCodeView {
  code: string;
  amount: number;
  max_redemptions: number;
  redeemed: number;
  expires_at: string | null;
  created_at: string;
}

export interface NewRedemptionCode {
  /** micro-dollars, > 0 */
  amount: number;
  maxRedemptions: number;
  expiresAt?: Date;
  /** chosen by the admin; generated when absent */
  code?: string;
}

export interface RedeemResult {
  success: true;
  amount: number;
  balance: number;
}

/** What the redemptions need: the ledger they credit, the database of their store, the clock. */
export type RedemptionDeps = Pick<BillingDeps, "db" | "clock" | "ledger">;

const expired = (code: RedemptionCodeRecord, now: Date) => code.expiresAt !== null && code.expiresAt.getTime() <= now.getTime();
const alreadyRedeemed = () => new AppError("conflict", "You have already redeemed this code.");
const inFlight = () => new AppError("conflict", "This code is being redeemed for your account by another request.");
const exhausted = () => new AppError("code_expired", "This code has been redeemed the maximum number of times.");

async function view(store: RedemptionStore, code: RedemptionCodeRecord): Promise<RedemptionCodeView> {
  return {
    code: code.code,
    amount: microsToDollars(code.amount),
    max_redemptions: code.maxRedemptions,
    redeemed: await store.redeemedCount(code.code),
    expires_at: code.expiresAt?.toISOString() ?? null,
    created_at: code.createdAt.toISOString(),
  };
}

/** The ledger key of a user's credit from a code: one per user and code, whatever the retries. */
const creditKey = (code: string, userId: string) => `redeem:${code}:${userId}`;

/**
 * Frees the slots of abandoned claims that never credited: a request that stopped between taking a slot and the
 * credit would otherwise keep that slot from everyone for good. The claim is taken over first (one freer at a time).
 */
async function freeAbandonedSlots(deps: RedemptionDeps, store: RedemptionStore, code: string, now: Date): Promise<void> {
  for (const held of await store.abandonedClaims(code, new Date(now.getTime() - ABANDONED_AFTER_MS))) {
    if (!(await store.takeOverClaim(held, now))) continue;
    const credited = await deps.ledger.creditEntriesByKeys(held.userId, [creditKey(code, held.userId)]);
    if (credited.length > 0) {
      await store.markCredited(code, held.userId, now);
      continue;
    }
    await store.freeSlots(code, held.userId);
    await store.releaseClaim(code, held.userId, now);
  }
}

/** CONTRACT 12's redemption codes, over their store (made ready at start-up). */
export async function createRedemptions(deps: RedemptionDeps) {
  const store = redemptionStore(deps.db.connection);
  await store.init();
  return {
    async create(input: NewRedemptionCode, createdBy: string): Promise<RedemptionCodeView> {
      const record: RedemptionCodeRecord = {
        code: input.code ?? randomBase62(16),
        amount: input.amount,
        maxRedemptions: input.maxRedemptions,
        expiresAt: input.expiresAt ?? null,
        createdAt: new Date(deps.clock.now()),
        createdBy,
      };
      if (!(await store.createCode(record))) throw new AppError("conflict", `The code '${record.code}' exists already.`);
      return view(store, record);
    },

    async list(opts: { limit: number; before?: string }): Promise<{ codes: RedemptionCodeView[]; next_before: string | null }> {
      const after = opts.before === undefined ? undefined : await store.findCode(opts.before);
      if (opts.before !== undefined && !after) throw new AppError("invalid_parameter", "Invalid 'before': no such code.");
      const page = await store.listCodes(opts.limit + 1, after ?? undefined);
      const shown = page.slice(0, opts.limit);
      return {
        codes: await Promise.all(shown.map((code) => view(store, code))),
        next_before: page.length > opts.limit ? shown[shown.length - 1]?.code ?? null : null,
      };
    },

    /**
     * Credits the code's amount once per user (409 conflict after), never past max_redemptions in all (410
     * code_expired, as for an expired code), 404 not_found for an unknown one. The steps, each exact on its own:
     * the user's claim (unique insert), a slot (unique insert), the ledger credit (idempotency key per user and code),
     * the claim marked credited. A request that stops between any two is finished by the same user's retry (the claim
     * taken over, the slot found again, the credit written at most once), or its slot is freed for others once the
     * claim is abandoned (see freeAbandonedSlots).
     */
    async redeem(userId: string, codeText: string): Promise<RedeemResult> {
      const now = new Date(deps.clock.now());
      const code = await store.findCode(codeText);
      if (!code) throw new AppError("not_found", "No such redemption code.");
      if (expired(code, now)) throw new AppError("code_expired", "This code has expired.");

      if (!(await store.claim(code.code, userId, now))) {
        const held = await store.findClaim(code.code, userId);
        if (held?.creditedAt) throw alreadyRedeemed();
        // another request of this user is redeeming it right now (or just let it go)
        if (!held || now.getTime() - held.claimedAt.getTime() < ABANDONED_AFTER_MS || !(await store.takeOverClaim(held, now))) throw inFlight();
      }

      let slot = await store.slotOf(code.code, userId);
      if (slot === null) slot = await store.takeSlot(code.code, userId, code.maxRedemptions);
      if (slot === null) {
        await freeAbandonedSlots(deps, store, code.code, now);
        slot = await store.takeSlot(code.code, userId, code.maxRedemptions);
      }
      if (slot === null) {
        await store.releaseClaim(code.code, userId, now);
        throw exhausted();
      }

      let credit;
      try {
        credit = await deps.ledger.credit(userId, code.amount, {
          kind: "redemption", idempotencyKey: creditKey(code.code, userId), meta: { code: code.code, slot },
        });
      } catch (err) {
        // the claim goes, the slot stays the user's: a retry finds it and credits (at most once, by the key)
        await store.releaseClaim(code.code, userId, now).catch(() => undefined);
        throw err;
      }
      await store.markCredited(code.code, userId, new Date(deps.clock.now()));
      // a retry of a request that had credited before it stopped
      if (!credit.applied) throw alreadyRedeemed();
      return { success: true, amount: microsToDollars(code.amount), balance: microsToDollars(credit.balance) };
    },
  };
}

export type Redemptions = Awaited<ReturnType<typeof createRedemptions>>;
