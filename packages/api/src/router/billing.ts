import { z } from "zod";
import { createTRPCRouter, rateLimit, sessionOrKeyProcedure, sessionProcedure, verifiedSessionOrKeyProcedure } from "../trpc";

// SPEC 2.8-2.13, 4.7, CONTRACT 6. Handlers are thin: the billing package validates again and does the work.
// GET /api/billing/credits is an Express route (flat error form, SPEC 7.1); `credits` here serves the dashboard.

const tags = ["Billing"];

// trpc-to-openapi coerces plain number fields of the body ("10", true and [] would become numbers); a pipe is left
// alone, so amounts stay strictly JSON numbers as CONTRACT 6 asks. The OpenAPI document shows a pipe's input side
// only, so its rules are restated in `meta` for the document.
const dollars = z.number()
  .pipe(z.number().min(1).max(10_000).refine((v) => Math.abs(v * 100 - Math.round(v * 100)) < 1e-6, { message: "must have at most two decimals" }))
  .meta({ description: "US dollars, 1 to 10000, at most two decimals; 10, 50 and 100 earn the package bonus", minimum: 1, maximum: 10_000, multipleOf: 0.01 });

// A space or control character is no part of a URL (RFC 3986): the URL parser would quietly encode or drop it, while
// the processor refuses the raw string, which made the caller's mistake a 502.
// (checked on the string as sent: zod's url check hands on a copy with tabs and line breaks dropped)
const httpUrl = z.string().max(2048).regex(/^[^\s\p{Cc}]*$/u, "must not contain spaces or control characters")
  .pipe(z.url({ protocol: /^https?$/ })).meta({ description: "absolute http(s) URL", format: "uri" });

const planShape = {
  id: z.string(),
  name: z.string(),
  price: z.number().describe("dollars per interval"),
  currency: z.string().describe("lower-case ISO code"),
  interval: z.string(),
};
const publicPlan = z.object({ ...planShape, features: z.array(z.string()) });

const subscription = z.object({
  subscription_id: z.string(),
  status: z.string().describe("active, trialing, past_due, ..."),
  current_period_start: z.string().describe("ISO 8601"),
  current_period_end: z.string().describe("ISO 8601"),
  cancel_at_period_end: z.boolean().describe("cancelled at the end of the period: the plan applies until current_period_end"),
  plan: z.object(planShape),
});

const creditBalance = z.object({ balance: z.number().describe("dollars"), currency: z.literal("USD") });

const checkoutInput = z.object({
  // a string first, so a missing type is reported as missing rather than as a wrong option
  type: z.string().pipe(z.enum(["credits", "subscription"])).meta({ description: "credits or subscription", enum: ["credits", "subscription"] }),
  amount: dollars.optional().describe("required when type is credits"),
  plan_id: z.string().min(1).max(100).optional().describe("required when type is subscription"),
  success_url: httpUrl,
  cancel_url: httpUrl,
}).meta({
  // the field each type requires (checked by the billing package), as the document states it
  anyOf: [
    { properties: { type: { const: "credits" } }, required: ["amount"] },
    { properties: { type: { const: "subscription" } }, required: ["plan_id"] },
  ],
});

const paymentIntentInput = z.object({
  amount: dollars,
  // the billing package reads it case-insensitively; the pattern says so to the document (a regex flag would not)
  currency: z.string().regex(/^[uU][sS][dD]$/, "only 'usd' is supported").optional().describe("only usd is accepted (the default), in any case"),
});

const subscriptionInput = z.object({
  plan_id: z.string().min(1).max(100),
  payment_method_id: z.string().min(1).max(255).describe("the processor's payment method id (pm_...)"),
});

const cancelInput = z.object({
  at_period_end: z.boolean().optional().describe("true (default): the plan applies until the period ends; false: cancel now"),
}).optional();

// A query-string count: decimal digits only, as /api/usage reads its own (`1e1`, `0x10`, ` 5` and an empty value are
// refused, where coercion read them as numbers); tRPC calls send JSON numbers. A pipe, so the adapter does not coerce
// it. The document shows the text form alone (openapi-text-rules.ts), with a pattern that also states the bounds.
const DIGITS = /^\d{1,16}$/;
const whole = (documented: string) => z.union([z.number(), z.string().regex(DIGITS, "must be a whole number").meta({ pattern: documented }).transform(Number)]);

/** A page's `limit`: 1 to 100, `fallback` when unset. */
export const pageLimit = (fallback: number) => whole("^(?=\\d{1,16}$)0*(?:[1-9]\\d?|100)$").pipe(z.number().int().min(1).max(100)).default(fallback)
  .describe("1 to 100");

