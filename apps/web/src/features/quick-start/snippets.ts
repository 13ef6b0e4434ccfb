// The quick start's snippets: one chat completion against this gateway, with the official OpenAI clients or curl.

export type SnippetLanguage = "curl" | "python" | "node";

export const SNIPPET_LABELS: Record<SnippetLanguage, string> = { curl: "curl", python: "Python", node: "Node.js" };

export interface SnippetInput {
  /** the OpenAI-compatible base URL: this dashboard's origin + /v1 */
  baseUrl: string;
  /** the full secret right after creation; otherwise the key's prefix followed by "…" */
  apiKey: string;
  model: string;
}

/** The OpenAI-compatible base URL of the gateway serving this page. */
export function baseUrlFor(origin: string): string {
  return `${origin.replace(/\/+$/, "")}/v1`;
}

const PROMPT = "Say hello in five words.";

export function snippet(language: SnippetLanguage, { baseUrl, apiKey, model }: SnippetInput): string {
  switch (language) {
    case "curl":
      return [
        `curl ${baseUrl}/chat/completions \\`,
        `  -H "Authorization: Bearer ${apiKey}" \\`,
        `  -H "Content-Type: application/json" \\`,
        `  -d '${JSON.stringify({ model, messages: [{ role: "user", content: PROMPT }] })}'`,
      ].join("\n");
    case "python":
      return [
        "# pip install openai",
        "from openai import OpenAI",
        "",
        `client = OpenAI(base_url="${baseUrl}", api_key="${apiKey}")`,
        "response = client.chat.completions.create(",
        `    model="${model}",`,
        `    messages=[{"role": "user", "content": "${PROMPT}"}],`,
        ")",
        "print(response.choices[0].message.content)",
      ].join("\n");
    case "node":
      return [
        "// npm install openai",
        'import OpenAI from "openai";',
        "",
        `const client = new OpenAI({ baseURL: "${baseUrl}", apiKey: "${apiKey}" });`,
        "const response = await client.chat.completions.create({",
        `  model: "${model}",`,
        `  messages: [{ role: "user", content: "${PROMPT}" }],`,
        "});",
        "console.log(response.choices[0].message.content);",
      ].join("\n");
  }
}
