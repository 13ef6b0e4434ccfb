import type { Clock } from "@gw/shared";
import type { ChainWriter } from "./chain-writer";
import { entryId, type LedgerDoc, type LedgerRepository } from "./repository";
import type { GapRepair } from "./types";

/**
 * Fills the holes that a batched write of an older version left in a chain (see INSERT_CHUNK), so that every chain
 * verifies again. A hole's positions get `gap` entries: the first carries what the entries after the hole counted for
 * the missing ones (their balanceAfter minus the balance before the hole, usually 0: the hole held settles), the rest
 * 0. The missing movements themselves were written again after the hole by the retry, or refused: every movement is
 * stored once, so the true balance is the sum of the stored movements, and an `adjustment` at the end of the chain
 * gives back (or takes back, as far as the balance goes) what the hole counted. A hole is only ever below the head,
 * where no writer appends, so filling it races with nothing; its entries' ids are its positions, so a second repair
 * running at once fails on them and changes nothing. The reconcile finds the holes (chain-audit.ts).
 */
export async function fillHole(repo: LedgerRepository, writer: ChainWriter, clock: Clock, userId: string, before: { seq: number; balance: number }, after: LedgerDoc): Promise<GapRepair> {
  const from = before.seq + 1;
  const to = after.seq - 1;
  const counted = after.balanceAfter - after.amount - before.balance;
  const now = new Date(clock.now());
  const docs: LedgerDoc[] = [];
  for (let seq = from; seq <= to; seq++) {
    docs.push({
      _id: entryId(userId, seq), userId, seq, kind: "gap", amount: seq === from ? counted : 0, balanceAfter: before.balance + counted,
      idempotencyKey: `gap:${entryId(userId, seq)}`, createdAt: now, meta: { repaired: "a hole left by a batched write cut short" },
    });
  }
  const outcome = await repo.insertChain(docs);
  if (!outcome.ok) throw new Error(`ledger: the hole of ${userId} at ${from}..${to} was filled meanwhile (another reconcile?): run it again`);
  let corrected = 0;
  if (counted !== 0) {
    const result = await writer.append(userId, {
      kind: "adjustment", amount: -counted, requireCover: false, upToBalance: counted > 0,
      idempotencyKey: `gap:${entryId(userId, from)}:correction`, meta: { reason: `ledger repair: positions ${from}..${to} were lost by a batched write and counted by the entries after them` },
    });
    if (result.status === "applied") corrected = result.amount;
  }
  return { userId, from, to, counted, corrected };
}