export const historyInput = z.object({
  limit: pageLimit(20),
  // a position in the ledger: any larger than the newest entry reads from the newest, 2^53 and above included
  // (not zod's int(), which also refuses integers past 2^53 - 1)
  before: whole("^(?=\\d{1,16}$)0*[1-9]\\d*$").pipe(z.number().min(1).refine(Number.isInteger, "must be a whole number")).transform((n) => Math.min(n, Number.MAX_SAFE_INTEGER)).optional()
    .describe("next_before of the previous page"),
}).optional();

export const historyEntry = z.object({
  id: z.string(),
  type: z.enum(["purchase", "bonus", "plan_credits", "refund", "dispute", "adjustment", "redemption", "hold", "settle", "release", "gap"]),
  amount: z.number().describe("dollars, signed"),
  balance_after: z.number().describe("dollars"),
  created_at: z.string().describe("ISO 8601"),
  receipt_url: z.string().optional().describe("purchases: the payment processor's receipt, when it gave one"),
});

// A threshold in dollars: 0 to 1,000,000, at most two decimals (a pipe, like `dollars`, so it is not coerced).
const thresholdDollars = z.number()
  .pipe(z.number().min(0).max(1_000_000).refine((v) => Math.abs(v * 100 - Math.round(v * 100)) < 1e-6, { message: "must have at most two decimals" }))
  .meta({ description: "US dollars, 0 to 1000000, at most two decimals", minimum: 0, maximum: 1_000_000, multipleOf: 0.01 });

const billingSettings = z.object({
  low_balance_threshold: z.number().nullable().describe("dollars; one e-mail each time a charge takes the balance below it; null: none"),
  auto_topup: z.object({
    enabled: z.boolean(),
    threshold: z.number().describe("dollars: a charge that leaves the balance below it buys `amount`"),
    amount: z.number().describe("dollars charged to the saved card"),
  }),
  has_saved_card: z.boolean().describe("a card is saved for auto top-up"),
});

const billingSettingsInput = z.object({
  low_balance_threshold: thresholdDollars.nullable().optional().describe("dollars, or null to turn the e-mail off"),
  auto_topup: z.object({
    enabled: z.boolean().optional().describe("enabling needs a saved card (409 conflict)"),
    threshold: thresholdDollars.optional(),
    amount: dollars.optional().describe("US dollars, 1 to 10000, at most two decimals; 10, 50 and 100 earn the package bonus"),
  }).strict().optional(),
}).strict();

