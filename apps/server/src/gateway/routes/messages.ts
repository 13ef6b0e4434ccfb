import type { Request, RequestHandler, Response } from "express";
import { chatToMessage, countTokensApiBody, messagesApiBody, messagesErrorBody, messagesToChat, MessagesStreamEncoder } from "@gw/providers";
import { countPromptTokens } from "@gw/gateway";
import { newId } from "@gw/shared";
import type { GatewayDeps } from "../deps";
import { requireConfigured, resolveModel } from "../deps";
import { admitKeyForModel } from "../limits/key-gate";
import { setCostHeader } from "../http/answer-headers";
import { requestMeta } from "../handlers/request-meta";
import { streamChatAs } from "../handlers/stream";
import { runChat, type TextCall } from "../handlers/text";
import { parseOrThrow, requireObject } from "../http/validate";
import { modelField } from "./chat";

/**
 * First on the Messages routes: errors in Anthropic's envelope (CONTRACT 9), whichever step refuses the request, and
 * the key from `x-api-key` (Anthropic's header) when no `Authorization` is sent. `anthropic-version` is not read.
 */
export const messagesApi: RequestHandler = (req, res, next) => {
  res.locals.errorBody = messagesErrorBody;
  const key = req.headers["x-api-key"];
  if (req.headers.authorization === undefined && typeof key === "string") req.headers.authorization = `Bearer ${key}`;
  next();
};

/** POST /v1/messages: Anthropic's Messages API on every text model, streamed or not. */
export function messages(deps: GatewayDeps) {
  return async (req: Request, res: Response) => {
    const raw = requireObject(req.body);
    const model = resolveModel(deps, modelField(raw), ["text"]);
    await admitKeyForModel(deps, res, model.id);
    const body = parseOrThrow(messagesApiBody, raw);
    requireConfigured(deps, model);
    const meta = requestMeta(deps, req, res);
    const call: TextCall = { model, ...messagesToChat(body, model.protocol), maxTokensParam: "max_tokens" };
    const id = newId("msg");
    if (body.stream === true) {
      await streamChatAs(deps, meta, res, call, (promptTokens) => new MessagesStreamEncoder({ id, model: model.id, promptTokens }));
      return;
    }
    const { result, cost } = await runChat(deps, meta, call);
    setCostHeader(res, cost);
    res.json(chatToMessage(result, { id, model: model.id }));
  };
}

/** POST /v1/messages/count_tokens: the prompt's tokens as the gateway counts them for its hold; free, no upstream call. */
export function countTokens(deps: GatewayDeps) {
  return async (req: Request, res: Response) => {
    const raw = requireObject(req.body);
    const model = resolveModel(deps, modelField(raw), ["text"]);
    await admitKeyForModel(deps, res, model.id);
    const chat = messagesToChat(parseOrThrow(countTokensApiBody, raw), model.protocol);
    res.json({ input_tokens: countPromptTokens(deps, chat) });
  };
}
