import type { RequestHandler } from "express";
import type { Config } from "@gw/config";

/** One year: browsers keep to https for the origin that long after any answer carrying it. */
const STRICT_TRANSPORT_SECURITY = "max-age=31536000";

/**
 * `Strict-Transport-Security` whenever the public origin is https: on every answer when PUBLIC_URL is https (TLS ends
 * at a proxy in front of the gateway), and otherwise on the answers to requests a trusted proxy says came over https
 * (`X-Forwarded-Proto: https` under TRUST_PROXY; Express's req.protocol). Browsers ignore it over plain http.
 */
export function strictTransportSecurity(config: Pick<Config, "publicUrl" | "trustProxy">): RequestHandler | undefined {
  if (new URL(config.publicUrl).protocol === "https:") {
    return (_req, res, next) => {
      res.setHeader("Strict-Transport-Security", STRICT_TRANSPORT_SECURITY);
      next();
    };
  }
  if (config.trustProxy === false) return undefined;
  return (req, res, next) => {
    if (req.protocol === "https") res.setHeader("Strict-Transport-Security", STRICT_TRANSPORT_SECURITY);
    next();
  };
}
