import { STATUS_CODES, type IncomingMessage, type RequestListener, type ServerResponse } from "node:http";
import type { Duplex } from "node:stream";
import { AppError, nestedErrorBody, newId } from "@gw/shared";

/** Node's HTTP parser errors, raised before any route runs, with the status Node itself would answer. */
function parserError(code: string | undefined): AppError {
  switch (code) {
    case "HPE_HEADER_OVERFLOW":
      return new AppError("headers_too_large", "The request headers are too large.");
    case "HPE_CHUNK_EXTENSIONS_OVERFLOW":
      return new AppError("payload_too_large", "The request's chunk extensions are too large.");
    case "ERR_HTTP_REQUEST_TIMEOUT":
      return new AppError("request_timeout", "The request was not received in time.");
    default:
      return new AppError("invalid_parameter", "Invalid parameter 'request': malformed HTTP (request line, headers, chunked encoding or a body shorter than its Content-Length).");
  }
}

/**
 * The server's `clientError` listener. Node answers a request it cannot parse (headers over 16 KB, a broken chunked
 * body, a body cut short) with an empty text response; clients of a JSON API get the spec's error shape there too
 * (CONTRACT 7b). Like Node, it answers only when nothing was written on the connection yet, then closes it.
 */
export function onClientError(err: Error & { code?: string }, socket: Duplex & { bytesWritten?: number }): void {
  if (err.code === "ECONNRESET" || !socket.writable || socket.bytesWritten !== 0) {
    socket.destroy();
    return;
  }
  const error = parserError(err.code);
  const body = JSON.stringify(nestedErrorBody(error));
  socket.end(`HTTP/1.1 ${error.status} ${STATUS_CODES[error.status] ?? ""}\r\nContent-Type: application/json; charset=utf-8\r\n`
    + `X-Request-Id: ${newId("req")}\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
}

/** A request refused before any route runs: the spec's error shape, then the connection closed. */
function refuse(res: ServerResponse, error: AppError): void {
  const body = JSON.stringify(nestedErrorBody(error));
  res.writeHead(error.status, { "Content-Type": "application/json; charset=utf-8", "Content-Length": Buffer.byteLength(body), "X-Request-Id": newId("req"), Connection: "close" });
  res.end(body);
}

/** The server's `checkExpectation` listener: an `Expect` other than 100-continue, refused in the spec's shape. */
export function onUnsupportedExpectation(req: IncomingMessage, res: ServerResponse): void {
  refuse(res, new AppError("expectation_failed", `Unsupported Expect header '${req.headers.expect ?? ""}': only 100-continue is supported.`));
}

/**
 * An HTTP/1.1 request without a `Host` header is a 400 (RFC 9112 3.2). Node's own check answers it with an empty
 * body, so the server turns that check off (`requireHostHeader: false`) and this wrapper of its listener answers
 * in the spec's shape instead.
 */
export function requireHost(listener: RequestListener): RequestListener {
  return (req, res) => {
    if (req.headers.host === undefined && req.httpVersionMajor === 1 && req.httpVersionMinor === 1) {
      refuse(res, new AppError("invalid_parameter", "Invalid parameter 'Host': an HTTP/1.1 request must carry a Host header."));
      return;
    }
    listener(req, res);
  };
}
