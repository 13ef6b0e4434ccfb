import { IncomingMessage, ServerResponse, type RequestListener, type ServerOptions } from "node:http";
import type { ErrorRequestHandler, Express, NextFunction, Request, RequestHandler, Response } from "express";

type Method = "GET" | "POST";

export interface DirectRouteOptions {
  /** run first on every direct route, as `app.use` runs them on Express routes (request id, security headers) */
  before: RequestHandler[];
  /** when the last handler passes the request on */
  notFound: RequestHandler;
  onError: ErrorRequestHandler;
}

/**
 * Responses of direct routes send JSON as one string write: Express's `res.send` turns the body into a Buffer,
 * which makes Node write headers and body with `writev` (two buffers) instead of a single write.
 */
function leanJson(this: Response, body: unknown): Response {
  const text = JSON.stringify(body) ?? "";
  if (!this.hasHeader("content-type")) this.setHeader("Content-Type", "application/json; charset=utf-8");
  this.setHeader("Content-Length", Buffer.byteLength(text));
  if (this.req.method === "HEAD") this.end();
  else this.end(text);
  return this;
}

/**
 * The hot routes (task, image and `/v1` endpoints) without the Express router: one exact `METHOD /path` lookup,
 * then the route's own handlers in order, with Express's request/response API (the same prototypes Express
 * installs) and the app's error handler. Handlers are shared with the Express routes, which stay registered:
 * every other request, and any spelling of a path that only the router accepts (letter case, a trailing slash),
 * goes through Express unchanged. A query string does not matter to the lookup.
 *
 * Why: under load the router's layer walk, `parseurl` per layer and body-parser's stream plumbing were about a
 * tenth of the gateway's CPU per request (docs/performance.md).
 */
export class DirectRoutes {
  private readonly routes = new Map<string, RequestHandler[]>();

  add(method: Method, path: string, handlers: RequestHandler[]): void {
    this.routes.set(`${method} ${path}`, handlers);
  }

  has(method: string, path: string): boolean {
    return this.routes.has(`${method} ${path}`);
  }

  /**
   * What `http.createServer` needs: request/response classes whose prototypes already are Express's (so a
   * direct route need not swap prototypes per request, which costs V8 a map transition on two large objects),
   * and the listener: direct routes first, Express for everything else.
   */
  server(app: Express, opts: DirectRouteOptions): { options: ServerOptions; listener: RequestListener } {
    class DirectRequest extends IncomingMessage {}
    class DirectResponse extends ServerResponse {}
    Object.setPrototypeOf(DirectRequest.prototype, app.request);
    Object.setPrototypeOf(DirectResponse.prototype, Object.create(app.response as object, { json: { value: leanJson, writable: true, configurable: true } }) as object);
    const chains = new Map<string, RequestHandler[]>();
    for (const [route, handlers] of this.routes) chains.set(route, [...opts.before, ...handlers, opts.notFound]);

    const listener = (req: IncomingMessage, res: ServerResponse) => {
      const url = req.url ?? "";
      const query = url.indexOf("?");
      const chain = chains.get(`${req.method ?? ""} ${query === -1 ? url : url.slice(0, query)}`);
      if (!chain) {
        app(req, res);
        return;
      }
      const request = req as Request;
      const response = res as Response;
      request.res = response;
      response.req = request;
      response.locals = Object.create(null) as Response["locals"];
      run(chain, request, response, opts.onError);
    };
    return { options: { IncomingMessage: DirectRequest, ServerResponse: DirectResponse as typeof ServerResponse }, listener };
  }
}

/** Calls the handlers in order as Express would: `next()` moves on, `next(err)`, a throw or a rejection ends in `onError`. */
function run(chain: RequestHandler[], req: Request, res: Response, onError: ErrorRequestHandler): void {
  let index = 0;
  let failed = false;
  const fail = (err: unknown): void => {
    if (failed) return;
    failed = true;
    try {
      onError(err, req, res, () => undefined);
    } catch {
      if (!res.headersSent) res.statusCode = 500;
      res.end();
    }
  };
  const next: NextFunction = (err?: unknown) => {
    if (err !== undefined && err !== "route" && err !== "router") {
      fail(err);
      return;
    }
    const handler = chain[index++];
    if (!handler) return;
    try {
      const result = handler(req, res, next) as unknown;
      if (result instanceof Promise) result.then(undefined, fail);
    } catch (thrown) {
      fail(thrown);
    }
  };
  next();
}
