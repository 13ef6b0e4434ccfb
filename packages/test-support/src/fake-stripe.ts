// A small stateful stand-in for the Stripe API (form-encoded requests, JSON answers), for tests where behaviour
// matters: declined cards, stored metadata, retrieving what was created. stripe-mock covers wire compatibility.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import qs from "qs";

type Json = Record<string, unknown>;

export interface FakeStripeRequest {
  method: string;
  path: string;
  body: Json;
  idempotencyKey?: string;
}

export interface FakeStripe {
  url: string;
  /** every request received, oldest first */
  requests: FakeStripeRequest[];
  /** stored objects by id (customers, payment intents, prices, subscriptions, checkout sessions, invoices, invoice payments) */
  objects: Map<string, Json>;
  close(): Promise<void>;
}

/** Payment methods the fake refuses on attach, like Stripe's declining test cards. */
export const DECLINED_PAYMENT_METHODS = new Set(["pm_card_chargeDeclined", "pm_card_visa_chargeDeclined", "pm_card_chargeDeclinedInsufficientFunds"]);

class StripeHttpError extends Error {
  constructor(readonly status: number, readonly body: Json) {
    super(String((body as { message?: unknown }).message ?? "error"));
  }
}

const notFound = (kind: string, id: string) =>
  new StripeHttpError(404, { type: "invalid_request_error", code: "resource_missing", message: `No such ${kind}: '${id}'`, param: "id" });

async function readBody(req: IncomingMessage): Promise<Json> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString("utf8");
  return text ? (qs.parse(text, { depth: 10, arrayLimit: 100 }) as Json) : {};
}

const str = (v: unknown): string | undefined => (typeof v === "string" ? v : undefined);
const int = (v: unknown): number => Number.parseInt(String(v ?? "0"), 10);

