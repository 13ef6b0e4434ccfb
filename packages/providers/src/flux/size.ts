// aspect_ratio → pixel size for Flux (CONTRACT 5: about one megapixel, 1:1 = 1024x1024).

/** Flux (BFL) accepts sides of 256..1440 pixels in multiples of 32; anything else is refused with 422. */
export const FLUX_MIN_SIDE = 256;
export const FLUX_MAX_SIDE = 1440;
export const FLUX_SIDE_STEP = 32;
/** at most 1024x1024 in area, so an aspect ratio never moves a request to the high-resolution price */
const MAX_PIXELS = 1024 * 1024;
/** sizes at least this share of the largest candidate's area are considered... */
const AREA_FLOOR = 0.75;
/** ...and of those, the largest within 1% of the ratio is taken (else the one nearest the ratio) */
const RATIO_TOLERANCE = 0.01;
/** ratios between 1:4 and 4:1 (beyond, the short side would be a sliver) */
const MAX_RATIO = 4;

const roundToStep = (x: number) => Math.round(x / FLUX_SIDE_STEP) * FLUX_SIDE_STEP;
const clampSide = (x: number) => Math.min(FLUX_MAX_SIDE, Math.max(FLUX_MIN_SIDE, x));

/**
 * undefined when the text is not `<w>:<h>` with positive integers in the accepted range. Otherwise every long side
 * Flux accepts is paired with the short side nearest the ratio, keeping pairs of at most one megapixel; among those
 * of at least 3/4 of the largest one's area, the largest within 1% of the ratio wins, else the one nearest the ratio.
 * So 1:1 = 1024x1024, 16:9 = 1312x736, 4:1 = 1408x352 (one megapixel would need a 2048 px side).
 */
export function sizeForAspectRatio(aspectRatio: string): { width: number; height: number } | undefined {
  const match = /^(\d{1,4}):(\d{1,4})$/.exec(aspectRatio);
  if (!match) return undefined;
  const w = Number(match[1]);
  const h = Number(match[2]);
  if (w === 0 || h === 0 || w / h > MAX_RATIO || h / w > MAX_RATIO) return undefined;
  const ratio = Math.max(w, h) / Math.min(w, h);
  const candidates: Array<{ long: number; short: number; area: number; error: number }> = [];
  for (let long = FLUX_MIN_SIDE; long <= FLUX_MAX_SIDE; long += FLUX_SIDE_STEP) {
    const short = clampSide(roundToStep(long / ratio));
    if (long * short <= MAX_PIXELS) candidates.push({ long, short, area: long * short, error: Math.abs(Math.log(long / short / ratio)) });
  }
  const largest = Math.max(...candidates.map((c) => c.area));
  const pool = candidates.filter((c) => c.area >= largest * AREA_FLOOR);
  const close = pool.filter((c) => c.error <= RATIO_TOLERANCE);
  const best = close.length > 0
    ? close.reduce((a, b) => (b.area > a.area ? b : a))
    : pool.reduce((a, b) => (b.error < a.error || (b.error === a.error && b.area > a.area) ? b : a));
  return w >= h ? { width: best.long, height: best.short } : { width: best.short, height: best.long };
}
