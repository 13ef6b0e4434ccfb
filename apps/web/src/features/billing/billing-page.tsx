import { useEffect, useRef, useState, type FormEvent, type KeyboardEvent } from "react";
import { Link, useSearchParams } from "react-router-dom";
import { Card, EmptyState, ErrorAlert, Notice, PageTitle, Spinner } from "../../components/ui";
import { useConfirmStep } from "../../lib/confirm-step";
import { useSubmitGuard } from "../../lib/submit-guard";
import { formatDate, formatDay, formatMoney } from "../../lib/format";
import { validateCustomAmount } from "./amount-input";
import { RedeemCard } from "./redeem-card";
import { BillingSettingsCard } from "./settings-card";
import { historyLabel, useBalance, useCheckoutConfirmed, useBillingConfig, useCancelSubscription, useCheckout, useFollowBalance, usePaymentHistory, useSubscription, type Plan, type SubscriptionInfo } from "./api";

/** Errors of the payment processor (Stripe), where the generic texts speak of model providers or a passing outage. */
const PAYMENT_MESSAGES = {
  upstream_error: "The payment processor could not complete the request. Nothing was charged; please try again shortly.",
  service_unavailable: "Payments are not available on this gateway right now.",
};

function CreditsCard() {
  const config = useBillingConfig();
  const checkout = useCheckout();
  const [custom, setCustom] = useState("");
  const [customError, setCustomError] = useState<string | null>(null);

  function buyCustom(event: FormEvent) {
    event.preventDefault();
    const problem = validateCustomAmount(custom);
    setCustomError(problem);
    if (!problem) checkout.start({ type: "credits", amount: Number(custom) });
  }

  return (
    <Card title="Buy credits">
      {config.isPending ? <Spinner /> : null}
      <ErrorAlert error={config.error} />
      <div className="packages">
        {config.data?.credit_packages.map((p) => (
          <div key={p.amount} className="package">
            <p className="package-amount">{formatMoney(p.amount)}</p>
            <p className={p.bonus > 0 ? "bonus" : "muted"}>{p.bonus > 0 ? `+ ${formatMoney(p.bonus)} bonus` : "No bonus"}</p>
            <p className="muted">You get {formatMoney(p.total)} in credits</p>
            <button type="button" className="btn btn-primary" disabled={checkout.isPending} onClick={() => checkout.start({ type: "credits", amount: p.amount })}>
              Buy {formatMoney(p.amount)}
            </button>
          </div>
        ))}
      </div>
      <form className="form form-inline" onSubmit={buyCustom} noValidate>
        <label className="field">
          <span>Custom amount (USD)</span>
          <input name="custom-amount" inputMode="decimal" value={custom} onChange={(e) => setCustom(e.target.value)} placeholder="25" aria-invalid={customError ? true : undefined} aria-describedby={customError ? "custom-amount-error" : undefined} />
        </label>
        <button type="submit" className="btn" disabled={checkout.isPending || !custom.trim()}>Buy credits</button>
      </form>
      {customError ? <p className="field-error" id="custom-amount-error" role="alert">{customError}</p> : null}
      {checkout.isPending || checkout.isSuccess ? <Spinner label="Redirecting to secure checkout…" /> : null}
      <ErrorAlert error={checkout.error} messages={PAYMENT_MESSAGES} />
    </Card>
  );
}

type Subscription = NonNullable<SubscriptionInfo["subscription"]>;

/** What a plan other than the subscribed one says instead of a Subscribe button: a second subscription is refused (409). */
function planChangeNote(subscription: Subscription): string {
  return subscription.cancel_at_period_end
    ? `Available after your ${subscription.plan.name} plan ends on ${formatDay(subscription.current_period_end)}.`
    : `To switch, cancel your ${subscription.plan.name} plan first; this one is available once it has ended.`;
}