export const billingRouter = createTRPCRouter({
  credits: sessionOrKeyProcedure
    .use(rateLimit("credits", "user"))
    .output(creditBalance)
    .query(({ ctx }) => ctx.app.billing.credits(ctx.principal.userId)),

  config: sessionOrKeyProcedure
    .use(rateLimit("billingRead", "user"))
    .meta({ openapi: { method: "GET", path: "/billing/config", tags, summary: "Plans, credit packages and the publishable payment key" } })
    .output(z.object({
      plans: z.array(publicPlan),
      credit_packages: z.array(z.object({ amount: z.number(), bonus: z.number(), total: z.number() })),
      payment_publishable_key: z.string(),
    }))
    .query(({ ctx }) => ctx.app.billing.config()),

  createCheckoutSession: verifiedSessionOrKeyProcedure
    .use(rateLimit("checkout", "user"))
    .meta({
      openapi: { method: "POST", path: "/billing/create-checkout-session", tags, summary: "Start a hosted checkout for credits or a subscription" },
      // conflict: a subscription checkout while a subscription is active (docs/billing.md)
      errors: ["email_not_verified", "plan_not_found", "conflict", "upstream_error"],
    })
    .input(checkoutInput)
    .output(z.object({ session_id: z.string(), url: z.string().describe("where the payer is redirected") }))
    .mutation(({ ctx, input }) => ctx.app.billing.createCheckoutSession(ctx.principal.userId, input)),

  createPaymentIntent: verifiedSessionOrKeyProcedure
    .use(rateLimit("paymentIntent", "user"))
    .meta({
      openapi: { method: "POST", path: "/billing/create-payment-intent", tags, summary: "Create a payment intent for a credit purchase" },
      errors: ["email_not_verified", "upstream_error"],
    })
    .input(paymentIntentInput)
    .output(z.object({
      client_secret: z.string(),
      payment_intent_id: z.string(),
      amount: z.number().int().describe("cents"),
      currency: z.string(),
    }))
    .mutation(({ ctx, input }) => ctx.app.billing.createPaymentIntent(ctx.principal.userId, input)),

  createSubscription: verifiedSessionOrKeyProcedure
    .use(rateLimit("subscription", "user"))
    .meta({
      openapi: { method: "POST", path: "/billing/create-subscription", tags, summary: "Subscribe to a paid plan with a payment method" },
      errors: ["email_not_verified", "invalid_payment_method", "plan_not_found", "conflict", "upstream_error"],
    })
    .input(subscriptionInput)
    .output(subscription)
    .mutation(({ ctx, input }) => ctx.app.billing.createSubscription(ctx.principal.userId, input)),

  cancelSubscription: sessionOrKeyProcedure
    .use(rateLimit("subscription", "user"))
    .meta({
      openapi: { method: "POST", path: "/billing/cancel-subscription", tags, summary: "Cancel the subscription, at the end of the period by default" },
      errors: ["not_found", "upstream_error"],
    })
    .input(cancelInput)
    .output(subscription)
    .mutation(({ ctx, input }) => ctx.app.billing.cancelSubscription(ctx.principal.userId, input ?? {})),

  subscription: sessionOrKeyProcedure
    .use(rateLimit("billingRead", "user"))
    .meta({ openapi: { method: "GET", path: "/billing/subscription", tags, summary: "Current subscription, the plan that applies and its limits" } })
    .output(z.object({
      subscription: subscription.nullable().describe("null on the free plan"),
      plan: publicPlan,
      limits: z.object({
        requests_per_minute: z.number().int(),
        concurrent_requests: z.number().int(),
        monthly_credits: z.number().describe("dollars granted on each paid invoice"),
      }),
    }))
    .query(({ ctx }) => ctx.app.billing.subscription(ctx.principal.userId)),

  history: sessionOrKeyProcedure
    .use(rateLimit("billingRead", "user"))
    .meta({ openapi: { method: "GET", path: "/billing/history", tags, summary: "Payment history: purchases, bonuses, plan credits, refunds, disputes (newest first)" } })
    .input(historyInput)
    .output(z.object({ entries: z.array(historyEntry), next_before: z.number().int().nullable() }))
    .query(({ ctx, input }) => ctx.app.billing.history(ctx.principal.userId, { limit: input?.limit ?? 20, before: input?.before })),

  settings: sessionProcedure
    .use(rateLimit("billingRead", "user"))
    .meta({ openapi: { method: "GET", path: "/billing/settings", tags, summary: "Low-balance e-mail and auto top-up settings" } })
    .output(billingSettings)
    .query(({ ctx }) => ctx.app.billing.settings(ctx.principal.userId)),

  updateSettings: sessionProcedure
    .use(rateLimit("billingRead", "user"))
    .meta({
      openapi: { method: "PUT", path: "/billing/settings", tags, summary: "Change the low-balance e-mail and auto top-up (fields left out stay)" },
      // conflict: enabling auto top-up without a saved card
      errors: ["conflict"],
    })
    // every field is optional, so is the body: none changes nothing
    .input(billingSettingsInput.optional())
    .output(billingSettings)
    .mutation(({ ctx, input }) => ctx.app.billing.putSettings(ctx.principal.userId, input ?? {})),

  createSetupSession: verifiedSessionOrKeyProcedure
    .use(rateLimit("checkout", "user"))
    .meta({
      openapi: { method: "POST", path: "/billing/create-setup-session", tags, summary: "Start a hosted checkout that saves a card for auto top-up" },
      errors: ["email_not_verified", "upstream_error"],
    })
    .input(z.object({ success_url: httpUrl, cancel_url: httpUrl }))
    .output(z.object({ session_id: z.string(), url: z.string().describe("where the card holder is redirected") }))
    .mutation(({ ctx, input }) => ctx.app.billing.createSetupSession(ctx.principal.userId, input)),

  redeem: verifiedSessionOrKeyProcedure
    .use(rateLimit("redeem", "user"))
    .meta({
      openapi: { method: "POST", path: "/billing/redeem", tags, summary: "Redeem a code for credits (once per account and code)" },
      errors: ["email_not_verified", "not_found", "conflict", "code_expired"],
    })
    .input(z.object({ code: z.string().min(1).max(64).describe("the redemption code") }))
    .output(z.object({ success: z.literal(true), amount: z.number().describe("dollars credited"), balance: z.number().describe("dollars after the credit") }))
    .mutation(({ ctx, input }) => ctx.app.billing.redemptions.redeem(ctx.principal.userId, input.code.trim())),
});
