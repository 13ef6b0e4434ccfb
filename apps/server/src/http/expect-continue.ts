import type { IncomingMessage, RequestListener, ServerResponse } from "node:http";

/**
 * The server's `checkContinue` listener. A client sending `Expect: 100-continue` waits for leave before it uploads
 * its body (curl does for large forms). Node would give it at once; here it is given when a handler starts reading
 * the body, so a request refused before that (a bad key, a limit, an unknown route) is answered without the upload
 * (a 25 MB audio file) ever being sent. Node then closes that connection: the body it never asked for may follow.
 */
export function continueOnRead(listener: RequestListener): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    req.once("resume", () => {
      if (!res.headersSent) res.writeContinue();
    });
    listener(req, res);
  };
}
