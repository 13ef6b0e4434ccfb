import type { Config, PlanDefinition } from "@gw/config";
import type { Database } from "@gw/db";
import type { Clock } from "@gw/shared";
import type { Logger } from "pino";
import type { Ledger } from "./ledger/index";
import { billingAccountStore, type BillingAccountStore } from "./store/billing-accounts";
import { billingSettingsStore, type BillingSettingsStore } from "./store/billing-settings";
import { claimStore, type ClaimStore } from "./store/claims";
import { purchaseStore, type PurchaseStore } from "./store/purchases";
import { stripePriceStore, type StripePriceStore } from "./store/stripe-prices";
import { subscribeClaimStore, type SubscribeClaimStore } from "./store/subscribe-claims";
import { subscriptionSnapshotStore, type SubscriptionSnapshotStore } from "./store/subscription-snapshots";
import { webhookEventStore, type WebhookEventStore } from "./store/webhook-events";
import { createStripeClient, type StripeClient } from "./stripe/client";

/** Same shape as the AppContext's PlanResolver (declared here because @gw/api depends on this package). */
export interface PlanLookup {
  planFor(userId: string): Promise<PlanDefinition>;
  invalidate(userId: string): void;
}

/** Tells a user about billing events; the accounts feature passes its mailer in, otherwise events are logged. */
export interface BillingNotifier {
  paymentFailed(userId: string, details: { planName: string; amountDue: number; currency: string }): Promise<void>;
  /** a charge took the balance below the user's low-balance threshold (dollars) */
  lowBalance?(userId: string, details: { balance: number; threshold: number }): Promise<void>;
  /** an auto top-up of `amount` dollars failed; `disabled` when that turned auto top-up off */
  autoTopupFailed?(userId: string, details: { amount: number; reason: string; disabled: boolean }): Promise<void>;
}

/**
 * Who the gateway's users are: lets the webhook honour the `user_id` metadata of a processor object it did not
 * create itself (a payment intent or subscription made in the processor's dashboard or by another integration).
 */
export interface BillingUserDirectory {
  /** true for an existing, not deleted account */
  isActiveUser(userId: string): Promise<boolean>;
}

/** What billing is built with (createBilling), passed in once at start-up. */
export interface BillingDeps {
  config: Config;
  db: Database;
  clock: Clock;
  logger: Logger;
  ledger: Ledger;
  plans: PlanLookup;
  billingNotifier?: BillingNotifier;
  /** without one, only users with a billing account are recognised */
  billingUsers?: BillingUserDirectory;
}

export interface BillingStores {
  accounts: BillingAccountStore;
  purchases: PurchaseStore;
  prices: StripePriceStore;
  snapshots: SubscriptionSnapshotStore;
  events: WebhookEventStore;
  subscribeClaims: SubscribeClaimStore;
  settings: BillingSettingsStore;
  claims: ClaimStore;
}

export interface BillingRuntime extends BillingDeps {
  /** undefined when STRIPE_SECRET_KEY is unset */
  stripe?: StripeClient;
  stores: BillingStores;
  now(): Date;
}

/** Billing's working parts (Stripe client, stores) over its dependencies: built once per app instance. */
export function createBillingRuntime(deps: BillingDeps): BillingRuntime {
  const connection = deps.db.connection;
  return {
    ...deps,
    stripe: createStripeClient(deps.config),
    stores: {
      accounts: billingAccountStore(connection),
      purchases: purchaseStore(connection),
      prices: stripePriceStore(connection),
      snapshots: subscriptionSnapshotStore(connection),
      events: webhookEventStore(connection),
      subscribeClaims: subscribeClaimStore(connection),
      settings: billingSettingsStore(connection),
      claims: claimStore(connection),
    },
    now: () => new Date(deps.clock.now()),
  };
}
