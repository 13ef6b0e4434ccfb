import { checkPassword } from "./password-rules";

/** Live checklist under a new-password field; announced politely to screen readers. */
export function PasswordRulesList({ password, id }: { password: string; id: string }) {
  const rules = checkPassword(password);
  return (
    <ul className="rules" id={id} aria-live="polite">
      {rules.map((rule) => (
        <li key={rule.id} className={rule.ok ? "rule ok" : "rule"} data-ok={rule.ok}>
          <span aria-hidden="true">{rule.ok ? "✓" : "○"}</span> {rule.label}
          <span className="sr-only">{rule.ok ? " (met)" : " (not met yet)"}</span>
        </li>
      ))}
    </ul>
  );
}
