// A conversation's tool calls and their results must pair up: every call answered by a tool message before the next
// turn, every tool message answering a call made before it. Both upstream protocols refuse anything else (Messages
// with a 400 after the hold), so the translated APIs refuse it first, naming the field.
import { invalidParameter } from "@gw/shared";
import type { ChatMessage } from "../types";

/** Throws 400 invalid_parameter naming `param` (messages, input) for a call without its result or a result without its call. */
export function checkToolPairs(messages: readonly ChatMessage[], param: string): void {
  let open = new Set<string>();
  const called = new Set<string>();
  for (const m of messages) {
    if (m.role === "tool") {
      const id = m.toolCallId ?? "";
      if (!called.has(id)) throw invalidParameter(param, `the tool result for '${id}' answers no tool call made before it`);
      open.delete(id);
      continue;
    }
    if (open.size > 0) throw invalidParameter(param, `the tool call '${[...open][0] ?? ""}' has no tool result after it`);
    open = new Set((m.toolCalls ?? []).map((call) => call.id));
    for (const id of open) called.add(id);
  }
  if (open.size > 0) throw invalidParameter(param, `the tool call '${[...open][0] ?? ""}' has no tool result after it`);
}
