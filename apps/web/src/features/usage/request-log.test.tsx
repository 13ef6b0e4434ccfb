import { QueryClient, QueryClientProvider } from "@tanstack/react-query";
import { fireEvent, render, screen, within } from "@testing-library/react";
import { MemoryRouter } from "react-router-dom";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { UsageRecord, UsageResponse } from "./api";
import { RequestLog } from "./usage-page";

const record = (n: number): UsageRecord => ({
  id: `use_${n}`, request_id: `req_${n}`, created_at: "2026-12-06T10:00:00.000Z", endpoint: "/v1/chat/completions", model: "textA-4",
  type: "text", key_id: null, status: "success", prompt_tokens: 2, completion_tokens: 3, total_tokens: 5, characters: 0,
  audio_seconds: 0, images: 0, processing_ms: 12, cost: 0.000007,
});

const page = (records: UsageRecord[], total: number, pageNo = 1, perPage = 25): UsageResponse => ({
  data: records,
  pagination: { page: pageNo, per_page: perPage, total, total_pages: Math.ceil(total / perPage) },
  range: { from: "2026-11-07T00:00:00.000Z", to: "2026-12-07T00:00:00.000Z" },
  totals: { requests: total, cost: 0, total_tokens: 0, by_day: [], by_model: [] },
});

const filters = { from: "2026-11-07", to: "2026-12-06" };

function renderLog(usage: UsageResponse, setPage = vi.fn(), pageNo = 1) {
  render(
    <QueryClientProvider client={new QueryClient({ defaultOptions: { queries: { retry: false } } })}>
      <MemoryRouter>
        <RequestLog filters={filters} usage={usage} page={pageNo} setPage={setPage} keyName={() => "Dashboard"} />
      </MemoryRouter>
    </QueryClientProvider>,
  );
  return setPage;
}

describe("request log", () => {
  afterEach(() => vi.unstubAllGlobals());

  it("pages through the range, newest first", () => {
    const setPage = renderLog(page([record(1), record(2)], 60, 2), vi.fn(), 2);
    expect(screen.getByText("Page 2 of 3 · 60 requests, 25 a page")).toBeTruthy();
    fireEvent.click(screen.getByRole("button", { name: "Older" }));
    expect(setPage).toHaveBeenCalledWith(3);
    fireEvent.click(screen.getByRole("button", { name: "Newer" }));
    expect(setPage).toHaveBeenCalledWith(1);
  });

  it("finds a request id beyond the first page of the range, reading it a hundred records at a time", async () => {
    const urls: string[] = [];
    vi.stubGlobal("fetch", vi.fn(async (url: string) => {
      urls.push(url);
      const n = Number(new URL(url, "http://x").searchParams.get("page"));
      const body = n === 1 ? page([record(1)], 150, 1, 100) : page([record(150)], 150, 2, 100);
      return new Response(JSON.stringify(body), { status: 200, headers: { "content-type": "application/json" } });
    }));
    renderLog(page([record(1)], 150));
    fireEvent.change(screen.getByLabelText("Request id"), { target: { value: " req_150 " } });
    fireEvent.click(screen.getByRole("button", { name: "Search" }));
    const table = await screen.findByRole("table", { name: "Request log" });
    await within(table).findByText("req_150");
    expect(within(table).getAllByRole("row")).toHaveLength(2);
    expect(urls).toEqual([
      "/api/usage?from=2026-11-07&to=2026-12-06&request_id=req_150&page=1&per_page=100",
      "/api/usage?from=2026-11-07&to=2026-12-06&request_id=req_150&page=2&per_page=100",
    ]);
  });

  it("says when no request has that id in the range", async () => {
    vi.stubGlobal("fetch", vi.fn(async () => new Response(JSON.stringify(page([record(1)], 1, 1, 100)), { status: 200 })));
    renderLog(page([record(1)], 1));
    fireEvent.change(screen.getByLabelText("Request id"), { target: { value: "req_missing" } });
    fireEvent.click(screen.getByRole("button", { name: "Search" }));
    await screen.findByText("No request with id req_missing in this range.");
    fireEvent.click(screen.getByRole("button", { name: "Show all" }));
    expect(screen.getByText("req_1")).toBeTruthy();
  });
});
