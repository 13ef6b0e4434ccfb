// Subscription state is a set of immutable snapshots (one per event); the current state is the newest one.
// Deriving it at read time, instead of updating one document, keeps it right under concurrent and reordered
// webhook deliveries on a database without atomic conditional updates.

export type SubscriptionStatus =
  | "incomplete" | "trialing" | "active" | "past_due" | "unpaid" | "paused" | "incomplete_expired" | "canceled";

/** Lifecycle order: at the same event time, the later stage wins. Terminal states win over everything. */
const STATUS_RANK: Record<SubscriptionStatus, number> = {
  incomplete: 0, trialing: 1, active: 2, past_due: 3, unpaid: 4, paused: 5, incomplete_expired: 9, canceled: 10,
};

const TERMINAL = new Set<SubscriptionStatus>(["canceled", "incomplete_expired"]);

/** Statuses whose plan still applies: Stripe keeps retrying a past_due invoice, so the plan holds meanwhile. */
const ENTITLED = new Set<SubscriptionStatus>(["trialing", "active", "past_due"]);

export function toSubscriptionStatus(value: unknown): SubscriptionStatus | undefined {
  return typeof value === "string" && value in STATUS_RANK ? (value as SubscriptionStatus) : undefined;
}

/** canceled / incomplete_expired: nothing moves the subscription out of them. */
export const isTerminal = (status: SubscriptionStatus): boolean => TERMINAL.has(status);

export const isEntitled = (status: SubscriptionStatus): boolean => ENTITLED.has(status);

export interface SubscriptionSnapshot {
  id: string;
  subscriptionId: string;
  userId: string;
  planId: string;
  status: SubscriptionStatus;
  /** when the processor produced this state (event `created`, Unix seconds) */
  at: number;
  periodStart?: number;
  periodEnd?: number;
  cancelAtPeriodEnd?: boolean;
}

/** True when `a` is newer than `b`: terminal states are final, then event time, then lifecycle order. */
export function isNewer(a: SubscriptionSnapshot, b: SubscriptionSnapshot): boolean {
  const aTerminal = TERMINAL.has(a.status);
  const bTerminal = TERMINAL.has(b.status);
  if (aTerminal !== bTerminal) return aTerminal;
  if (a.at !== b.at) return a.at > b.at;
  return STATUS_RANK[a.status] > STATUS_RANK[b.status];
}

/** The newest snapshot of each subscription. */
export function currentStates(snapshots: SubscriptionSnapshot[]): SubscriptionSnapshot[] {
  const newest = new Map<string, SubscriptionSnapshot>();
  for (const snap of snapshots) {
    const seen = newest.get(snap.subscriptionId);
    if (!seen || isNewer(snap, seen)) newest.set(snap.subscriptionId, snap);
  }
  return [...newest.values()];
}
