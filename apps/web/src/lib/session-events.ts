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
