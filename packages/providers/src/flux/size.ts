// aspect_ratio → pixel size of about one megapixel (CONTRACT 5: 1:1 = 1024x1024), in Flux's multiples of 32.

const TARGET_PIXELS = 1024 * 1024;
const STEP = 32;
/** Flux accepts ratios between 1:4 and 4:1 (wider would leave a side under 256 px) */
const MAX_RATIO = 4;

/** undefined when the text is not `<w>:<h>` with positive integers in the accepted range. */
export function sizeForAspectRatio(aspectRatio: string): { width: number; height: number } | undefined {
  const match = /^(\d{1,4}):(\d{1,4})$/.exec(aspectRatio);
  if (!match) return undefined;
  const w = Number(match[1]);
  const h = Number(match[2]);
  if (w === 0 || h === 0 || w / h > MAX_RATIO || h / w > MAX_RATIO) return undefined;
  const round = (x: number) => Math.max(STEP, Math.round(x / STEP) * STEP);
  return { width: round(Math.sqrt((TARGET_PIXELS * w) / h)), height: round(Math.sqrt((TARGET_PIXELS * h) / w)) };
}
