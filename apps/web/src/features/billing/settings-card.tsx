import { useEffect, useState, type FormEvent } from "react";
import { Card, ErrorAlert, Notice, Spinner } from "../../components/ui";
import { useSubmitGuard } from "../../lib/submit-guard";
import { useBillingSettings, useSaveBillingSettings, useSaveCard, type BillingSettings } from "./api";
import { validateCustomAmount, validateThreshold } from "./amount-input";

const SETTINGS_MESSAGES = {
  conflict: "Save a card first: auto top-up charges your saved card.",
  upstream_error: "The payment processor could not complete the request. Please try again shortly.",
};

interface FormState { alert: string; topupEnabled: boolean; topupThreshold: string; topupAmount: string }

const toForm = (s: BillingSettings): FormState => ({
  alert: s.low_balance_threshold === null ? "" : String(s.low_balance_threshold),
  topupEnabled: s.auto_topup.enabled,
  topupThreshold: String(s.auto_topup.threshold),
  topupAmount: String(s.auto_topup.amount),
});

/** CONTRACT 11: the low-balance e-mail, auto top-up, and the card it charges. */
export function BillingSettingsCard() {
  const settings = useBillingSettings();
  const save = useSaveBillingSettings();
  const saveCard = useSaveCard();
  const guard = useSubmitGuard();
  const [form, setForm] = useState<FormState | null>(null);
  const [problem, setProblem] = useState<string | null>(null);
  useEffect(() => {
    if (settings.data && !form) setForm(toForm(settings.data));
  }, [settings.data, form]);

  function submit(event: FormEvent) {
    event.preventDefault();
    if (!form) return;
    const error = (form.alert.trim() ? validateThreshold(form.alert) : null)
      ?? validateThreshold(form.topupThreshold) ?? validateCustomAmount(form.topupAmount);
    setProblem(error);
    if (error || !guard.begin()) return;
    save.mutate({
      low_balance_threshold: form.alert.trim() ? Number(form.alert) : null,
      auto_topup: { enabled: form.topupEnabled, threshold: Number(form.topupThreshold), amount: Number(form.topupAmount) },
    }, { onSettled: guard.end });
  }

  const set = (patch: Partial<FormState>) => setForm((f) => (f ? { ...f, ...patch } : f));
  return (
    <Card title="Alerts and auto top-up">
      {settings.isPending ? <Spinner /> : null}
      <ErrorAlert error={settings.error} />
      {form && settings.data ? (
        <form className="form" onSubmit={submit} noValidate>
          <label className="field">
            <span>E-mail me when my balance falls below (USD, empty: never)</span>
            <input name="low-balance-threshold" inputMode="decimal" value={form.alert} onChange={(e) => set({ alert: e.target.value })} placeholder="5" />
          </label>
          <label className="field field-check">
            <input type="checkbox" name="auto-topup-enabled" checked={form.topupEnabled} onChange={(e) => set({ topupEnabled: e.target.checked })} />
            <span>Auto top-up: charge my saved card when the balance falls below a threshold</span>
          </label>
          <div className="form-inline">
            <label className="field">
              <span>Threshold (USD)</span>
              <input name="auto-topup-threshold" inputMode="decimal" value={form.topupThreshold} onChange={(e) => set({ topupThreshold: e.target.value })} />
            </label>
            <label className="field">
              <span>Amount (USD, 1 to 10,000)</span>
              <input name="auto-topup-amount" inputMode="decimal" value={form.topupAmount} onChange={(e) => set({ topupAmount: e.target.value })} />
            </label>
          </div>
          {problem ? <p className="field-error" role="alert">{problem}</p> : null}
          <button type="submit" className="btn btn-primary" disabled={save.isPending}>{save.isPending ? "Saving…" : "Save settings"}</button>
        </form>
      ) : null}
      {save.isSuccess ? <Notice tone="success">Settings saved.</Notice> : null}
      <ErrorAlert error={save.error} messages={SETTINGS_MESSAGES} />
      {settings.data ? (
        <p className="muted">{settings.data.has_saved_card ? "A card is saved for auto top-up." : "No card saved yet: auto top-up needs one."}</p>
      ) : null}
      <button type="button" className="btn" disabled={saveCard.isPending} onClick={saveCard.start}>
        {settings.data?.has_saved_card ? "Save another card" : "Save a card"}
      </button>
      {saveCard.isPending || saveCard.isSuccess ? <Spinner label="Redirecting to secure checkout…" /> : null}
      <ErrorAlert error={saveCard.error} messages={SETTINGS_MESSAGES} />
    </Card>
  );
}
