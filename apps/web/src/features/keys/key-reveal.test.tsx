import { fireEvent, render, screen, waitFor } from "@testing-library/react";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { CreatedKey } from "./api";
import { KeyReveal } from "./key-reveal";

const created: Pick<CreatedKey, "name" | "key"> = { name: "ci", key: "ak-test-0123456789abcdefghijABCDEFGHIJxyz" };

describe("KeyReveal", () => {
  afterEach(() => vi.unstubAllGlobals());

  it("shows the full key once with a clear warning and focuses the heading", () => {
    render(<KeyReveal created={created} onDone={() => undefined} />);
    expect(screen.getByTestId("new-key").textContent).toBe(created.key);
    expect(screen.getByText(/won't see it again/i)).toBeTruthy();
    expect(document.activeElement).toBe(screen.getByRole("heading", { name: /ci/ }));
  });

  it("copies the key to the clipboard and says so", async () => {
    const writeText = vi.fn().mockResolvedValue(undefined);
    vi.stubGlobal("navigator", { ...navigator, clipboard: { writeText } });
    render(<KeyReveal created={created} onDone={() => undefined} />);
    fireEvent.click(screen.getByRole("button", { name: "Copy key" }));
    await waitFor(() => expect(screen.getByRole("button", { name: "Copied!" })).toBeTruthy());
    expect(writeText).toHaveBeenCalledWith(created.key);
  });

  it("tells the user when copying failed so they copy by hand", async () => {
    vi.stubGlobal("navigator", { ...navigator, clipboard: { writeText: vi.fn().mockRejectedValue(new Error("denied")) } });
    document.execCommand = vi.fn().mockReturnValue(false);
    render(<KeyReveal created={created} onDone={() => undefined} />);
    fireEvent.click(screen.getByRole("button", { name: "Copy key" }));
    await waitFor(() => expect(screen.getByRole("button", { name: /Copy failed/ })).toBeTruthy());
  });

  it("hides the key when the user confirms it is stored", () => {
    const onDone = vi.fn();
    render(<KeyReveal created={created} onDone={onDone} />);
    fireEvent.click(screen.getByRole("button", { name: /stored it safely/ }));
    expect(onDone).toHaveBeenCalledOnce();
  });
});