function PlanOption({ plan, current, onSubscribe, busy, subscription }: { plan: Plan; current: boolean; onSubscribe: () => void; busy: boolean; subscription: Subscription | null | undefined }) {
  return (
    <div className={current ? "plan current" : "plan"}>
      <h3>{plan.name}</h3>
      <p className="plan-price">{plan.price === 0 ? "Free" : `${formatMoney(plan.price)} / ${plan.interval}`}</p>
      <ul className="features">
        {(plan.features ?? []).map((f) => <li key={f}>{f}</li>)}
      </ul>
      {current ? (
        <span className="badge">Current plan</span>
      ) : plan.price > 0 && subscription ? (
        <p className="muted">{planChangeNote(subscription)}</p>
      ) : plan.price > 0 ? (
        <button type="button" className="btn btn-primary" disabled={busy} onClick={onSubscribe}>Subscribe to {plan.name}</button>
      ) : null}
    </div>
  );
}

/** Cancels at the end of the paid period, after a confirmation; the plan stays until then. */
function CancelSubscription({ subscription }: { subscription: Subscription }) {
  const cancel = useCancelSubscription();
  const guard = useSubmitGuard();
  const { confirming, openerRef, open, dismiss } = useConfirmStep();
  // The confirmation (and the focused "Yes, cancel") is gone once the cancellation shows: keyboard and screen-reader
  // users continue at its notice rather than at the top of the page.
  const confirmed = useRef(false);
  const notice = useRef<HTMLParagraphElement>(null);
  useEffect(() => {
    if (subscription.cancel_at_period_end && confirmed.current) notice.current?.focus();
  }, [subscription.cancel_at_period_end]);

  if (subscription.cancel_at_period_end) {
    return (
      <p className="alert alert-info" role="status" tabIndex={-1} ref={notice}>
        Your {subscription.plan.name} plan is cancelled and ends on {formatDay(subscription.current_period_end)}; it applies until then.
      </p>
    );
  }
  if (!confirming) {
    return <button ref={openerRef} type="button" className="btn btn-danger-outline" onClick={open}>Cancel subscription</button>;
  }
  return (
    <div className="confirm" role="group" aria-label="Confirm cancelling the subscription"
      onKeyDown={(event: KeyboardEvent) => { if (event.key === "Escape" && !cancel.isPending) dismiss(); }}>
      <span>Cancel {subscription.plan.name}? It stays active until {formatDay(subscription.current_period_end)}, then you are on the free plan.</span>
      <button type="button" className="btn btn-small btn-danger" disabled={cancel.isPending} onClick={() => { if (guard.begin()) { confirmed.current = true; cancel.mutate({}, { onSettled: guard.end }); } }} autoFocus>
        {cancel.isPending ? "Cancelling…" : "Yes, cancel"}
      </button>
      <button type="button" className="btn btn-small" onClick={dismiss}>Keep it</button>
      <ErrorAlert error={cancel.error} messages={PAYMENT_MESSAGES} />
    </div>
  );
}

function PlansCard() {
  const config = useBillingConfig();
  const sub = useSubscription();
  const checkout = useCheckout();
  const currentId = sub.data?.plan.id ?? "free";
  const subscription = sub.data?.subscription;
  return (
    <Card title="Plan and subscription">
      <ErrorAlert error={sub.error} />
      {sub.data ? (
        <p className="muted">
          Limits: {sub.data.limits.requests_per_minute.toLocaleString("en-US")} requests / minute,{" "}
          {sub.data.limits.concurrent_requests.toLocaleString("en-US")} concurrent requests
          {sub.data.limits.monthly_credits > 0 ? `, ${formatMoney(sub.data.limits.monthly_credits)} credits included each month` : ""}.
        </p>
      ) : null}
      {subscription ? (
        <dl className="details">
          <div><dt>Plan</dt><dd>{subscription.plan.name}</dd></div>
          <div><dt>Status</dt><dd><span className={`badge badge-${subscription.status}`}>{subscription.status}</span></dd></div>
          <div><dt>Current period</dt><dd>{formatDay(subscription.current_period_start)} – {formatDay(subscription.current_period_end)}</dd></div>
        </dl>
      ) : null}
      {subscription ? <CancelSubscription subscription={subscription} /> : sub.data ? (
        <p className="muted">You are on the free plan: pay as you go with credits.</p>
      ) : null}
      <div className="plans">
        {config.data?.plans.map((plan) => (
          <PlanOption key={plan.id} plan={plan} current={plan.id === currentId} busy={checkout.isPending} subscription={subscription}
            onSubscribe={() => checkout.start({ type: "subscription", plan_id: plan.id })} />
        ))}
      </div>
      {checkout.isPending || checkout.isSuccess ? <Spinner label="Redirecting to secure checkout…" /> : null}
      <ErrorAlert error={checkout.error} messages={PAYMENT_MESSAGES} />
    </Card>
  );
}

