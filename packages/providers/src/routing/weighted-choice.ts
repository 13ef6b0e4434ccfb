// Weighted random choice (CONTRACT 13: requests spread by weight over the healthy deployments).

/** A number in [0, 1), as Math.random gives; tests pass a seeded one. */
export type Random = () => number;

/** One of `items`, each as likely as its share of the total weight; undefined when there is none. */
export function chooseWeighted<T extends { weight: number }>(items: readonly T[], random: Random): T | undefined {
  let total = 0;
  for (const item of items) total += item.weight;
  let point = random() * total;
  for (const item of items) {
    point -= item.weight;
    if (point < 0) return item;
  }
  // float rounding left the point at the very end
  return items[items.length - 1];
}

/** A small seeded generator (mulberry32), so a test can check the spread without depending on chance. */
export function seededRandom(seed: number): Random {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
