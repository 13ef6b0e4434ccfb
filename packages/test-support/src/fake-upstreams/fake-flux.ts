// A fake Flux (BFL) upstream: POST /v1/{model} submits a task, GET /v1/get_result?id= polls it.
import { randomUUID } from "node:crypto";
import { TINY_PNG } from "./deterministic";
import { FakeServer, sendBody, sendJson, type HandlerContext } from "./fake-server";

interface FluxTask {
  model: string;
  prompt: string;
  seed: number;
  width: number;
  height: number;
  polls: number;
}

/** BFL's bounds on width and height (its 422 validation errors, pydantic style). */
const MIN_SIDE = 256;
const MAX_SIDE = 1440;
const SIDE_STEP = 32;

function sideErrors(field: string, value: number): Array<{ loc: string[]; msg: string; type: string }> {
  const loc = ["body", field];
  if (value < MIN_SIDE) return [{ loc, msg: `Input should be greater than or equal to ${MIN_SIDE}`, type: "greater_than_equal" }];
  if (value > MAX_SIDE) return [{ loc, msg: `Input should be less than or equal to ${MAX_SIDE}`, type: "less_than_equal" }];
  if (value % SIDE_STEP !== 0) return [{ loc, msg: `Input should be a multiple of ${SIDE_STEP}`, type: "multiple_of" }];
  return [];
}

export class FakeFlux extends FakeServer {
  /** polls answered "Pending" before "Ready" (at least one, like the real service) */
  pollsBeforeReady = 1;
  /** the status a finished task reports: "Ready", or e.g. "Content Moderated", "Request Moderated", "Error" */
  finalStatus = "Ready";
  /** false: answers without polling_url (older deployments) */
  sendPollingUrl = true;
  readonly tasks = new Map<string, FluxTask>();

  constructor(readonly apiKey: string) {
    super();
  }

  protected override resetOptions(): void {
    this.pollsBeforeReady = 1;
    this.finalStatus = "Ready";
    this.sendPollingUrl = true;
    this.tasks.clear();
  }

  protected errorBody(_status: number, message: string): unknown {
    return { detail: message };
  }

  protected route(ctx: HandlerContext): boolean {
    // Like BFL's delivery URLs, samples are signed links that need no key.
    if (ctx.record.method === "GET" && ctx.url.pathname.startsWith("/samples/")) {
      sendBody(ctx, "image/png", TINY_PNG);
      return true;
    }
    if (ctx.req.headers["x-key"] !== this.apiKey) {
      sendJson(ctx.res, 403, { detail: "Not authenticated - Invalid Authentication" });
      return true;
    }
    if (ctx.record.method === "GET" && ctx.url.pathname === "/v1/get_result") return this.poll(ctx);
    const submit = /^\/v1\/([\w.-]+)$/.exec(ctx.url.pathname);
    if (ctx.record.method === "POST" && submit?.[1]) return this.submit(ctx, submit[1]);
    return false;
  }

  private submit(ctx: HandlerContext, model: string): boolean {
    const body = (ctx.record.json ?? {}) as Record<string, unknown>;
    if (typeof body.prompt !== "string" || body.prompt.length === 0) {
      sendJson(ctx.res, 422, { detail: [{ loc: ["body", "prompt"], msg: "Field required", type: "missing" }] });
      return true;
    }
    const width = typeof body.width === "number" ? body.width : 1024;
    const height = typeof body.height === "number" ? body.height : 768;
    const sizeErrors = [...sideErrors("width", width), ...sideErrors("height", height)];
    if (sizeErrors.length > 0) {
      sendJson(ctx.res, 422, { detail: sizeErrors });
      return true;
    }
    const id = randomUUID();
    const seed = typeof body.seed === "number" ? body.seed : 42;
    this.tasks.set(id, { model, prompt: body.prompt, seed, width, height, polls: 0 });
    const pollingUrl = `${this.url}/v1/get_result?id=${id}`;
    sendBody(ctx, "application/json", JSON.stringify(this.sendPollingUrl ? { id, polling_url: pollingUrl } : { id }));
    return true;
  }

  private poll(ctx: HandlerContext): boolean {
    const id = ctx.url.searchParams.get("id") ?? "";
    const task = this.tasks.get(id);
    if (!task) {
      sendJson(ctx.res, 200, { id, status: "Task not found" });
      return true;
    }
    task.polls++;
    if (task.polls <= this.pollsBeforeReady) {
      sendBody(ctx, "application/json", JSON.stringify({ id, status: "Pending", result: null, progress: task.polls / (this.pollsBeforeReady + 1) }));
      return true;
    }
    const result = this.finalStatus === "Ready"
      ? { sample: `${this.url}/samples/${id}.png`, prompt: task.prompt, seed: task.seed, start_time: 0, end_time: 1, duration: 1 }
      : null;
    sendBody(ctx, "application/json", JSON.stringify({ id, status: this.finalStatus, result }));
    return true;
  }
}
