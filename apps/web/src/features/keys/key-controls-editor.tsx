import { useEffect, useRef, useState, type FormEvent } from "react";
import { Card, ErrorAlert, Notice } from "../../components/ui";
import { useSubmitGuard } from "../../lib/submit-guard";
import { useUpdateKey, type ApiKey } from "./api";
import { controlsFromForm, formFromKey, type ControlsForm } from "./controls";
import { KeyControlsFields } from "./key-controls-fields";

/** Edits one key's controls; saved values come back from the API (the list shows them at once). */
export function KeyControlsEditor({ apiKey, onClose }: { apiKey: ApiKey; onClose: () => void }) {
  const update = useUpdateKey();
  const guard = useSubmitGuard();
  const [form, setForm] = useState<ControlsForm>(() => formFromKey(apiKey));
  const [problem, setProblem] = useState<string | null>(null);
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => heading.current?.focus(), []);

  function edit(next: ControlsForm) {
    setForm(next);
    setProblem(null);
    if (!update.isPending) update.reset();
  }

  function submit(event: FormEvent) {
    event.preventDefault();
    const result = controlsFromForm(form, Date.now());
    if ("error" in result) return setProblem(result.error);
    if (!guard.begin()) return;
    update.mutate({ id: apiKey.id, ...result.input }, { onSuccess: (saved) => setForm(formFromKey(saved)), onSettled: guard.end });
  }

  return (
    <Card className="key-editor">
      <h2 className="wrap-anywhere" tabIndex={-1} ref={heading}>Controls of “{apiKey.name}”</h2>
      <form className="form" onSubmit={submit} noValidate aria-label={`Controls of ${apiKey.name}`}>
        <KeyControlsFields value={form} onChange={edit} idPrefix={`edit-${apiKey.id}`} />
        {problem ? <p className="field-error" role="alert">{problem}</p> : null}
        <ErrorAlert error={update.error} />
        {update.isSuccess ? <Notice tone="success">Controls saved. They apply to the next request made with this key.</Notice> : null}
        <div className="button-row">
          <button type="submit" className="btn btn-primary" disabled={update.isPending}>{update.isPending ? "Saving…" : "Save controls"}</button>
          <button type="button" className="btn" onClick={onClose}>Close</button>
        </div>
      </form>
    </Card>
  );
}
