// Local fake upstreams, one per wire protocol, for the end-to-end suites and the bench.
import { FakeAnthropic } from "./fake-anthropic";
import { FakeElevenLabs } from "./fake-elevenlabs";
import { FakeFlux } from "./fake-flux";
import { FakeOpenAi } from "./fake-openai";

export * from "./deterministic";
export { DEFAULT_FAKE_VOICES, FakeElevenLabs, type FakeVoice } from "./fake-elevenlabs";
export { FakeAnthropic } from "./fake-anthropic";
export { FakeFlux } from "./fake-flux";
export { FakeOpenAi } from "./fake-openai";
export { FakeServer, type Fault, type RecordedRequest } from "./fake-server";

export const FAKE_KEYS = {
  textA: "fake-texta-key",
  textB: "fake-textb-key",
  textC: "fake-textc-key",
  imageA: "fake-imagea-key",
  imageB: "fake-imageb-key",
  speech: "fake-speech-key",
} as const;

export interface FakeUpstreams {
  textA: FakeOpenAi;
  textB: FakeAnthropic;
  textC: FakeOpenAi;
  imageA: FakeOpenAi;
  imageB: FakeFlux;
  speech: FakeElevenLabs;
  /** TEXTA_BASE_URL … SPEECH_API_KEY for startTestServer({ env }) or loadConfig */
  env: Record<string, string>;
  /** clear() on every fake: recorded requests, queued faults, options */
  clearAll(): void;
  close(): Promise<void>;
}

/** Starts one fake per provider on free loopback ports. */
export async function startFakeUpstreams(): Promise<FakeUpstreams> {
  const [textA, textB, textC, imageA, imageB, speech] = await Promise.all([
    new FakeOpenAi(FAKE_KEYS.textA).start(),
    new FakeAnthropic(FAKE_KEYS.textB).start(),
    new FakeOpenAi(FAKE_KEYS.textC).start(),
    new FakeOpenAi(FAKE_KEYS.imageA).start(),
    new FakeFlux(FAKE_KEYS.imageB).start(),
    new FakeElevenLabs(FAKE_KEYS.speech).start(),
  ]);
  const all = [textA, textB, textC, imageA, imageB, speech];
  return {
    textA, textB, textC, imageA, imageB, speech,
    env: {
      TEXTA_BASE_URL: textA.url, TEXTA_API_KEY: FAKE_KEYS.textA,
      TEXTB_BASE_URL: textB.url, TEXTB_API_KEY: FAKE_KEYS.textB,
      TEXTC_BASE_URL: textC.url, TEXTC_API_KEY: FAKE_KEYS.textC,
      IMAGEA_BASE_URL: imageA.url, IMAGEA_API_KEY: FAKE_KEYS.imageA,
      IMAGEB_BASE_URL: imageB.url, IMAGEB_API_KEY: FAKE_KEYS.imageB,
      SPEECH_BASE_URL: speech.url, SPEECH_API_KEY: FAKE_KEYS.speech,
    },
    clearAll: () => { for (const fake of all) fake.clear(); },
    close: async () => { await Promise.all(all.map((fake) => fake.close())); },
  };
}