export async function startFakeStripe(options: { now?: () => number } = {}): Promise<FakeStripe> {
  const nowSeconds = () => Math.floor((options.now?.() ?? Date.now()) / 1000);
  const objects = new Map<string, Json>();
  const requests: FakeStripeRequest[] = [];
  const idempotent = new Map<string, { status: number; body: Json }>();
  const attached = new Map<string, string>(); // payment method → customer
  let counter = 0;
  const id = (prefix: string) => `${prefix}_fake${String(++counter).padStart(6, "0")}`;

  const store = (obj: Json): Json => {
    objects.set(String(obj.id), obj);
    return obj;
  };
  const get = (kind: string, objectId: string): Json => {
    const obj = objects.get(objectId);
    if (!obj) throw notFound(kind, objectId);
    return obj;
  };

  function route(method: string, path: string, body: Json): Json {
    const parts = path.replace(/^\/v1\//, "").split("/");
    const [resource, objectId, action] = parts;
    if (method === "GET" && resource === "balance") return { object: "balance", available: [], pending: [], livemode: false };
    if (resource === "customers") {
      if (method === "POST" && !objectId) {
        return store({ id: id("cus"), object: "customer", metadata: body.metadata ?? {}, invoice_settings: { default_payment_method: null }, livemode: false });
      }
      if (objectId) {
        const customer = get("customer", objectId);
        if (method === "POST") Object.assign(customer, body);
        return customer;
      }
    }
    if (resource === "payment_methods" && objectId && action === "attach" && method === "POST") {
      if (DECLINED_PAYMENT_METHODS.has(objectId)) {
        throw new StripeHttpError(402, { type: "card_error", code: "card_declined", decline_code: "generic_decline", message: "Your card was declined.", param: "" });
      }
      if (!objectId.startsWith("pm_")) {
        throw new StripeHttpError(400, { type: "invalid_request_error", code: "resource_missing", message: `No such PaymentMethod: '${objectId}'`, param: "payment_method" });
      }
      const customer = str(body.customer) ?? "";
      get("customer", customer);
      attached.set(objectId, customer);
      return { id: objectId, object: "payment_method", customer, type: "card", livemode: false };
    }
    if (resource === "payment_intents") {
      // an off-session payment confirmed at once: a declining test card refuses it, any other card pays it
      if (method === "POST" && !objectId && body.confirm === "true") {
        const pm = str(body.payment_method) ?? "";
        if (DECLINED_PAYMENT_METHODS.has(pm)) {
          throw new StripeHttpError(402, { type: "card_error", code: "card_declined", decline_code: "generic_decline", message: "Your card was declined.", param: "" });
        }
        const piId = id("pi");
        const chargeId = id("ch");
        return store({
          id: piId, object: "payment_intent", amount: int(body.amount), amount_received: int(body.amount), currency: str(body.currency) ?? "usd",
          customer: str(body.customer) ?? null, payment_method: pm, metadata: body.metadata ?? {}, status: "succeeded",
          latest_charge: chargeId, client_secret: `${piId}_secret_fake`, created: nowSeconds(), livemode: false,
        });
      }
      if (method === "POST" && !objectId) {
        const piId = id("pi");
        return store({
          id: piId, object: "payment_intent", amount: int(body.amount), amount_received: 0, currency: str(body.currency) ?? "usd",
          customer: str(body.customer) ?? null, metadata: body.metadata ?? {}, status: "requires_payment_method",
          client_secret: `${piId}_secret_fake`, created: nowSeconds(), livemode: false,
        });
      }
      if (objectId && method === "GET") return get("payment intent", objectId);
    }
    if (resource === "prices" && method === "POST" && !objectId) {
      return store({
        id: id("price"), object: "price", unit_amount: int(body.unit_amount), currency: str(body.currency) ?? "usd",
        recurring: body.recurring ?? null, metadata: body.metadata ?? {}, active: true, livemode: false,
      });
    }
    if (resource === "subscriptions") {
      if (method === "POST" && !objectId) {
        const customer = get("customer", str(body.customer) ?? "");
        const pm = str(body.default_payment_method) ?? str((customer.invoice_settings as Json | undefined)?.default_payment_method);
        if (!pm || attached.get(pm) !== customer.id) {
          throw new StripeHttpError(400, { type: "invalid_request_error", code: "resource_missing", message: "This customer has no attached payment source or default payment method.", param: "default_payment_method" });
        }
        const items = Array.isArray(body.items) ? (body.items as Json[]) : [];
        const start = nowSeconds();
        const end = start + 30 * 86_400;
        return store({
          id: id("sub"), object: "subscription", customer: customer.id, status: "active", created: start, start_date: start,
          cancel_at_period_end: false, metadata: body.metadata ?? {}, livemode: false, default_payment_method: pm,
          items: { object: "list", data: items.map((item) => ({
            id: id("si"), object: "subscription_item", price: { id: str(item.price), object: "price" }, quantity: 1,
            current_period_start: start, current_period_end: end,
          })) },
        });
      }
      if (objectId) {
        const sub = get("subscription", objectId);
        if (method === "DELETE") Object.assign(sub, { status: "canceled", canceled_at: nowSeconds() });
        if (method === "POST" && body.cancel_at_period_end !== undefined) sub.cancel_at_period_end = body.cancel_at_period_end === "true";
        return sub;
      }
    }
    // setup intents are made by Checkout at Stripe, not here: tests store the ones they need
    if (resource === "setup_intents" && objectId && method === "GET") return get("setup intent", objectId);
    // invoices are made by subscriptions at Stripe, not here: tests store the ones they need
    if (resource === "invoices" && objectId && method === "GET") return get("invoice", objectId);
    // an invoice's payments (tests store `invoice_payment` objects): filtered by payment intent as Stripe's list is
    if (resource === "invoice_payments" && method === "GET" && !objectId) {
      const payment = (body.payment ?? {}) as Json;
      const data = [...objects.values()].filter((o) => o.object === "invoice_payment"
        && (!str(body.invoice) || o.invoice === body.invoice)
        && (!str(payment.payment_intent) || (o.payment as Json | undefined)?.payment_intent === payment.payment_intent));
      return { object: "list", url: "/v1/invoice_payments", has_more: false, data: data.slice(0, int(body.limit) || 10) };
    }
    if (resource === "checkout" && objectId === "sessions" && method === "POST") {
      const csId = id("cs");
      return store({
        id: csId, object: "checkout.session", mode: str(body.mode), customer: str(body.customer) ?? null, metadata: body.metadata ?? {},
        client_reference_id: str(body.client_reference_id) ?? null, success_url: str(body.success_url), cancel_url: str(body.cancel_url),
        line_items_request: body.line_items, payment_intent_data: body.payment_intent_data ?? null, subscription_data: body.subscription_data ?? null,
        url: `https://checkout.fake.test/c/pay/${csId}`, status: "open", payment_status: "unpaid", payment_intent: null, livemode: false,
      });
    }
    throw new StripeHttpError(404, { type: "invalid_request_error", message: `Unrecognized request URL (${method}: ${path}).` });
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const method = req.method ?? "GET";
    const [path = "/", query = ""] = (req.url ?? "/").split("?");
    // a GET's parameters come in the query string, in the same encoding as a POST's body
    const body = method === "GET" && query ? (qs.parse(query, { depth: 10, arrayLimit: 100 }) as Json) : await readBody(req);
    const idempotencyKey = str(req.headers["idempotency-key"]);
    requests.push({ method, path, body, idempotencyKey });
    const replayKey = idempotencyKey ? `${method} ${path} ${idempotencyKey}` : undefined;
    let answer = replayKey ? idempotent.get(replayKey) : undefined;
    if (!answer) {
      try {
        answer = { status: 200, body: route(method, path, body) };
      } catch (err) {
        answer = err instanceof StripeHttpError ? { status: err.status, body: { error: err.body } } : { status: 500, body: { error: { type: "api_error", message: "fake failure" } } };
      }
      if (replayKey) idempotent.set(replayKey, answer);
    }
    res.writeHead(answer.status, { "content-type": "application/json", "request-id": id("req") });
    res.end(JSON.stringify(answer.body));
  }

  const server: Server = createServer((req, res) => void handle(req, res));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    objects,
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}
