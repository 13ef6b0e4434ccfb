// Any API call may discover that the session is gone; the auth provider listens and sends the user to /login.
type Listener = (code: string) => void;
const listeners = new Set<Listener>();

export function onSessionLost(listener: Listener): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

export function notifySessionLost(code: string): void {
  for (const listener of listeners) listener(code);
}

// Why the last session ended (set when /me answers 401), so the login page can say "expired" rather than nothing;
// `logged_out` and `account_deleted` when the user ended it, so no "log in to come back here" link is made.
let lastLoss: string | null = null;

export function recordSessionLoss(code: string | null): void {
  lastLoss = code;
}

/** The recorded reason; pure, so rendering may call it any number of times. */
export function peekSessionLoss(): string | null {
  return lastLoss;
}
