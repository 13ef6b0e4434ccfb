import { useRef, useState, type FormEvent, type KeyboardEvent } from "react";
import { ErrorAlert } from "../../components/ui";
import { formatMoney, formatNumber } from "../../lib/format";
import { estimateCost, streamChat, type ChatMessage, type ModelInfo } from "./api";
import type { ChatUsage } from "./sse";

interface Turn extends ChatMessage {
  usage?: ChatUsage;
  cost?: number | null;
  streaming?: boolean;
}

export function ChatPanel({ model }: { model: ModelInfo }) {
  const [turns, setTurns] = useState<Turn[]>([]);
  const [input, setInput] = useState("");
  const [system, setSystem] = useState("");
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const abort = useRef<AbortController | null>(null);

  function patchLast(patch: (t: Turn) => Turn) {
    setTurns((all) => all.map((t, i) => (i === all.length - 1 ? patch(t) : t)));
  }

  async function send(event?: FormEvent) {
    event?.preventDefault();
    const text = input.trim();
    if (!text || busy) return;
    const history: ChatMessage[] = [
      ...(system.trim() ? [{ role: "system" as const, content: system.trim() }] : []),
      // an answer that came back empty says nothing, and Messages (the textB models) refuses an empty turn
      ...turns.filter((t) => t.role !== "assistant" || t.content !== "").map(({ role, content }) => ({ role, content })),
      { role: "user", content: text },
    ];
    setTurns((all) => [...all, { role: "user", content: text }, { role: "assistant", content: "", streaming: true }]);
    setInput("");
    setError(null);
    setBusy(true);
    const controller = new AbortController();
    abort.current = controller;
    let answered = false;
    try {
      for await (const ev of streamChat(model.id, history, controller.signal)) {
        answered ||= ev.kind !== "delta" || ev.content !== "";
        if (ev.kind === "delta") patchLast((t) => ({ ...t, content: t.content + ev.content }));
        if (ev.kind === "usage") {
          // what was charged, as the gateway states it; the listed prices only when it states none
          const cost = ev.usage.cost ?? estimateCost(model.pricing, { promptTokens: ev.usage.prompt_tokens, completionTokens: ev.usage.completion_tokens });
          patchLast((t) => ({ ...t, usage: ev.usage, cost }));
        }
      }
    } catch (err) {
      if (!(err instanceof DOMException && err.name === "AbortError")) setError(err);
    } finally {
      if (answered) {
        patchLast((t) => ({ ...t, streaming: false }));
      } else {
        // Nothing came back (an error, or Stop before the first word): the exchange is undone and the message goes
        // back to the composer, rather than an empty answer staying in the conversation.
        setTurns((all) => all.slice(0, -2));
        setInput((current) => current || text);
      }
      setBusy(false);
      abort.current = null;
    }
  }

  function onKeyDown(event: KeyboardEvent<HTMLTextAreaElement>) {
    // Enter that confirms an input method's composition (Japanese, Chinese, Korean) only ends the composition;
    // Safari reports it as keyCode 229 without isComposing.
    if (event.nativeEvent.isComposing || event.keyCode === 229) return;
    if (event.key === "Enter" && !event.shiftKey) {
      event.preventDefault();
      void send();
    }
  }

  return (
    <div className="chat">
      <details className="system-prompt">
        <summary>System prompt</summary>
        <label className="field">
          <span className="sr-only">System prompt</span>
          <textarea rows={2} value={system} onChange={(e) => setSystem(e.target.value)} placeholder="You are a helpful assistant." />
        </label>
      </details>
      <ol className="transcript" aria-live="polite" aria-label="Conversation">
        {turns.length === 0 ? <li className="muted empty-chat">Send a message to start. Answers stream in as they are generated.</li> : null}
        {turns.map((t, i) => (
          <li key={i} className={`msg msg-${t.role}`} data-role={t.role}>
            <span className="msg-role">{t.role === "user" ? "You" : model.id}</span>
            <div className="msg-body" data-testid={t.role === "assistant" ? "assistant-message" : undefined}>
              {t.content || (t.streaming ? "…" : "")}
            </div>
            {t.usage ? (
              <p className="msg-meta" data-testid="answer-usage">
                {formatNumber(t.usage.prompt_tokens)} prompt + {formatNumber(t.usage.completion_tokens)} completion tokens
                {t.cost !== undefined && t.cost !== null ? ` · ${formatMoney(t.cost)}` : ""}
              </p>
            ) : null}
          </li>
        ))}
      </ol>
      <ErrorAlert error={error} />
      <form className="composer" onSubmit={send}>
        <label className="field grow">
          <span className="sr-only">Message</span>
          <textarea name="message" rows={3} value={input} onChange={(e) => setInput(e.target.value)} onKeyDown={onKeyDown} placeholder="Ask anything… (Enter to send, Shift+Enter for a new line)" />
        </label>
        <div className="composer-actions">
          {busy ? (
            <button type="button" className="btn" onClick={() => abort.current?.abort()}>Stop</button>
          ) : (
            <button type="submit" className="btn btn-primary" disabled={!input.trim()}>Send</button>
          )}
          <button type="button" className="btn" disabled={busy || turns.length === 0} onClick={() => setTurns([])}>Clear</button>
        </div>
      </form>
    </div>
  );
}
