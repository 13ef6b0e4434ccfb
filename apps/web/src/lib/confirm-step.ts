import { useEffect, useRef, useState } from "react";

/**
 * An action's inline confirmation: `open()` swaps the button for the question, `dismiss()` swaps it back and hands
 * focus to the button (`openerRef`) it replaced, not to the page body.
 */
export function useConfirmStep() {
  const [confirming, setConfirming] = useState(false);
  const openerRef = useRef<HTMLButtonElement>(null);
  const dismissed = useRef(false);
  useEffect(() => {
    if (!confirming && dismissed.current) {
      dismissed.current = false;
      openerRef.current?.focus();
    }
  }, [confirming]);
  return {
    confirming,
    openerRef,
    open: () => setConfirming(true),
    dismiss: () => {
      dismissed.current = true;
      setConfirming(false);
    },
    /** Closes after the action succeeded, leaving focus to what the action showed (e.g. a new secret). */
    finish: () => setConfirming(false),
  };
}
