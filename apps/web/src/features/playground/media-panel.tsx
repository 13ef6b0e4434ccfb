import { useRef, useState, type FormEvent } from "react";
import { ErrorAlert, Spinner } from "../../components/ui";
import { formatMoney, formatNumber } from "../../lib/format";
import { apiRequest } from "../../lib/http";
import { chargedCost, estimateCost, runTask, type ImageResult, type ModelInfo, type SpeechResult } from "./api";

/**
 * The embedded bytes first: the gateway already fetched them, while an upstream delivery URL may expire, sit on a host
 * the browser cannot reach, or refuse hotlinking. The URL is the fallback when no data came back.
 */
function mediaSrc(mime: string, b64?: string, url?: string): string | undefined {
  if (b64) return `data:${mime};base64,${b64}`;
  return url || undefined;
}

export function ImagePanel({ model }: { model: ModelInfo }) {
  const [prompt, setPrompt] = useState("");
  const [size, setSize] = useState("1024");
  const [result, setResult] = useState<{ srcs: string[]; cost: number | null } | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const abort = useRef<AbortController | null>(null);

  async function submit(event: FormEvent) {
    event.preventDefault();
    setBusy(true);
    setError(null);
    // the previous answer goes: beside a failure it would read as this attempt's image and charge
    setResult(null);
    abort.current = new AbortController();
    try {
      const px = Number(size);
      let srcs: string[];
      let charged: number | null;
      if (model.id === "imageA") {
        // imageA is served by its dedicated endpoint (SPEC 4.2), not by the task endpoint.
        const res = await apiRequest<{ images: Array<{ url: string }> }>("/api/v1/imageA/generate", { method: "POST", body: { prompt: prompt.trim(), width: px, height: px }, signal: abort.current.signal });
        srcs = res.body.images.map((img) => img.url);
        charged = chargedCost(res.headers);
      } else {
        const res = await runTask<ImageResult>({ model: model.id, prompt: prompt.trim(), width: px, height: px }, abort.current.signal);
        srcs = res.body.data.flatMap((d) => mediaSrc("image/png", d.b64_json, d.url) ?? []);
        charged = res.cost;
      }
      // what was charged (X-Request-Cost); the listed price only when the answer states none
      setResult({ srcs, cost: charged ?? estimateCost(model.pricing, { images: srcs.length }) });
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  }

  return (
    <div>
      <form className="form" onSubmit={submit}>
        <label className="field">
          <span>Prompt</span>
          <textarea name="prompt" rows={3} required value={prompt} onChange={(e) => setPrompt(e.target.value)} placeholder="A lighthouse at dawn, watercolor" />
        </label>
        <label className="field">
          <span>Size</span>
          <select value={size} onChange={(e) => setSize(e.target.value)}>
            <option value="512">512 × 512</option>
            <option value="1024">1024 × 1024 (standard)</option>
          </select>
        </label>
        <button type="submit" className="btn btn-primary" disabled={busy || !prompt.trim()}>Generate image</button>
      </form>
      {busy ? <Spinner label="Generating…" /> : null}
      <ErrorAlert error={error} />
      {result ? (
        <div className="media-result">
          {result.srcs.map((src, i) => <img key={i} src={src} alt={`Generated image ${i + 1} for: ${prompt}`} />)}
          <p className="msg-meta">{result.srcs.length} image{result.srcs.length === 1 ? "" : "s"}{result.cost !== null ? ` · ${formatMoney(result.cost)}` : ""}</p>
        </div>
      ) : null}
    </div>
  );
}

export function SpeechPanel({ model }: { model: ModelInfo }) {
  const [text, setText] = useState("");
  const [voice, setVoice] = useState("Rachel");
  const [result, setResult] = useState<{ src: string | undefined; chars: number; cost: number | null } | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);

  async function submit(event: FormEvent) {
    event.preventDefault();
    setBusy(true);
    setError(null);
    setResult(null);
    try {
      const res = await runTask<SpeechResult>({ model: model.id, text: text.trim(), voice: voice.trim() }, new AbortController().signal);
      // characters as the gateway bills them: code points, so an emoji is one, not two UTF-16 units
      const chars = [...text.trim()].length;
      const cost = res.cost ?? estimateCost(model.pricing, { characters: chars });
      setResult({ src: mediaSrc("audio/mpeg", res.body.audio.b64_json, res.body.audio.url), chars, cost });
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  }

  if (model.id !== "speechvendor-tts") {
    return <p className="muted">This model takes an audio upload; call it through the API (<code>POST /api/v1/task</code>, multipart). Pick <code>speechvendor-tts</code> to try text-to-speech here.</p>;
  }
  return (
    <div>
      <form className="form" onSubmit={submit}>
        <label className="field">
          <span>Text</span>
          <textarea name="text" rows={3} required value={text} onChange={(e) => setText(e.target.value)} placeholder="Hello from the gateway!" />
        </label>
        <label className="field">
          <span>Voice</span>
          <input name="voice" value={voice} onChange={(e) => setVoice(e.target.value)} />
        </label>
        <button type="submit" className="btn btn-primary" disabled={busy || !text.trim() || !voice.trim()}>Generate speech</button>
      </form>
      {busy ? <Spinner label="Generating…" /> : null}
      <ErrorAlert error={error} />
      {result ? (
        <div className="media-result">
          {result.src ? <audio controls src={result.src} /> : null}
          <p className="msg-meta">{formatNumber(result.chars)} characters{result.cost !== null ? ` · ${formatMoney(result.cost)}` : ""}</p>
        </div>
      ) : null}
    </div>
  );
}
