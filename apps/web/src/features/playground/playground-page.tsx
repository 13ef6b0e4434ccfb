import { useState } from "react";
import { Card, EmptyState, ErrorAlert, PageTitle, Spinner } from "../../components/ui";
import { useModels } from "./api";
import { ChatPanel } from "./chat-panel";
import { ImagePanel, SpeechPanel } from "./media-panel";

export function PlaygroundPage() {
  const models = useModels();
  const usable = (models.data?.data ?? []).filter((m) => m.type !== "embedding");
  const [selected, setSelected] = useState<string>("");
  const model = usable.find((m) => m.id === selected) ?? usable.find((m) => m.type === "text") ?? usable[0];

  return (
    <>
      <PageTitle subtitle="Try any model with your account's credits; no API key needed here.">Playground</PageTitle>
      <Card>
        {models.isPending ? <Spinner label="Loading models…" /> : null}
        <ErrorAlert error={models.error} />
        {models.data && usable.length === 0 ? <EmptyState title="No models are available" /> : null}
        {model ? (
          <>
            <label className="field model-picker">
              <span>Model</span>
              <select name="model" value={model.id} onChange={(e) => setSelected(e.target.value)}>
                {(["text", "image", "speech"] as const).map((type) => (
                  <optgroup key={type} label={type === "text" ? "Chat" : type === "image" ? "Image" : "Speech"}>
                    {usable.filter((m) => m.type === type).map((m) => <option key={m.id} value={m.id}>{m.id}</option>)}
                  </optgroup>
                ))}
              </select>
            </label>
            {model.type === "text" ? <ChatPanel key={model.id} model={model} /> : null}
            {model.type === "image" ? <ImagePanel key={model.id} model={model} /> : null}
            {model.type === "speech" ? <SpeechPanel key={model.id} model={model} /> : null}
          </>
        ) : null}
      </Card>
    </>
  );
}
