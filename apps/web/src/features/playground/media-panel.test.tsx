import { fireEvent, render, screen, waitFor } from "@testing-library/react";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { ModelInfo } from "./api";
import { SpeechPanel } from "./media-panel";

const tts: ModelInfo = { id: "speechvendor-tts", type: "speech", owned_by: "speechvendor", pricing: { per_1k_characters: 0.015 } };

describe("SpeechPanel", () => {
  afterEach(() => vi.unstubAllGlobals());

  it("counts and prices characters as the gateway bills them (an emoji is one character)", async () => {
    const speech = { id: "task_1", object: "speech.generation", created: 0, model: tts.id, audio: { url: "", b64_json: "AAAA" } };
    vi.stubGlobal("fetch", vi.fn().mockResolvedValue(new Response(JSON.stringify(speech), { status: 200 })));
    render(<SpeechPanel model={tts} />);
    // 13 code points, 14 UTF-16 units
    fireEvent.change(screen.getByRole("textbox", { name: "Text" }), { target: { value: "Héllo wörld 👋" } });
    fireEvent.click(screen.getByRole("button", { name: "Generate speech" }));
    await waitFor(() => expect(screen.getByText(/characters/)).toBeTruthy());
    expect(screen.getByText(/characters/).textContent).toBe("13 characters · $0.000195");
  });
});
