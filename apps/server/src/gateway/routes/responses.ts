import type { Request, Response } from "express";
import { chatToOutcome, responseObject, responsesApiBody, responsesToChat, ResponsesStreamEncoder, type ResponseOutcome } from "@gw/providers";
import { newId } from "@gw/shared";
import type { GatewayDeps } from "../deps";
import { requireConfigured, resolveModel } from "../deps";
import { admitKeyForModel } from "../limits/key-gate";
import { setCostHeader } from "../http/answer-headers";
import { requestMeta } from "../handlers/request-meta";
import { streamChatAs } from "../handlers/stream";
import { runChat, type TextCall } from "../handlers/text";
import { principalOf } from "../http/auth";
import { parseOrThrow, requireObject } from "../http/validate";
import type { ResponseStore } from "@gw/gateway";
import { modelField } from "./chat";
import { unixSeconds } from "./shapes";

/**
 * POST /v1/responses: OpenAI's Responses API on every text model, as one chat call (CONTRACT 9). A stored response
 * (`store`, default true) keeps its conversation, which a later request continues with `previous_response_id`.
 */
export function createResponse(deps: GatewayDeps, store: ResponseStore) {
  return async (req: Request, res: Response) => {
    const raw = requireObject(req.body);
    const model = resolveModel(deps, modelField(raw), ["text"]);
    await admitKeyForModel(deps, res, model.id);
    const body = parseOrThrow(responsesApiBody, raw);
    requireConfigured(deps, model);
    const meta = requestMeta(deps, req, res);
    const previous = body.previous_response_id != null ? await store.conversation(meta.userId, body.previous_response_id) : [];
    const chat = responsesToChat(body, previous);
    const call: TextCall = { model, ...chat, maxTokensParam: "max_output_tokens", promptParam: "input" };
    const id = newId("resp");
    const stored = body.store !== false;
    const createdAt = unixSeconds(deps.ctx.clock.now());
    const respond = (outcome?: ResponseOutcome) => responseObject(body, { id, createdAt, model: model.id, store: stored }, outcome);
    // the conversation so far, without the instructions (a later request gives its own), then this answer
    const conversation = body.instructions ? chat.messages.slice(1) : chat.messages;
    const save = async (outcome: ResponseOutcome): Promise<void> => {
      if (!stored) return;
      // the answer was produced and is charged: a failed save loses the stored copy, not the answer
      await store.save(meta.userId, id, respond(outcome), [...conversation, outcome.assistant]).catch((err: unknown) => {
        deps.ctx.logger.warn({ err: (err as Error).message, requestId: meta.requestId }, "storing a response failed");
      });
    };
    if (body.stream === true) {
      await streamChatAs(deps, meta, res, call, () => new ResponsesStreamEncoder(respond, save));
      return;
    }
    const { result, cost } = await runChat(deps, meta, call);
    const outcome = chatToOutcome(result);
    await save(outcome);
    setCostHeader(res, cost);
    res.json(respond(outcome));
  };
}

const responseId = (req: Request): string => String(req.params.id ?? "");

/** GET /v1/responses/{id}: a stored response of the caller's account. */
export function getResponse(store: ResponseStore) {
  return async (req: Request, res: Response) => {
    res.json(await store.response(principalOf(res).userId, responseId(req)));
  };
}

/** DELETE /v1/responses/{id} */
export function deleteResponse(store: ResponseStore) {
  return async (req: Request, res: Response) => {
    const id = responseId(req);
    await store.delete(principalOf(res).userId, id);
    res.json({ id, object: "response", deleted: true });
  };
}