function HistoryCard({ history }: { history: ReturnType<typeof usePaymentHistory> }) {
  const entries = history.data?.pages.flatMap((page) => page.entries);
  return (
    <Card title="Payment history">
      {history.isPending ? <Spinner /> : null}
      <ErrorAlert error={history.error} />
      {entries && entries.length === 0 ? <EmptyState title="No payments yet" /> : null}
      {entries && entries.length > 0 ? (
        <div className="table-wrap">
          <table className="table">
            <thead><tr><th scope="col">Date</th><th scope="col">Description</th><th scope="col" className="num">Amount</th><th scope="col" className="num">Balance after</th></tr></thead>
            <tbody>
              {entries.map((e) => (
                <tr key={e.id}>
                  <td data-label="Date">{formatDate(e.created_at)}</td>
                  <td data-label="Description">
                    {historyLabel(e.type)}
                    {e.receipt_url ? <> (<a href={e.receipt_url} target="_blank" rel="noreferrer">receipt</a>)</> : null}
                  </td>
                  <td data-label="Amount" className={e.amount >= 0 ? "num positive" : "num"}>{formatMoney(e.amount)}</td>
                  <td data-label="Balance after" className="num">{formatMoney(e.balance_after)}</td>
                </tr>
              ))}
            </tbody>
          </table>
          <p className="muted note" data-testid="history-note">
            Request charges are not listed here: each balance after also reflects the requests made since the entry before
            it. Every request and its cost is on the <Link to="/dashboard/usage">Usage</Link> page.
          </p>
        </div>
      ) : null}
      {history.hasNextPage ? (
        <button type="button" className="btn" disabled={history.isFetchingNextPage} onClick={() => void history.fetchNextPage()}>
          {history.isFetchingNextPage ? "Loading…" : "Show older payments"}
        </button>
      ) : null}
    </Card>
  );
}

export function BillingPage() {
  const [params] = useSearchParams();
  const outcome = params.get("checkout");
  const balance = useBalance(outcome === "success");
  useFollowBalance(balance.data?.balance);
  const history = usePaymentHistory();
  const confirmed = useCheckoutConfirmed(balance.data?.balance, history.data?.pages.flatMap((page) => page.entries));
  return (
    <>
      <PageTitle subtitle="Prepaid credits pay for every request; a plan raises your limits and includes monthly credits.">Billing</PageTitle>
      {outcome === "success" && !confirmed ? <Notice tone="success">Payment received. Your credits appear as soon as the payment is confirmed.</Notice> : null}
      {outcome === "success" && confirmed ? <Notice tone="success">Payment confirmed: the credits are in your balance.</Notice> : null}
      {outcome === "cancelled" ? <Notice tone="warning">Checkout was cancelled; nothing was charged.</Notice> : null}
      {params.get("card") === "saved" ? <Notice tone="success">Card saved. It can be used for auto top-up as soon as the payment processor confirms it.</Notice> : null}
      <Card title="Balance" className="stat">
        {balance.isPending ? <Spinner /> : null}
        <ErrorAlert error={balance.error} />
        {balance.data ? <p className="stat-value" data-testid="billing-balance">{formatMoney(balance.data.balance)}</p> : null}
      </Card>
      <CreditsCard />
      <RedeemCard />
      <BillingSettingsCard />
      <PlansCard />
      <HistoryCard history={history} />
    </>
  );
}
