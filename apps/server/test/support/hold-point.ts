/**
 * A point where a test holds a request while it does something else: the code under test awaits `pass()`, which
 * resolves `reached` and then waits until the test calls `release()`.
 */
export interface HoldPoint {
  /** awaited by the held code */
  pass(): Promise<void>;
  /** resolves once the held code has got there */
  reached: Promise<void>;
  /** lets the held code go on (idempotent) */
  release(): void;
}

export function holdPoint(): HoldPoint {
  let release = (): void => undefined;
  const gate = new Promise<void>((resolve) => {
    release = resolve;
  });
  let arrive = (): void => undefined;
  const reached = new Promise<void>((resolve) => {
    arrive = resolve;
  });
  return {
    pass: () => {
      arrive();
      return gate;
    },
    reached,
    release: () => release(),
  };
}
