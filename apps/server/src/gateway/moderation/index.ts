import type { Logger } from "pino";
import { checkLocalPolicy, policyViolation } from "./policy";
import { checkUpstreamModeration, type UpstreamModerationConfig } from "./upstream";

export { checkLocalPolicy } from "./policy";
export type { ModerationCategory } from "./terms";

/** Every image prompt passes here before any hold or upstream call; a violation throws 400 content_policy_violation. */
export async function moderateImagePrompt(
  texts: Array<string | undefined | null>,
  opts: { upstream?: UpstreamModerationConfig; logger: Logger },
): Promise<void> {
  const local = checkLocalPolicy(...texts);
  if (local.flagged && local.category) {
    opts.logger.info({ category: local.category, match: local.match }, "image prompt rejected by local policy");
    throw policyViolation(local.category);
  }
  if (!opts.upstream) return;
  const remote = await checkUpstreamModeration(opts.upstream, texts.filter(Boolean).join("\n"), opts.logger);
  if (remote.flagged && remote.category) throw policyViolation(remote.category);
}
