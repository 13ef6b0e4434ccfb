export * from "./processes";
export * from "./fake-upstreams/index";
export { MP3_128K_FRAME_SECONDS, lowBitrateMp3, pcmWav, taggedMp3 } from "./audio-files";
export { startFakeOAuth } from "./fake-oauth";
export type { FakeOAuthServer } from "./fake-oauth";
export { startFakeStripe } from "./fake-stripe";
export type { FakeStripe } from "./fake-stripe";
export { filtersSent } from "./driver-filters";
export type { SentFilter } from "./driver-filters";
