import { ApiError, toApiError } from "./api-error";

export interface RequestOptions {
  method?: "GET" | "POST" | "PATCH" | "PUT" | "DELETE";
  body?: unknown;
  signal?: AbortSignal;
}

/** Same-origin JSON request with the session cookie; non-2xx answers become ApiError. */
export async function apiFetch<T>(path: string, options: RequestOptions = {}): Promise<T> {
  return (await apiRequest<T>(path, options)).body;
}

/** apiFetch with the answer's headers too (e.g. X-Request-Cost, what the request was charged). */
export async function apiRequest<T>(path: string, options: RequestOptions = {}): Promise<{ body: T; headers: Headers }> {
  const { method = "GET", body, signal } = options;
  let res: Response;
  try {
    res = await fetch(path, {
      method,
      credentials: "same-origin",
      headers: body === undefined ? { Accept: "application/json" } : { Accept: "application/json", "Content-Type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal,
    });
  } catch (err) {
    if (err instanceof DOMException && err.name === "AbortError") throw err;
    throw new ApiError("network_error", "Network error", 0);
  }
  const text = await res.text();
  let parsed: unknown = undefined;
  if (text) {
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = undefined;
    }
  }
  if (!res.ok) throw toApiError(res.status, parsed);
  return { body: parsed as T, headers: res.headers };
}
