import { useState, type KeyboardEvent } from "react";
import { ErrorAlert } from "../../components/ui";
import { useConfirmStep } from "../../lib/confirm-step";
import { useSubmitGuard } from "../../lib/submit-guard";
import { useRotateKey, type ApiKey, type RotatedKey } from "./api";

/** How long the old secret keeps working after a rotation (CONTRACT 10: 0..86400 s). */
const GRACE_CHOICES = [
  { seconds: 0, label: "refuse it at once" },
  { seconds: 3_600, label: "keep it working for 1 hour" },
  { seconds: 86_400, label: "keep it working for 24 hours" },
] as const;

/** Gives the key a new secret after a confirmation that chooses the old secret's grace period. */
export function RotateButton({ apiKey, onRotated }: { apiKey: ApiKey; onRotated: (key: RotatedKey, graceSeconds: number) => void }) {
  const rotate = useRotateKey();
  const guard = useSubmitGuard();
  const { confirming, openerRef, open, dismiss, finish } = useConfirmStep();
  const [grace, setGrace] = useState<number>(3_600);

  if (!confirming) {
    return (
      <button ref={openerRef} type="button" className="btn btn-small" onClick={open} aria-label={`Rotate key ${apiKey.name}`}>Rotate</button>
    );
  }
  return (
    <div className="confirm" role="group" aria-label={`Confirm rotating ${apiKey.name}`}
      onKeyDown={(event: KeyboardEvent) => { if (event.key === "Escape" && !rotate.isPending) dismiss(); }}>
      <span className="inline-field">
        <label htmlFor={`grace-${apiKey.id}`}>New secret; the old one:</label>
        <select id={`grace-${apiKey.id}`} name="grace" value={grace} onChange={(e) => setGrace(Number(e.target.value))} autoFocus>
          {GRACE_CHOICES.map((c) => <option key={c.seconds} value={c.seconds}>{c.label}</option>)}
        </select>
      </span>
      <button type="button" className="btn btn-small btn-primary" disabled={rotate.isPending}
        onClick={() => guard.begin() && rotate.mutate({ id: apiKey.id, grace_seconds: grace }, { onSuccess: (key) => { finish(); onRotated(key, grace); }, onSettled: guard.end })}>
        {rotate.isPending ? "Rotating…" : "Rotate now"}
      </button>
      <button type="button" className="btn btn-small" onClick={dismiss}>Cancel</button>
      <ErrorAlert error={rotate.error} />
    </div>
  );
}
