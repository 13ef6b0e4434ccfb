import { useState } from "react";
import { Link } from "react-router-dom";
import { Card, EmptyState, Notice, Spinner } from "../../components/ui";
import { useBalance } from "../billing/api";
import { useKeys } from "../keys/api";
import { CopyButton } from "../keys/copy-button";
import { useModels } from "../playground/api";
import { SNIPPET_LABELS, baseUrlFor, snippet, type SnippetLanguage } from "./snippets";

const PREFERRED_MODEL = "textA-4";

/** The model the snippets call: the usual one when this gateway lists it, else its first text model. */
function useSnippetModel(): string {
  const models = useModels();
  const text = (models.data?.data ?? []).filter((m) => m.type === "text").map((m) => m.id);
  return text.includes(PREFERRED_MODEL) ? PREFERRED_MODEL : (text[0] ?? PREFERRED_MODEL);
}

function Snippets({ apiKey, fullKey }: { apiKey: string; fullKey: boolean }) {
  const [language, setLanguage] = useState<SnippetLanguage>("curl");
  const model = useSnippetModel();
  const baseUrl = baseUrlFor(window.location.origin);
  const code = snippet(language, { baseUrl, apiKey, model });
  return (
    <div className="quick-start">
      <div className="key-box">
        <span className="quick-start-label">Base URL</span>
        <code data-testid="base-url">{baseUrl}</code>
        <CopyButton text={baseUrl} label="Copy base URL" />
      </div>
      <div className="segmented" role="group" aria-label="Snippet language">
        {(Object.keys(SNIPPET_LABELS) as SnippetLanguage[]).map((l) => (
          <button key={l} type="button" aria-pressed={language === l} className={language === l ? "active" : ""} onClick={() => setLanguage(l)}>
            {SNIPPET_LABELS[l]}
          </button>
        ))}
      </div>
      <pre className="snippet" aria-label={`${SNIPPET_LABELS[language]} example`}><code data-testid="snippet" data-language={language}>{code}</code></pre>
      <CopyButton text={code} label={`Copy ${SNIPPET_LABELS[language]} snippet`} />
      {fullKey ? null : (
        <p className="muted note">
          The snippets show your key's prefix: put the full key in its place (it was shown once, when the key was created).
          Lost it? <Link to="/dashboard/keys">Create or rotate a key</Link>.
        </p>
      )}
    </div>
  );
}

/**
 * Base URL, curl and SDK snippets for a first call. Right after creation `secret` is the full key; elsewhere the
 * newest key's prefix stands in. Without a key or credits it says what to do next, with a link there.
 */
export function QuickStartCard({ secret }: { secret?: string }) {
  const keys = useKeys();
  const balance = useBalance();
  const newest = keys.data?.keys[0];
  const noCredits = balance.data !== undefined && balance.data.balance <= 0;
  return (
    <Card title="Quick start" className="quick-start-card">
      {noCredits ? (
        <Notice tone="warning">
          You have no credits yet, so calls are refused with 402. <Link to="/dashboard/billing">Buy credits or redeem a code</Link> first.
        </Notice>
      ) : null}
      {secret ? <Snippets apiKey={secret} fullKey /> : keys.isPending ? <Spinner /> : newest ? (
        <Snippets apiKey={`${newest.prefix}…`} fullKey={false} />
      ) : (
        <EmptyState title="No API key yet">
          <p>Calls to the API authenticate with a key. <Link to="/dashboard/keys">Create your first API key</Link> and the snippets here use it.</p>
        </EmptyState>
      )}
    </Card>
  );
}
