import { render, screen, within } from "@testing-library/react";
import { describe, expect, it } from "vitest";
import type { UsageResponse } from "./api";
import { Breakdown } from "./usage-page";

const sums = { total_tokens: 10 };
const usage = (byKey?: UsageResponse["totals"]["by_key"]): UsageResponse => ({
  data: [],
  pagination: { page: 1, per_page: 25, total: 3, total_pages: 1 },
  range: { from: "2026-11-07T00:00:00.000Z", to: "2026-12-07T00:00:00.000Z" },
  totals: {
    requests: 3, cost: 0.5, ...sums, by_day: [],
    by_model: [{ model: "textB-3-haiku", requests: 1, cost: 0.004, ...sums }, { model: "textA-4", requests: 2, cost: 0.496, ...sums }],
    ...(byKey ? { by_key: byKey } : {}),
  },
});
const keyName = (id: string | null | undefined) => (id === "key_a" ? "ci (ak-live-abcd…)" : id ? `Revoked key ${id}` : "Dashboard");

describe("usage breakdown", () => {
  it("lists models and keys by cost, naming each key and the dashboard's own calls", () => {
    render(<Breakdown usage={usage([{ key_id: null, requests: 1, cost: 0.004, ...sums }, { key_id: "key_a", requests: 1, cost: 0.4, ...sums }, { key_id: "key_gone", requests: 1, cost: 0.096, ...sums }])} keyName={keyName} />);
    const models = within(screen.getByRole("table", { name: "Usage by model" })).getAllByRole("row").slice(1).map((r) => r.textContent);
    expect(models).toEqual(["textA-42$0.50", "textB-3-haiku1$0.004"]);
    const keys = within(screen.getByRole("table", { name: "Usage by key" })).getAllByRole("row").slice(1).map((r) => r.textContent);
    expect(keys).toEqual(["ci (ak-live-abcd…)1$0.40", "Revoked key key_gone1$0.10", "Dashboard1$0.004"]);
  });

  it("says so when the API gives no breakdown by key", () => {
    render(<Breakdown usage={usage()} keyName={keyName} />);
    expect(screen.queryByRole("table", { name: "Usage by key" })).toBeNull();
    expect(screen.getByText(/does not break usage down by key/)).toBeTruthy();
  });
});
