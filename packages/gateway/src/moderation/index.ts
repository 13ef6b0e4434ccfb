import type { Logger } from "pino";
import { checkLocalPolicy, policyViolation } from "./policy";
import { checkUpstreamModeration, type UpstreamModerationConfig } from "./upstream";

export { checkLocalPolicy } from "./policy";
export type { ModerationCategory } from "./terms";

/** An image request's texts. */
export interface ImagePromptTexts {
  prompt: string;
  negativePrompt?: string | null;
  style?: string | null;
}

/**
 * What reaches the image upstream and so what is moderated: the prompt and the style (both adapters fold the style
 * into the prompt). The negative prompt is left out: it lists what the image must not show, and no adapter sends it
 * upstream, so refusing it would only block harmless requests.
 */
export function textsToModerate({ prompt, style }: ImagePromptTexts): string[] {
  return [prompt, style].filter((t): t is string => Boolean(t));
}

/** Every image prompt passes here before any hold or upstream call; a violation throws 400 content_policy_violation. */
export async function moderateImagePrompt(
  texts: ImagePromptTexts,
  opts: { upstream?: UpstreamModerationConfig; logger: Logger },
): Promise<void> {
  const checked = textsToModerate(texts);
  // Each text alone, and the prompt with the style folded in as the adapters send it: context rules read the
  // two together ("a sexy woman" with the style "lingerie", "Elsa" with "frozen", "marvel" with its "style").
  const local = checkLocalPolicy(...checked, texts.style ? `${texts.prompt}, ${texts.style} style` : undefined);
  if (local.flagged && local.category) {
    opts.logger.info({ category: local.category, match: local.match }, "image prompt rejected by local policy");
    throw policyViolation(local.category);
  }
  if (!opts.upstream) return;
  const remote = await checkUpstreamModeration(opts.upstream, checked.join("\n"), opts.logger);
  if (remote.flagged && remote.category) throw policyViolation(remote.category);
}
