import { useEffect, useRef } from "react";
import { CopyButton } from "./copy-button";
import type { CreatedKey } from "./api";

/** The one moment a full key is visible: the server never returns it again (SPEC 2.4). */
export function KeyReveal({ created, onDone, heading: title, note }: { created: Pick<CreatedKey, "name" | "key">; onDone: () => void; heading?: string; note?: string }) {
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => heading.current?.focus(), []);
  return (
    <div className="key-reveal" role="region" aria-labelledby="key-reveal-title">
      <h3 id="key-reveal-title" className="wrap-anywhere" tabIndex={-1} ref={heading}>{title ?? `Your new key “${created.name}”`}</h3>
      <p className="warning-text">
        Copy it now and store it somewhere safe. <strong>You won't see it again</strong> — for your security we only keep a fingerprint.
      </p>
      {note ? <p className="key-note">{note}</p> : null}
      <div className="key-box">
        <code data-testid="new-key" aria-label="New API key">{created.key}</code>
        <CopyButton text={created.key} label="Copy key" />
      </div>
      <button type="button" className="btn btn-primary" onClick={onDone}>I've stored it safely</button>
    </div>
  );
}
