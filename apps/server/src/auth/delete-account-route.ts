import { Router } from "express";
import { z } from "zod";
import { appErrorFromZod } from "@gw/api";
import { AppError } from "@gw/shared";
import { objectBodyError, unsupportedBodyType } from "../api/object-body";
import { statusFormUnavailable } from "../api/rest-errors";
import type { AppContext } from "../context";
import type { MethodRules } from "../api/method-not-allowed";
import { jsonParser } from "../http/json-body";

const deleteAccountInput = z.object({
  // omitted for OAuth-only accounts, which have no password
  password: z.string().max(1024).optional(),
});

/**
 * DELETE /api/auth/me {password}: an Express route because the REST adapter reads DELETE input from the query
 * string, and a password does not belong in a URL.
 */
export function deleteAccountRoute(ctx: AppContext, methods: MethodRules): Router {
  const router = Router();
  router.delete("/api/auth/me", jsonParser(ctx.config.jsonBodyLimitBytes), async (req, res, next) => {
    try {
      const principal = await ctx.sessions.fromRequest(req);
      if (!principal) throw new AppError("unauthorized", "Authentication required: log in first.");
      // the body rules of the other REST routes: JSON only (415), an object, no NUL characters
      const bodyError = unsupportedBodyType(req) ?? objectBodyError(req.body);
      if (bodyError) throw bodyError;
      const body: unknown = req.body ?? {};
      const parsed = deleteAccountInput.safeParse(body);
      if (!parsed.success) throw appErrorFromZod(parsed.error, body);
      await ctx.auth.accounts.deleteAccount(principal.userId, parsed.data.password);
      res.append("Set-Cookie", ctx.auth.sessions.clearCookie());
      res.status(200).json({ success: true, message: "Your account has been deleted." });
    } catch (err) {
      next(err);
    }
  });
  // not Express's own 200 "DELETE" (which would also hide GET and PATCH): the JSON 405 the REST routes give
  router.options("/api/auth/me", methods.methodNotAllowed);
  router.use("/api/auth/me", statusFormUnavailable(ctx.config.errorDebug));
  return router;
}
