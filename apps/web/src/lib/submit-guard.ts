import { useRef } from "react";

/**
 * Lets one submission through until the previous one has ended. A double click's second click arrives before React
 * re-renders the button as disabled (a mutation's isPending reaches the component asynchronously), so `disabled`
 * alone let one double click create two keys or two checkouts.
 */
export function useSubmitGuard(): { begin: () => boolean; end: () => void } {
  const busy = useRef(false);
  return {
    begin: () => {
      if (busy.current) return false;
      busy.current = true;
      return true;
    },
    end: () => {
      busy.current = false;
    },
  };
}
