import { useState, type FormEvent } from "react";
import { Card, ErrorAlert, Notice, PageTitle, Spinner } from "../../components/ui";
import { useSubmitGuard } from "../../lib/submit-guard";
import { AdminNav } from "./admin-nav";
import { parseJsonList, useCreditPackages, usePlans, useSetCreditPackages, useSetPlans } from "./api";

const CONFLICT = { conflict: "Another admin changed the catalog meanwhile: it has been read again; review and save once more." };

/**
 * A whole list as JSON, in CONFIG_FILE's format: the browser checks it is a list of objects, the server every field
 * (its refusal names the entry and field, e.g. plans[1].monthlyCreditsMicros).
 */
function ListEditor({ name, initial, saving, error, saved, onSave }: {
  name: string;
  initial: unknown[];
  saving: boolean;
  error: unknown;
  saved: boolean;
  onSave: (list: Array<Record<string, unknown>>) => void;
}) {
  const [text, setText] = useState(() => JSON.stringify(initial, null, 2));
  const [problem, setProblem] = useState<string | null>(null);
  function submit(event: FormEvent) {
    event.preventDefault();
    const parsed = parseJsonList(text);
    if ("error" in parsed) return setProblem(parsed.error);
    setProblem(null);
    onSave(parsed.list);
  }
  return (
    <form className="form" onSubmit={submit} noValidate aria-label={`Edit ${name}`}>
      <label className="field"><span>{name} (JSON)</span>
        <textarea name={name} rows={16} value={text} onChange={(e) => setText(e.target.value)} spellCheck={false} />
      </label>
      {problem ? <p className="field-error" role="alert">{problem}</p> : null}
      <ErrorAlert error={error} messages={CONFLICT} />
      {saved ? <Notice tone="success">Saved.</Notice> : null}
      <button type="submit" className="btn btn-primary" disabled={saving}>{saving ? "Saving…" : `Save ${name.toLowerCase()}`}</button>
    </form>
  );
}

export function AdminPlansPage() {
  const plans = usePlans();
  const packages = useCreditPackages();
  const setPlans = useSetPlans();
  const setPackages = useSetCreditPackages();
  const guard = useSubmitGuard();
  const save = (run: (end: () => void) => void) => {
    if (guard.begin()) run(guard.end);
  };
  return (
    <>
      <PageTitle subtitle="Plans (prices in dollars, monthly credits in micro-dollars) and credit packages, as in CONFIG_FILE.">Admin</PageTitle>
      <AdminNav />
      <Card title="Plans">
        {plans.isPending ? <Spinner /> : null}
        <ErrorAlert error={plans.error} />
        {plans.data ? (
          <ListEditor key={`plans:${plans.data.version}`} name="Plans" initial={plans.data.plans} saving={setPlans.isPending} error={setPlans.error} saved={setPlans.isSuccess}
            onSave={(list) => save((end) => setPlans.mutate({ version: plans.data.version, plans: list }, { onSettled: end }))} />
        ) : null}
      </Card>
      <Card title="Credit packages">
        {packages.isPending ? <Spinner /> : null}
        <ErrorAlert error={packages.error} />
        {packages.data ? (
          <ListEditor key={`packages:${packages.data.version}`} name="Credit packages" initial={packages.data.credit_packages} saving={setPackages.isPending} error={setPackages.error} saved={setPackages.isSuccess}
            onSave={(list) => save((end) => setPackages.mutate({ version: packages.data.version, credit_packages: list }, { onSettled: end }))} />
        ) : null}
      </Card>
    </>
  );
}
